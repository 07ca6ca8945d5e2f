"""Resizes are migrations of their own type ("resize", as Nova names it), and
the default schedule of corral.servers.reclaim_deleted (deletes the servers
soft-deleted longer than RECLAIM_INSTANCE_INTERVAL when that is set)."""

from django.db import migrations, models

SCHEDULE = (
    "Reclaim soft-deleted servers",
    "corral.servers.reclaim_deleted",
    1,
    "Delete the servers soft-deleted longer than RECLAIM_INSTANCE_INTERVAL (when set).",
)


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    name, task, minutes, description = SCHEDULE
    interval, _ = IntervalSchedule.objects.get_or_create(every=minutes, period="minutes")
    PeriodicTask.objects.get_or_create(
        name=name, defaults={"task": task, "interval": interval, "description": description, "enabled": True}
    )


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=SCHEDULE[0]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0021_pinned_images"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.AlterField(
            model_name="servermigration",
            name="migration_type",
            field=models.CharField(
                choices=[
                    ("live-migration", "live migration"),
                    ("migration", "cold migration"),
                    ("evacuation", "evacuation"),
                    ("resize", "resize"),
                ],
                db_index=True,
                max_length=20,
            ),
        ),
        migrations.RunPython(create_schedule, delete_schedule),
    ]
