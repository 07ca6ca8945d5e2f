from django.db import migrations


def load_standard_names(apps, schema_editor):
    from placement.standards import sync_standard_names

    sync_standard_names(apps.get_model("placement", "ResourceClass"), apps.get_model("placement", "Trait"))


class Migration(migrations.Migration):
    dependencies = [("placement", "0001_initial")]

    operations = [migrations.RunPython(load_standard_names, migrations.RunPython.noop)]
