"""Per-key rate limits and write quotas: a flood from one key never starves another.

Counters live in the Django cache (Redis in production), keyed by the API key id, so every
key, and so every tenant, has its own budget. Rates come from settings
(``MEMLEDGER_RATE_LIMIT``, ``MEMLEDGER_WRITE_QUOTA``).
"""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from memory_core.principals import AgentPrincipal

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class _PerKeyThrottle(SimpleRateThrottle):
    setting = ""

    def get_rate(self):
        return getattr(settings, self.setting)

    def get_cache_key(self, request, view):
        principal = request.user
        if not isinstance(principal, AgentPrincipal) or principal.api_key_id is None:
            return None  # unauthenticated requests are refused before any work is done
        return self.cache_format % {"scope": self.scope, "ident": principal.api_key_id}


class ApiKeyRateThrottle(_PerKeyThrottle):
    """Requests per key per period, all methods (``MEMLEDGER_RATE_LIMIT``, e.g. "1200/min")."""

    scope = "api_key"
    setting = "MEMLEDGER_RATE_LIMIT"


class ApiKeyWriteQuotaThrottle(_PerKeyThrottle):
    """Writes per key per period (``MEMLEDGER_WRITE_QUOTA``, e.g. "20000/day")."""

    scope = "api_key_writes"
    setting = "MEMLEDGER_WRITE_QUOTA"

    def allow_request(self, request, view):
        # A view that only reads through POST (retrieval: the query is a body) says so.
        if request.method not in WRITE_METHODS or getattr(view, "reads_only", False):
            return True
        return super().allow_request(request, view)
