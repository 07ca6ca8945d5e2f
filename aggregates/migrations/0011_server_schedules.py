"""The default schedules of the servers' catch-up tasks, editable by an
operator afterwards (django-celery-beat): every minute, build again the
servers a dead worker left in BUILD, and finish the deletes whose release of
placement allocations failed."""

from django.db import migrations

SCHEDULES = [
    (
        "Resume server builds",
        "corral.servers.resume_builds",
        1,
        "Schedule and claim again the servers left in BUILD by a worker that died.",
    ),
    (
        "Finish server deletes",
        "corral.servers.finish_deletes",
        1,
        "Release the placement allocations of servers left deleting, then mark them deleted.",
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
        ("aggregates", "0010_servers_and_scheduling"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedules, delete_schedules)]
