"""The default schedules of the placement mirroring tasks, editable by an
operator afterwards (django-celery-beat): reconcile every 10 minutes, drain
the outbox every minute."""

from django.db import migrations

SCHEDULES = [
    (
        "Reconcile placement aggregates",
        "aggregates.tasks.reconcile_placement_aggregates",
        10,
        "Make placement's aggregate associations match Corral's host aggregates.",
    ),
    (
        "Drain placement mirror requests",
        "aggregates.tasks.drain_mirror_requests",
        1,
        "Apply the pending placement mirror requests that no task carried (broker down, retries due).",
    ),
]


def create_schedules(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, minutes, description in SCHEDULES:
        interval, _ = IntervalSchedule.objects.get_or_create(every=minutes, period="minutes")
        PeriodicTask.objects.get_or_create(
            name=name, defaults={"task": task, "interval": interval, "description": description, "enabled": True}
        )


def delete_schedules(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[name for name, *_ in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0002_placement_mirroring"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedules, delete_schedules)]
