"""``GET /metrics``: Prometheus' text format. Off (404) unless
METRICS_ENABLED; then answered to METRICS_ALLOWED_NETWORKS and to an admin
token from anywhere, 403 to anyone else."""

import ipaddress
import logging
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

from aggregates.compute_api.auth import admin_caller
from aggregates.metrics import instruments
from aggregates.metrics.collector import DatabaseCollector

log = logging.getLogger(__name__)

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@cache
def _networks(cidrs: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def from_allowed_network(request: HttpRequest) -> bool:
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in _networks(tuple(settings.METRICS_ALLOWED_NETWORKS)))


def _database_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector())
    return registry


def exposition() -> bytes:
    """What every process counted (summed over the multiprocess directory
    when there is one), then the database's gauges."""
    if settings.PROMETHEUS_MULTIPROC_DIR:
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=settings.PROMETHEUS_MULTIPROC_DIR)
    else:
        counted = instruments.REGISTRY
    return generate_latest(counted) + generate_latest(_database_registry())


def _text(status: int, text: str) -> HttpResponse:
    return HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")


@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    if not settings.METRICS_ENABLED:
        return _text(404, "Not Found")
    if not from_allowed_network(request) and admin_caller(request) is None:
        return _text(403, "Forbidden")
    # The classic text format (0.0.4), which every Prometheus reads.
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
