"""Prometheus metrics: what processes count (``instruments``), what the
database holds, read at scrape time (``collector``), and ``GET /metrics``."""
