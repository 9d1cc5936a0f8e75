"""Per-key rate limits and write quotas: a flood from one key never starves another.

Rates come from settings (``MEMLEDGER_RATE_LIMIT``, ``MEMLEDGER_WRITE_QUOTA``, e.g.
"1200/min", "20000/day"). Each limit is a counter per API key and fixed window in the Django
cache, so every key, and so every tenant, has its own budget:

- The window is the period's multiple of the epoch the request falls in; its counter is the
  cache key ``throttle:<scope>:<api key id>:<window start>``. ``cache.add(key, 0, period)``
  creates it (a no-op when it exists) and ``cache.incr(key, n)`` adds the request's cost and
  returns the new total; a total above the limit refuses the request, which takes its cost
  back (``decr``), so refused requests spend nothing. One integer per key and window, not a
  list of timestamps (DRF's ``SimpleRateThrottle`` kept up to 20,000 per key per day).
- No request is ever let past a limit as long as ``incr`` is atomic: it is on Redis (INCRBY;
  ``REDIS_URL``, production), on memledger's locking file cache across the processes of one
  host (the default without ``REDIS_URL``; ``memory_core/cache_backends.py``) and on the
  local-memory cache within one process (it holds a lock). **Django's own file and database
  caches implement ``incr`` as a get and a set**: concurrent requests on one key can lose
  counts there, as DRF's read-modify-write of its history list did on every cache (and their
  generic ``incr`` resets the timeout, so the counter's window is set again after it;
  ``_keep_window`` gives it back). Several web hosts need Redis to count together.
- Fixed windows: a key may spend one window's budget at its very end and the next one's at
  the start (up to twice the rate over a short span). ``Retry-After`` is the time left until
  the window ends. A request racing a refused one (whose cost sits in the counter until it
  is taken back) may be refused a moment early; none is ever let through late.
"""

import time

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.base import BaseCache
from rest_framework.throttling import BaseThrottle

from memory_core.exceptions import ValidationFailed
from memory_core.principals import AgentPrincipal

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """Return ``(allowed, seconds)`` of a rate like "1200/min" (DRF's spelling: the period's
    first letter, s, m, h or d, counts)."""
    allowed, period = rate.split("/")
    return int(allowed), PERIODS[period[0]]


def _keep_window(backend, key: str, timeout: int) -> None:
    # Django's generic incr (file and database caches) is a get and a set that also resets
    # the timeout to the default (300 s): a day's counter would vanish after five quiet
    # minutes. Give it its window back.
    if type(backend).incr is BaseCache.incr:
        backend.touch(key, timeout)


def counter_add(key: str, amount: int, timeout: int) -> int:
    """Add ``amount`` to the counter ``key`` (created at 0, kept ``timeout`` seconds) and
    return its new value: atomic where the cache's ``incr`` is (module docstring)."""
    backend = caches[DEFAULT_CACHE_ALIAS]
    backend.add(key, 0, timeout)
    try:
        value = backend.incr(key, amount)
    except ValueError:  # evicted between add and incr: start it again with this amount
        if backend.add(key, amount, timeout):
            return amount
        value = backend.incr(key, amount)
    _keep_window(backend, key, timeout)
    return value


def counter_take_back(key: str, amount: int, timeout: int) -> None:
    """Subtract ``amount`` from the counter ``key`` (a refused request's cost)."""
    backend = caches[DEFAULT_CACHE_ALIAS]
    try:
        backend.decr(key, amount)
    except ValueError:  # evicted meanwhile: nothing to take back
        return
    _keep_window(backend, key, timeout)


class _FixedWindowThrottle(BaseThrottle):
    scope = ""
    setting = ""

    def __init__(self):
        self.wait_seconds = None

    def cost(self, request, view) -> int:
        """Return how much ``request`` spends of this limit (0: nothing)."""
        return 1

    def allow_request(self, request, view) -> bool:
        rate = getattr(settings, self.setting)
        principal = request.user
        if rate is None:
            return True
        if not isinstance(principal, AgentPrincipal) or principal.api_key_id is None:
            return True  # not an API key: refused by authentication before any work is done
        if getattr(request, "refused_by_throttle", False):
            return True  # an earlier limit refused it: it spends nothing of this one
        cost = self.cost(request, view)
        if cost <= 0:
            return True
        allowed, period = parse_rate(rate)
        if cost > allowed:
            # No window will ever hold it: a 429 with Retry-After would be retried forever.
            raise ValidationFailed(
                f"This request costs {cost} against a limit of {allowed} per {period} s; "
                "send smaller batches.",
                code="over_limit",
            )
        now = time.time()
        start = int(now // period) * period
        key = f"throttle:{self.scope}:{principal.api_key_id}:{start}"
        if counter_add(key, cost, period) <= allowed:
            # Kept, to be given back if a later limit refuses the request.
            request.throttle_charges = [
                *getattr(request, "throttle_charges", ()),
                (key, cost, period),
            ]
            return True
        counter_take_back(key, cost, period)
        for charged in getattr(request, "throttle_charges", ()):
            counter_take_back(*charged)  # an earlier limit let it through: it spends nothing
        request.throttle_charges = []
        self.wait_seconds = start + period - now
        request.refused_by_throttle = True
        return False

    def wait(self) -> float | None:
        return self.wait_seconds


class ApiKeyRateThrottle(_FixedWindowThrottle):
    """Requests per key per period, all methods (``MEMLEDGER_RATE_LIMIT``, e.g. "1200/min")."""

    scope = "api_key"
    setting = "MEMLEDGER_RATE_LIMIT"


class ApiKeyWriteQuotaThrottle(_FixedWindowThrottle):
    """Writes per key per period (``MEMLEDGER_WRITE_QUOTA``, e.g. "20000/day"); a batch
    spends one write per item."""

    scope = "api_key_writes"
    setting = "MEMLEDGER_WRITE_QUOTA"

    def cost(self, request, view) -> int:
        # A view that only reads through POST (retrieval: the query is a body) says so.
        if request.method not in WRITE_METHODS or getattr(view, "reads_only", False):
            return 0
        # A view that stores several writes a request (the batch) says how many: the whole
        # batch is counted, and refused before anything is stored if it does not fit.
        write_cost = getattr(view, "write_cost", None)
        return write_cost(request) if write_cost is not None else 1
