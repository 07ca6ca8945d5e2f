from django.apps import AppConfig


class AggregatesConfig(AppConfig):
    name = "aggregates"
    verbose_name = "Compute: aggregates, zones, hosts and flavors"

    def ready(self) -> None:
        from aggregates.metrics import signals
        from aggregates.precache import pins
        from aggregates.quotas import services as quotas
        from aggregates.server_groups import services as server_groups

        signals.connect()
        pins.connect()
        quotas.register_counter("server_groups", server_groups.count_groups)
