"""The compute API views of the host domain: os-services, os-hypervisors, os-host-registrations
(their request schemas in aggregates.hosts.schemas, their bodies in aggregates.hosts.serializers)."""
