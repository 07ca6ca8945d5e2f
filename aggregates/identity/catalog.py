"""Corral's services and endpoints in an external Keystone's catalog
(``manage.py register_keystone_catalog``): compute, placement and image,
each with its public, internal and admin endpoints in one region. Idempotent:
what is there already and right is left alone, a URL that changed is
updated, what is missing is created."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from keystoneauth1 import session as ks_session

# service type -> (the name upstream registers it under, its path under Corral's root URL)
SERVICES = {
    "compute": ("nova", "/compute/v2.1"),
    "placement": ("placement", "/placement"),
    "image": ("glance", "/image"),
}
INTERFACES = ("public", "internal", "admin")


def register(session: ks_session.Session, base_urls: dict[str, str], region: str, say: Callable[[str], None]) -> None:
    """Register every service with ``base_urls`` (interface -> Corral's root URL) in ``region``."""
    identity = f"{settings.KEYSTONE_AUTH_URL.rstrip('/')}/v3"

    def call(method: str, path: str, body: dict[str, Any] | None = None, ok: tuple[int, ...] = (200,)) -> Any:
        response = session.request(f"{identity}{path}", method, json=body, raise_exc=False)
        if response.status_code not in ok:
            raise RuntimeError(f"Keystone answered {method} {path} with {response.status_code}: {response.text[:300]}")
        return response.json() if response.content else None

    existing = call("GET", f"/regions/{region}", ok=(200, 404))
    if not existing or "region" not in existing:
        call("POST", "/regions", {"region": {"id": region}}, ok=(201,))
        say(f"created region {region}")
    for service_type, (name, path) in SERVICES.items():
        found = call("GET", f"/services?type={service_type}")["services"]
        if found:
            service_id = found[0]["id"]
        else:
            body = {"service": {"type": service_type, "name": name, "description": f"Corral's {service_type} API"}}
            service_id = call("POST", "/services", body, ok=(201,))["service"]["id"]
            say(f"created service {service_type} ({name})")
        for interface in INTERFACES:
            url = base_urls[interface].rstrip("/") + path
            query = f"/endpoints?service_id={service_id}&interface={interface}&region_id={region}"
            endpoints = call("GET", query)["endpoints"]
            if not endpoints:
                endpoint = {"service_id": service_id, "interface": interface, "region_id": region, "url": url}
                call("POST", "/endpoints", {"endpoint": endpoint}, ok=(201,))
                say(f"created {interface} endpoint of {service_type}: {url}")
            elif endpoints[0]["url"] != url:
                call("PATCH", f"/endpoints/{endpoints[0]['id']}", {"endpoint": {"url": url}})
                say(f"updated {interface} endpoint of {service_type}: {url}")
            else:
                say(f"{interface} endpoint of {service_type} already registered: {url}")
