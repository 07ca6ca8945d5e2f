"""The framework of the compute API v2.1: auth, microversions, faults,
validation, version documents and the routes table."""
