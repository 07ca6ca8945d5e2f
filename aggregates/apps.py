from django.apps import AppConfig


class AggregatesConfig(AppConfig):
    name = "aggregates"
    verbose_name = "Compute: aggregates, zones, hosts and flavors"

    def ready(self) -> None:
        from aggregates.metrics import signals
        from aggregates.precache import pins

        signals.connect()
        pins.connect()
