# Where a host's agent answers Corral (image pre-caching), as it registered it.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("aggregates", "0007_image_cache_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="computenode",
            name="agent_url",
            field=models.CharField(blank=True, default="", max_length=255),
        ),
    ]
