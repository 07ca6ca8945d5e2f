"""Django admin registrations of placement's tables (those no admin module
registered yet), read-only: placement's data changes through its API and the
mirroring, never here."""

from django.apps import apps
from django.contrib import admin

from aggregates.admin import ReadOnlyAdmin
from aggregates.identity.models import LoginFailure

for model in apps.get_app_config("placement").get_models():
    if not admin.site.is_registered(model):
        admin.site.register(model, ReadOnlyAdmin)

# The login throttle's failed attempts (aggregates.identity.throttle): read-only.
if not admin.site.is_registered(LoginFailure):
    admin.site.register(LoginFailure, ReadOnlyAdmin)
