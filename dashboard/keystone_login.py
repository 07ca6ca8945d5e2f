"""The console's login through the cloud's Keystone
(``AUTH_STRATEGY=external-keystone``), after Horizon's ``openstack_auth``:
the form takes a user name, password, domain and project; Keystone
authenticates them (keystoneauth1 password authentication, scoped to the
project); the Django session keeps the token (never the password); each
console request validates it (``keystone.validate``, cached as the APIs'
checks are) and acts with its roles through the policy table; logout
revokes it in Keystone. A token Keystone no longer accepts (expired or
revoked) ends the session: back to the login page, with a message.

Corral's own identity modes keep Django's login (its users and sessions);
in this mode the console has no Django user at all: ``KeystoneUser`` stands
for the token's user in ``request.user``."""

from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from aggregates.identity import keystone, throttle
from config.policy import TokenCheckUnavailable

SESSION_TOKEN = "keystone_token"
ENDED_MESSAGE = "Your Keystone session has ended (its token expired or was revoked). Log in again."
UNAVAILABLE_MESSAGE = "The identity service (Keystone) did not answer. Try again in a moment."


class KeystoneUser:
    """The console user a Keystone token stands for (no Django user: nothing
    of it is stored but the token, in the session). Staff as far as Django's
    templates ask: what it may see and do is the policy's, by its roles."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = True
    is_superuser = False
    pk = None

    def __init__(self, token: str, facts: Mapping[str, Any]) -> None:
        self.token = token
        self.facts = dict(facts)

    def get_username(self) -> str:
        return str(self.facts["username"])

    def __str__(self) -> str:
        return self.get_username()

    def has_perm(self, perm: str, obj: object = None) -> bool:
        return False  # Django's admin (its tables) is for Corral's own users

    def has_module_perms(self, app_label: str) -> bool:
        return False


def session_user(request: HttpRequest) -> KeystoneUser | AnonymousUser:
    """The console's user of ``request`` in this mode: the session's token
    if Keystone still accepts it; else the session ends (with a message) and
    the user is anonymous. Raises TokenCheckUnavailable."""
    token = request.session.get(SESSION_TOKEN)
    if not token:
        return AnonymousUser()
    facts = keystone.validate(token)
    if facts is None:
        request.session.flush()
        messages.warning(request, ENDED_MESSAGE)
        return AnonymousUser()
    return KeystoneUser(token, facts)


class KeystoneLoginForm(forms.Form):
    username = forms.CharField(label="User name", max_length=255, widget=forms.TextInput(attrs={"autofocus": True}))
    password = forms.CharField(
        label="Password", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )
    domain = forms.CharField(label="Domain", max_length=255, initial="Default")
    project = forms.CharField(label="Project", max_length=255, help_text="The project your token is scoped to.")

    def __init__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        self.request = request
        self.token = ""
        super().__init__(*args, **kwargs)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        # The same throttle as Corral's own logins, by user name in its domain.
        name = f"{cleaned['username']}@{cleaned['domain']}"
        address = self.request.META.get("REMOTE_ADDR")
        request_id = getattr(self.request, "request_id", "")
        try:
            throttle.check(name, address, request_id, surface="console")
        except throttle.Throttled as exc:
            raise forms.ValidationError(exc.message, code="throttled") from None
        try:
            self.token, _ = keystone.log_in(
                cleaned["username"], cleaned["password"], cleaned["domain"], cleaned["project"]
            )
        except keystone.LoginRefused as exc:
            throttle.record_failure(name, address)
            raise forms.ValidationError(exc.message, code="invalid_login") from None
        except TokenCheckUnavailable:
            raise forms.ValidationError(UNAVAILABLE_MESSAGE, code="unavailable") from None
        return cleaned


def unavailable(request: HttpRequest) -> HttpResponse:
    """The page of a console request whose token Keystone did not check in time."""
    return render(request, "dashboard/unavailable.html", {"message": UNAVAILABLE_MESSAGE}, status=503)
