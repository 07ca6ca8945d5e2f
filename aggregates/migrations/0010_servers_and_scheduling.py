# Servers and stored scheduling decisions (aggregates.servers, aggregates.scheduling).

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0009_login_throttle"),
    ]

    operations = [
        migrations.CreateModel(
            name="SchedulingDecision",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("uuid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("chosen", "chosen"),
                            ("no_valid_host", "no valid host"),
                            ("explained", "explained only"),
                        ],
                        max_length=20,
                    ),
                ),
                ("project_id", models.CharField(blank=True, default="", max_length=255)),
                ("request", models.JSONField(default=dict)),
                ("explanation", models.JSONField(default=dict)),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="Server",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("uuid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("name", models.CharField(db_index=True, max_length=255)),
                ("project_id", models.CharField(db_index=True, max_length=255)),
                ("user_id", models.CharField(blank=True, default="", max_length=255)),
                ("flavorid", models.CharField(max_length=255)),
                ("flavor", models.JSONField(default=dict)),
                ("image_id", models.CharField(blank=True, default="", max_length=36)),
                ("availability_zone", models.CharField(blank=True, default="", max_length=255)),
                ("pinned_availability_zone", models.CharField(blank=True, max_length=255, null=True)),
                ("host", models.CharField(blank=True, db_index=True, max_length=255, null=True)),
                ("node", models.CharField(blank=True, max_length=255, null=True)),
                ("node_uuid", models.CharField(blank=True, max_length=36, null=True)),
                (
                    "vm_state",
                    models.CharField(
                        choices=[
                            ("building", "building"),
                            ("active", "active"),
                            ("error", "error"),
                            ("deleted", "deleted"),
                        ],
                        db_index=True,
                        default="building",
                        max_length=20,
                    ),
                ),
                ("task_state", models.CharField(blank=True, max_length=30, null=True)),
                ("power_state", models.IntegerField(default=0)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("scheduler_hints", models.JSONField(blank=True, default=dict)),
                ("build_request", models.JSONField(blank=True, default=dict)),
                ("reservation_id", models.CharField(blank=True, default="", max_length=40)),
                ("launch_index", models.IntegerField(default=0)),
                ("fault", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("launched_at", models.DateTimeField(blank=True, null=True)),
                ("terminated_at", models.DateTimeField(blank=True, null=True)),
                ("deleted_at", models.DateTimeField(blank=True, db_index=True, null=True)),
                (
                    "decision",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="servers",
                        to="aggregates.schedulingdecision",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["host", "vm_state"], name="server_host_state")],
            },
        ),
    ]
