"""``manage.py register_keystone_catalog --public-url URL``: register
Corral's compute, placement and image services and their public, internal
and admin endpoints in the external Keystone (KEYSTONE_AUTH_URL), as
Corral's service user (who needs Keystone's admin role for this step).
Idempotent: run it again after a URL changes."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates.identity import catalog, keystone


class Command(BaseCommand):
    help = "Register Corral's compute, placement and image services and endpoints in the external Keystone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--public-url", help="Corral's root URL for users (default PUBLIC_URL)")
        parser.add_argument("--internal-url", help="Corral's root URL inside the cloud (default: the public URL)")
        parser.add_argument("--admin-url", help="Corral's root URL for admins (default: the internal URL)")
        parser.add_argument("--region", help="the region (default REGION_NAME)")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.KEYSTONE_AUTH_URL:
            raise CommandError("KEYSTONE_AUTH_URL names no Keystone")
        public = options["public_url"] or settings.PUBLIC_URL
        if not public:
            raise CommandError("give --public-url (or set PUBLIC_URL): Corral's root URL, as clients reach it")
        internal = options["internal_url"] or public
        urls = {"public": public, "internal": internal, "admin": options["admin_url"] or internal}
        try:
            catalog.register(
                keystone.session(),
                urls,
                options["region"] or settings.REGION_NAME,
                lambda line: self.stdout.write(line),
            )
        except Exception as exc:  # Keystone's refusal or absence, said plainly
            raise CommandError(str(exc)) from None
