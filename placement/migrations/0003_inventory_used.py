from django.db import migrations, models
from django.db.models import OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce


def count_usage(apps, schema_editor):
    """Each inventory's ``used``: the sum of its provider's allocations of its class."""
    Inventory = apps.get_model("placement", "Inventory")
    Allocation = apps.get_model("placement", "Allocation")
    sums = (
        Allocation.objects.filter(
            resource_provider=OuterRef("resource_provider"), resource_class=OuterRef("resource_class")
        )
        .order_by()
        .values("resource_provider")
        .annotate(total=Sum("used"))
        .values("total")
    )
    Inventory.objects.update(used=Coalesce(Subquery(sums), 0))


class Migration(migrations.Migration):
    dependencies = [("placement", "0002_standard_names")]

    operations = [
        migrations.AddField(model_name="inventory", name="used", field=models.BigIntegerField(default=0)),
        migrations.RunPython(count_usage, migrations.RunPython.noop),
    ]
