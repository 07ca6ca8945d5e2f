"""Who a token stands for, in either identity mode, and the external
Keystone (``AUTH_STRATEGY=external-keystone``).

``check_token`` is the one token check of every API (compute, image, and
placement through PLACEMENT_TOKEN_VALIDATOR): Corral's own tokens in its
own identity modes, else the external Keystone's, validated as
keystonemiddleware's ``auth_token`` does: ``GET /v3/auth/tokens`` with the
token in ``X-Subject-Token``, authenticated by Corral's own service token
(a keystoneauth1 session of its service user, ``KEYSTONE_SERVICE_*``).
An ``X-Service-Token`` is validated too: an invalid one refuses the request
(401), a valid one holding the ``service`` role lets an expired user token
through (keystonemiddleware's ``allow_expired``, for a service finishing
a user's long operation).

Validations are cached for KEYSTONE_TOKEN_CACHE_SECONDS (300, as
keystonemiddleware's ``token_cache_time``), never past the token's expiry,
refusals too; the cache is Django's ``keystone_tokens`` cache (shared by
every worker when KEYSTONE_TOKEN_CACHE_URL names a Redis). A token revoked
in Keystone is refused once its entry expires.

Keystone not answering within KEYSTONE_TIMEOUT seconds (connect or read),
or answering with a server error, raises ``TokenCheckUnavailable``: each
API answers 503 in its own format (keystonemiddleware would hang without a
timeout, or answer 500 or an HTML 503).

The console's login (dashboard/keystone_login.py) gets a user's
project-scoped token with ``log_in`` (password authentication) and revokes
it at logout with ``revoke``; its pages check it with ``validate`` as the
APIs do.

keystoneauth1 is the field's client library: its ``Session`` with a
``v3.Password`` plugin keeps the service user's token, renews it before it
expires and after a 401, and is what the catalog command and the placement
client's token provider use too."""

import hashlib
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.signals import setting_changed
from keystoneauth1 import access
from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from config.policy import TokenCheckUnavailable

log = logging.getLogger(__name__)

EXTERNAL = "external-keystone"
SERVICE_ROLE = "service"
CACHE_ALIAS = "keystone_tokens"

_lock = threading.Lock()
_session: ks_session.Session | None = None


def is_external() -> bool:
    return bool(settings.AUTH_STRATEGY == EXTERNAL)


def check_token(token: str | None, request_id: str = "", service_token: str | None = None) -> Caller | None:
    """The Caller ``token`` stands for, or None when it is not a valid token.
    Raises TokenCheckUnavailable when the external Keystone cannot answer."""
    if not is_external():
        return identity.caller_for_token(token, request_id)
    if not token:
        return None
    allow_expired = False
    if service_token:
        service = validate(service_token)
        if service is None:
            return None
        allow_expired = SERVICE_ROLE in service["roles"]
    found = validate(token, allow_expired=allow_expired)
    if found is None:
        return None
    return caller_for(found, request_id)


def caller_for(facts: Mapping[str, Any], request_id: str = "") -> Caller:
    """The Caller a validated token stands for (``validate``'s facts)."""
    return Caller(
        user=None,
        username=facts["username"],
        user_id=facts["user_id"],
        project_id=facts["project_id"],
        roles=frozenset(facts["roles"]),
        request_id=request_id,
    )


# --- a user's own login (the console's) ----------------------------------------


class LoginRefused(Exception):
    """Keystone did not authenticate the user (wrong name, password, domain
    or project, or no role on that project)."""

    message = "Keystone refused these credentials: check the user name, password, domain and project."


def log_in(username: str, password: str, domain: str, project: str) -> tuple[str, dict[str, Any]]:
    """A project-scoped token of ``username`` (password authentication; the
    user and the project both in ``domain``, as Horizon's login form), and
    what it says (``validate``'s facts). Raises LoginRefused, or
    TokenCheckUnavailable when Keystone does not answer in time."""
    auth = v3.Password(
        auth_url=_v3_url(),
        username=username,
        password=password,
        user_domain_name=domain,
        project_name=project,
        project_domain_name=domain,
        include_catalog=False,
    )
    try:
        info = auth.get_access(ks_session.Session(timeout=settings.KEYSTONE_TIMEOUT))
    except (ks_exceptions.Unauthorized, ks_exceptions.NotFound, ks_exceptions.BadRequest):
        raise LoginRefused() from None
    except ks_exceptions.ClientException as exc:
        log.error("Keystone did not answer a console login: %s", exc)
        raise TokenCheckUnavailable(f"The identity service did not answer: {exc}") from None
    if not info.project_scoped or not info.auth_token:
        raise LoginRefused()
    facts = _facts_of(info)
    # The console's next page needs no second round trip to Keystone.
    cache_validation(info.auth_token, facts)
    return info.auth_token, facts


def revoke(token: str) -> None:
    """Revoke ``token`` in Keystone (``DELETE /v3/auth/tokens``, the token
    authenticating its own revocation, as a user's logout does) and forget
    its cached validation, so that this Corral refuses it at once. Raises
    TokenCheckUnavailable when Keystone does not answer."""
    caches[CACHE_ALIAS].delete_many([_cache_key(token, False), _cache_key(token, True)])
    try:
        response = ks_session.Session(timeout=settings.KEYSTONE_TIMEOUT).delete(
            f"{_v3_url()}/auth/tokens",
            headers={"X-Auth-Token": token, "X-Subject-Token": token},
            raise_exc=False,
            connect_retries=0,
            log=False,
        )
    except ks_exceptions.ClientException as exc:
        log.error("Keystone did not answer a token revocation: %s", exc)
        raise TokenCheckUnavailable(f"The identity service did not answer: {exc}") from None
    # 404: already revoked or expired; 401 likewise (the token no longer authenticates).
    if response.status_code >= 500:
        raise TokenCheckUnavailable(f"The identity service answered {response.status_code}.")


# --- the service user's session --------------------------------------------------


def session() -> ks_session.Session:
    """This process's keystoneauth1 session of Corral's service user."""
    global _session
    with _lock:
        if _session is None:
            auth = v3.Password(
                auth_url=settings.KEYSTONE_AUTH_URL,
                username=settings.KEYSTONE_SERVICE_USERNAME,
                password=settings.KEYSTONE_SERVICE_PASSWORD,
                project_name=settings.KEYSTONE_SERVICE_PROJECT_NAME,
                user_domain_name=settings.KEYSTONE_SERVICE_USER_DOMAIN_NAME,
                project_domain_name=settings.KEYSTONE_SERVICE_PROJECT_DOMAIN_NAME,
            )
            _session = ks_session.Session(auth=auth, timeout=settings.KEYSTONE_TIMEOUT)
        return _session


def forget_session(**kwargs: Any) -> None:
    """Drop the kept session (its token with it): the next call logs in again."""
    global _session
    with _lock:
        _session = None


def _on_setting_changed(setting: str, **kwargs: Any) -> None:
    if setting.startswith("KEYSTONE_") or setting == "AUTH_STRATEGY":
        forget_session()


setting_changed.connect(_on_setting_changed)


def service_token(renew: bool = False) -> str:
    """The service user's Keystone token (the placement client's token
    provider in this mode: Corral's calls to placement and the host agents'
    are made with Keystone-issued tokens); with ``renew``, a new one.
    Raises TokenCheckUnavailable when Keystone cannot issue one."""
    current = session()
    try:
        if renew and current.auth is not None:
            current.auth.invalidate()
        token = current.get_token()
    except ks_exceptions.ClientException as exc:
        log.error("Keystone did not issue the service user's token: %s", exc)
        raise TokenCheckUnavailable(f"The identity service did not issue a token: {exc}") from None
    if not token:
        raise TokenCheckUnavailable("The identity service did not issue a token.")
    return token


# --- validation ------------------------------------------------------------------


def _v3_url() -> str:
    return f"{settings.KEYSTONE_AUTH_URL.rstrip('/')}/v3"


def _cache_key(token: str, allow_expired: bool) -> str:
    digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    return f"keystone-token:{digest}:{int(allow_expired)}"


def validate(token: str, allow_expired: bool = False) -> dict[str, Any] | None:
    """What Keystone says of ``token`` (user, project, roles, expiry), or
    None when it is not valid; cached (see the module's description)."""
    cache = caches[CACHE_ALIAS]
    key = _cache_key(token, allow_expired)
    cached = cache.get(key)
    if cached is not None:
        if not cached.get("valid"):
            return None
        if not allow_expired and cached["expires_at"] <= time.time():
            return None
        return dict(cached)
    found = _ask_keystone(token, allow_expired)
    if found is None:
        cache.set(key, {"valid": False}, float(settings.KEYSTONE_TOKEN_CACHE_SECONDS))
        return None
    cache_validation(token, found, allow_expired)
    return found


def cache_validation(token: str, facts: Mapping[str, Any], allow_expired: bool = False) -> None:
    """Remember that ``token`` is valid and says ``facts`` (for
    KEYSTONE_TOKEN_CACHE_SECONDS, never past its expiry)."""
    lifetime = float(settings.KEYSTONE_TOKEN_CACHE_SECONDS)
    if not allow_expired:
        lifetime = min(lifetime, facts["expires_at"] - time.time())
    if lifetime > 0:
        caches[CACHE_ALIAS].set(_cache_key(token, allow_expired), {"valid": True, **facts}, lifetime)


def _ask_keystone(token: str, allow_expired: bool) -> dict[str, Any] | None:
    params = {"allow_expired": "1"} if allow_expired else None
    url = f"{_v3_url()}/auth/tokens"
    current = session()
    for attempt in (1, 2):
        try:
            response = current.get(
                url,
                headers={"X-Subject-Token": token},
                params=params,
                authenticated=True,
                raise_exc=False,
                connect_retries=0,
                log=False,
            )
        except ks_exceptions.ClientException as exc:
            log.error("Keystone did not answer a token validation: %s", exc)
            raise TokenCheckUnavailable(f"The identity service did not answer: {exc}") from None
        if response.status_code == 401 and attempt == 1 and current.auth is not None:
            current.auth.invalidate()  # our own service token expired or was revoked
            continue
        break
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        log.error("Keystone answered a token validation with %s", response.status_code)
        raise TokenCheckUnavailable(f"The identity service answered {response.status_code}.")
    return _token_facts(response.json().get("token") or {})


def _token_facts(body: Mapping[str, Any]) -> dict[str, Any] | None:
    return _facts_of(access.AccessInfoV3(body={"token": dict(body)}, auth_token="-"))


def _facts_of(info: access.AccessInfo) -> dict[str, Any]:
    expires = info.expires
    return {
        "user_id": info.user_id or "",
        "username": info.username or "",
        "project_id": info.project_id or "",
        "project_name": info.project_name or "",
        "roles": sorted(info.role_names or []),
        "expires_at": expires.timestamp() if expires is not None else time.time() + 3600,
    }
