"""Migration records of server moves (aggregates.moves), and the default
schedule of corral.moves.confirm_resizes (confirms cold migrations older than
RESIZE_CONFIRM_WINDOW when that is set; releases the source held for servers
deleted while resized)."""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

SCHEDULE = (
    "Confirm resized servers",
    "corral.moves.confirm_resizes",
    1,
    "Confirm the cold migrations older than RESIZE_CONFIRM_WINDOW (when set) and release what deleted servers held.",
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
        ("aggregates", "0011_server_schedules"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.CreateModel(
            name="ServerMigration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("uuid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                (
                    "migration_type",
                    models.CharField(
                        choices=[
                            ("live-migration", "live migration"),
                            ("migration", "cold migration"),
                            ("evacuation", "evacuation"),
                        ],
                        db_index=True,
                        max_length=20,
                    ),
                ),
                ("status", models.CharField(db_index=True, max_length=20)),
                ("source_compute", models.CharField(blank=True, db_index=True, max_length=255, null=True)),
                ("source_node", models.CharField(blank=True, max_length=255, null=True)),
                ("dest_compute", models.CharField(blank=True, db_index=True, max_length=255, null=True)),
                ("dest_node", models.CharField(blank=True, max_length=255, null=True)),
                ("dest_host", models.CharField(blank=True, max_length=255, null=True)),
                ("old_instance_type_id", models.IntegerField(blank=True, null=True)),
                ("new_instance_type_id", models.IntegerField(blank=True, null=True)),
                ("project_id", models.CharField(blank=True, default="", max_length=255)),
                ("user_id", models.CharField(blank=True, default="", max_length=255)),
                ("request", models.JSONField(blank=True, default=dict)),
                ("message", models.TextField(blank=True, default="")),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                (
                    "decision",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="migrations",
                        to="aggregates.schedulingdecision",
                    ),
                ),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="migrations", to="aggregates.server"
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["server", "status"], name="migration_server_status")],
            },
        ),
        migrations.RunPython(create_schedule, delete_schedule),
    ]
