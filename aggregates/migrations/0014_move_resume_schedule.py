"""The default schedule of corral.moves.resume (every minute): moves a dead
worker left accepted or running are finished from where placement holds
the server."""

from django.db import migrations

NAME = "Resume server moves"


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    interval, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    PeriodicTask.objects.get_or_create(
        name=NAME,
        defaults={
            "task": "corral.moves.resume",
            "interval": interval,
            "description": "Finish the server moves whose worker stopped, from where placement holds each server.",
            "enabled": True,
        },
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0013_maintenance"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
