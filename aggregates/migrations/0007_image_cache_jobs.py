# Image pre-caching jobs (aggregates.precache) and the drain's beat schedule.

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

DRAIN = "Drain image cache jobs"
DRAIN_TASK = "corral.precache.drain_jobs"


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    interval, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    PeriodicTask.objects.get_or_create(
        name=DRAIN,
        defaults={
            "task": DRAIN_TASK,
            "interval": interval,
            "description": "Resume image cache jobs whose worker stopped; start queued jobs nobody started.",
            "enabled": True,
        },
    )


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=DRAIN).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0006_images"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.CreateModel(
            name="ImageCacheJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("uuid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("aggregate_id", models.IntegerField(db_index=True)),
                ("aggregate_uuid", models.UUIDField()),
                ("aggregate_name", models.CharField(max_length=255)),
                ("image_ids", models.JSONField(default=list)),
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
                ("error", models.TextField(blank=True, default="")),
                ("requested_by", models.CharField(blank=True, default="", max_length=255)),
                ("project_id", models.CharField(blank=True, default="", max_length=255)),
                ("request_id", models.CharField(blank=True, default="", max_length=255)),
                ("schedule_name", models.CharField(blank=True, default="", max_length=200)),
                ("total", models.IntegerField(default=0)),
                ("done", models.IntegerField(default=0)),
                ("attempts", models.IntegerField(default=0)),
                ("lease_expires_at", models.DateTimeField(blank=True, db_index=True, null=True)),
                ("worker", models.CharField(blank=True, default="", max_length=255)),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={"ordering": ["-created_at", "-id"]},
        ),
        migrations.CreateModel(
            name="ImageCacheHost",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("host", models.CharField(max_length=255)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("caching", "caching"),
                            ("completed", "completed"),
                            ("skipped", "skipped"),
                            ("error", "error"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("reason", models.TextField(blank=True, default="")),
                ("finished_index", models.IntegerField(blank=True, null=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "job",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="host_items",
                        to="aggregates.imagecachejob",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "constraints": [models.UniqueConstraint(fields=("job", "host"), name="uniq_image_cache_job_host")],
            },
        ),
        migrations.CreateModel(
            name="ImageCacheResult",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("image_id", models.UUIDField(db_index=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("caching", "caching"),
                            ("cached", "cached"),
                            ("existing", "existing"),
                            ("skipped", "skipped"),
                            ("error", "error"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("error", models.TextField(blank=True, default="")),
                ("bytes", models.BigIntegerField(blank=True, null=True)),
                ("seconds", models.FloatField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "host_item",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="image_items",
                        to="aggregates.imagecachehost",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "constraints": [
                    models.UniqueConstraint(fields=("host_item", "image_id"), name="uniq_image_cache_host_image")
                ],
            },
        ),
        migrations.RunPython(create_schedule, delete_schedule),
    ]
