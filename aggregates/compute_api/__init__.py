"""The framework of the compute API v2.1: auth, microversions, faults,
validation and version documents. The routes table is the URLconf's
(config/compute_urls.py): the domains' views import this framework, so
the framework imports none of them."""
