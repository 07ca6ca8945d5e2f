"""The Celery application. Every module that defines tasks is listed in
TASK_MODULES, so that a worker registers them all at start."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

TASK_MODULES = (
    "aggregates.mirroring.tasks",
    "aggregates.precache.tasks",
    "aggregates.servers.tasks",
    "aggregates.moves.tasks",
    "aggregates.maintenance.tasks",
)

app = Celery("corral")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = TASK_MODULES
