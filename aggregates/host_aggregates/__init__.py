"""Host aggregates and their metadata: rules, services and the os-aggregates API."""
