"""Image pre-caching on an aggregate (``POST /os-aggregates/{id}/images``, 2.81+):
the request, the job row that survives a worker restart, the fan-out to the
member hosts through a cache driver, and the recurring schedules."""
