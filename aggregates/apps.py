from django.apps import AppConfig


class AggregatesConfig(AppConfig):
    name = "aggregates"
    verbose_name = "Compute: aggregates, zones, hosts and flavors"
