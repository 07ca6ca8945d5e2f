"""Whether this process can serve (``GET /healthcheck``, oslo.middleware's
convention) and whether workers and beat are alive (``manage.py liveness``)."""
