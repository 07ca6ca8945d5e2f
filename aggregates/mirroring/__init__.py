"""Mirroring Corral's hosts and aggregates into placement: outbox, apply, drift,
reconciliation, resource tracker, the placement client and the Celery tasks."""
