"""Maintenance jobs and their per-server items (aggregates.maintenance), and
the default schedule of corral.maintenance.drain (every minute: resume the
jobs whose worker died, start the queued ones nobody started)."""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

SCHEDULE = (
    "Resume maintenance jobs",
    "corral.maintenance.drain",
    1,
    "Resume the host maintenance jobs whose worker died and start the queued ones nobody started.",
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
        ("aggregates", "0012_server_migrations"),
    ]

    operations = [
        migrations.CreateModel(
            name="MaintenanceJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("uuid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("host", models.CharField(db_index=True, max_length=255)),
                ("action", models.CharField(choices=[("start", "start"), ("stop", "stop")], max_length=8)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "queued"),
                            ("running", "running"),
                            ("completed", "completed"),
                            ("completed_with_errors", "completed with errors"),
                            ("failed", "failed"),
                        ],
                        db_index=True,
                        default="queued",
                        max_length=32,
                    ),
                ),
                ("reason", models.CharField(blank=True, default="", max_length=255)),
                (
                    "strategy",
                    models.CharField(choices=[("live", "live"), ("cold", "cold")], default="live", max_length=8),
                ),
                ("prefer_aggregate_peers", models.BooleanField(default=True)),
                ("rebalance", models.BooleanField(default=False)),
                ("error", models.TextField(blank=True, default="")),
                ("requested_by", models.CharField(blank=True, default="", max_length=255)),
                ("request_id", models.CharField(blank=True, default="", max_length=255)),
                ("total", models.IntegerField(default=0)),
                ("done", models.IntegerField(default=0)),
                ("attempts", models.IntegerField(default=0)),
                ("lease_expires_at", models.DateTimeField(blank=True, db_index=True, null=True)),
                ("worker", models.CharField(blank=True, default="", max_length=255)),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="MaintenanceItem",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("server_uuid", models.UUIDField(db_index=True)),
                ("name", models.CharField(blank=True, default="", max_length=255)),
                ("source", models.CharField(max_length=255)),
                ("target", models.CharField(blank=True, max_length=255, null=True)),
                ("requested_host", models.CharField(blank=True, max_length=255, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("moving", "moving"),
                            ("moved", "moved"),
                            ("failed", "failed"),
                            ("skipped", "skipped"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("migration_uuid", models.CharField(blank=True, default="", max_length=36)),
                ("decision_uuid", models.CharField(blank=True, default="", max_length=36)),
                ("message", models.TextField(blank=True, default="")),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "job",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="items",
                        to="aggregates.maintenancejob",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "constraints": [
                    models.UniqueConstraint(fields=("job", "server_uuid"), name="uniq_maintenance_job_server")
                ],
            },
        ),
        migrations.RunPython(create_schedule, delete_schedule),
    ]
