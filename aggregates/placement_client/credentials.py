"""What the client authenticates with: a token provider, given to it. The
client sends the provider's token and, when placement answers 401, asks it
once for a renewed one (sent again only if it differs). By default the
provider is the callable settings.PLACEMENT_TOKEN_PROVIDER names (Corral's
service token, ``aggregates.identity.service_token``): named there, as
PLACEMENT_TOKEN_VALIDATOR is for placement, so that the client imports
nothing of identity."""

from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


class TokenProvider(Protocol):
    def __call__(self, renew: bool = False) -> str:
        """The token to send; with ``renew``, a new one if it can."""
        ...


def fixed(token: str) -> TokenProvider:
    """Always ``token``: there is nothing to renew."""

    def provider(renew: bool = False) -> str:
        return token

    return provider


def configured() -> TokenProvider:
    """The provider settings.PLACEMENT_TOKEN_PROVIDER names."""
    provider: TokenProvider = import_string(settings.PLACEMENT_TOKEN_PROVIDER)
    return provider
