"""The token Corral's compute side sends to placement: the placement
client's token provider (settings.PLACEMENT_TOKEN_PROVIDER names
``service_token``), so that the client itself knows nothing of identity.

PLACEMENT_AUTH_TOKEN when set, else "admin" under noauth2, else, with an
external Keystone, the Keystone token of Corral's service user
(identity/keystone.py), else a token
Corral issues for its own service user (PLACEMENT_SERVICE_USER, admin on
project "service"), kept until a minute before it expires, and issued again
when the client asks to renew it (placement answered 401). Corral's
placement checks it through PLACEMENT_TOKEN_VALIDATOR."""

import threading
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from aggregates.identity import keystone
from aggregates.identity import services as identity
from aggregates.identity.caller import ADMIN

_service_token: dict[str, Any] = {"value": None, "expires_at": None}
_service_token_lock = threading.Lock()


def uses_service_user() -> bool:
    return not settings.PLACEMENT_AUTH_TOKEN and settings.AUTH_STRATEGY != "noauth2"


def service_token(renew: bool = False) -> str:
    """The token to send to placement (see the module's description)."""
    if settings.PLACEMENT_AUTH_TOKEN:
        return settings.PLACEMENT_AUTH_TOKEN
    if not uses_service_user():
        return "admin"
    if settings.AUTH_STRATEGY == "external-keystone":
        return keystone.service_token(renew)
    with _service_token_lock:
        expires_at = _service_token["expires_at"]
        if renew or expires_at is None or expires_at - timedelta(minutes=1) <= timezone.now():
            _service_token["value"], _service_token["expires_at"] = _issue_service_token()
        return str(_service_token["value"])


def forget_service_token() -> None:
    """Drop the kept token: the next one is issued afresh (tests whose
    database no longer holds the token kept by an earlier test)."""
    with _service_token_lock:
        _service_token["value"] = _service_token["expires_at"] = None


def _issue_service_token() -> tuple[str, datetime]:
    user, created = get_user_model().objects.get_or_create(username=settings.PLACEMENT_SERVICE_USER)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    project = identity.ensure_project("service", description="Service users of Corral")
    identity.grant(user, project, ADMIN)
    token, row = identity.issue_token(user, project)
    return token, row.expires_at
