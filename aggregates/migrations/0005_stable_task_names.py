"""The beat schedules of the mirroring name their tasks by the tasks'
stable names (``corral.mirroring.*``), no longer by module paths."""

from django.db import migrations

RENAMED = {
    "aggregates.tasks.reconcile_placement_aggregates": "corral.mirroring.reconcile_placement_aggregates",
    "aggregates.tasks.drain_mirror_requests": "corral.mirroring.drain_mirror_requests",
    "aggregates.tasks.apply_mirror_request": "corral.mirroring.apply_mirror_request",
    "aggregates.tasks.apply_provider_request": "corral.mirroring.apply_provider_request",
}


def rename(apps, schema_editor, mapping):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for old, new in mapping.items():
        PeriodicTask.objects.filter(task=old).update(task=new)


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0004_resource_providers"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.RunPython(
            lambda apps, editor: rename(apps, editor, RENAMED),
            lambda apps, editor: rename(apps, editor, {new: old for old, new in RENAMED.items()}),
        )
    ]
