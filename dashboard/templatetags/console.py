"""Template helpers: sortable column headers, status badges and usage bars."""

from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from aggregates.hosts.models import Service
from aggregates.identity import keystone

register = template.Library()


@register.simple_tag(takes_context=True)
def sort_header(context: template.Context, field: str, label: str, css_class: str = "") -> SafeString:
    """A column header that sorts by ``field``; a second click reverses."""
    request = context["request"]
    current = request.GET.get("sort", "")
    params = request.GET.copy()
    params.pop("page", None)
    ascending = current != field
    params["sort"] = field if ascending else f"-{field}"
    arrow = "▲" if current == field else ("▼" if current == f"-{field}" else "")
    state = {"▲": "ascending", "▼": "descending"}.get(arrow, "none")
    return format_html(
        '<th class="{}" aria-sort="{}"><a href="?{}" title="Sort by {}">{} <span class="sort-arrow">{}</span></a></th>',
        css_class,
        state,
        params.urlencode(),
        label,
        label,
        arrow,
    )


NAV_SECTIONS = {
    "": "home",
    "aggregates": "aggregates",
    "zones": "zones",
    "hosts": "hosts",
    "flavors": "flavors",
    "addresses": "servers",  # the address pools: a page of the Servers section
    "servers": "servers",
    "server-groups": "servers",
    "scheduling": "scheduling",
    "capacity": "capacity",
    "images": "images",
    "resource-providers": "providers",
    "projects": "identity",
    "users": "identity",
    "events": "events",
    "search": "search",
}


@register.simple_tag(takes_context=True)
def nav_section(context: template.Context) -> str:
    """The one navigation item the current page belongs to, from its path's
    first segment (``/aggregates/3/hosts/add/`` is under Aggregates only)."""
    request = context.get("request")
    if request is None:
        return ""
    path = request.path.strip("/")
    return NAV_SECTIONS.get(path.split("/", 1)[0], "")


@register.simple_tag
def external_identity() -> bool:
    """Whether the cloud's Keystone is the identity (AUTH_STRATEGY=external-keystone):
    the console then has no pages of Corral's own projects and users, nor Django's tables."""
    return keystone.is_external()


@register.inclusion_tag("dashboard/_service_state.html")
def service_state(service: Service) -> dict[str, Service]:
    return {"service": service}


@register.inclusion_tag("dashboard/_usage_bar.html")
def usage_bar(used: int, total: int) -> dict[str, Any]:
    percent = round(100 * used / total) if total else 0
    level = "bad" if percent >= 90 else ("warn" if percent >= 70 else "")
    return {"used": used, "total": total, "percent": min(percent, 100), "level": level}


@register.filter
def lookup(mapping: Mapping[str, Any] | None, key: object) -> Any:
    """``mapping[key]`` (as a string), or "" when absent: for tables keyed by id."""
    return (mapping or {}).get(str(key), "")
