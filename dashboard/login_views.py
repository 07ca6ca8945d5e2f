"""The console's login and logout, in either identity mode: Django's own
views with Corral's identity; the cloud's Keystone with
``AUTH_STRATEGY=external-keystone`` (dashboard/keystone_login.py)."""

import logging

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from aggregates.identity import keystone
from config.policy import TokenCheckUnavailable

from .console import redirect_next
from .forms import ThrottledLoginForm
from .keystone_login import SESSION_TOKEN, KeystoneLoginForm

log = logging.getLogger(__name__)

LOGGED_OUT_MESSAGE = "You are logged out; Keystone has revoked your token."
NOT_REVOKED_MESSAGE = "You are logged out, but Keystone did not answer: your token was not revoked."

_django_login = auth_views.LoginView.as_view(
    template_name="dashboard/login.html", next_page="dashboard:home", authentication_form=ThrottledLoginForm
)
_django_logout = auth_views.LogoutView.as_view(next_page="dashboard:login")


def login(request: HttpRequest) -> HttpResponseBase:
    if keystone.is_external():
        return _keystone_login(request)
    return _django_login(request)


def logout(request: HttpRequest) -> HttpResponseBase:
    if keystone.is_external():
        return _keystone_logout(request)
    return _django_logout(request)


@sensitive_post_parameters("password")
@csrf_protect
@never_cache
def _keystone_login(request: HttpRequest) -> HttpResponseBase:
    form = KeystoneLoginForm(request, request.POST or None)
    if request.method == "POST" and form.is_valid():
        request.session.flush()  # a new session, under a new key, for the new user
        request.session[SESSION_TOKEN] = form.token
        rotate_token(request)
        return redirect_next(request, "dashboard:home")
    context = {"form": form, "next": request.POST.get("next") or request.GET.get("next", ""), "keystone": True}
    return render(request, "dashboard/login.html", context)


@require_POST
@csrf_protect
def _keystone_logout(request: HttpRequest) -> HttpResponseBase:
    """Revoke the session's token in Keystone and end the session."""
    token = request.session.get(SESSION_TOKEN)
    request.session.flush()
    if token:
        try:
            keystone.revoke(token)
        except TokenCheckUnavailable:
            log.error("The console's logout could not revoke its token in Keystone")
            messages.warning(request, NOT_REVOKED_MESSAGE)
        else:
            messages.info(request, LOGGED_OUT_MESSAGE)
    return redirect("dashboard:login")
