"""Per-key rate limits and write quotas: a flood from one key never starves another.

Rates come from settings (``MEMLEDGER_RATE_LIMIT``, ``MEMLEDGER_WRITE_QUOTA``, e.g.
"1200/min", "20000/day"). Each limit counts per API key in the Django cache, so every key,
and so every tenant, has its own budget:

- Sliding windows of ten slices. A period (a minute, a day) is cut into ``SLICES`` slices of a
  tenth of it, counted from the epoch; a request is let through when what the key spent in
  the current slice and the nine before it, with this request's cost, stays within the limit.
  So **no span of nine tenths of a period ever holds more than the limit** (it lies within ten
  consecutive slices), and a client pacing itself evenly at the limit's rate always passes.
  Fixed windows, which this replaced, let a key spend one window's budget at its very end and
  the next one's at the start: twice the limit within a second. (A whole period may still
  hold up to twice the limit, the first half at the very end of one slice and the second ten
  slices on, as a token bucket's burst and refill would.)
- Each slice's counter is the cache key ``throttle:<scope>:<api key id>:<slice number>``,
  kept one period. ``cache.incr(key, n)`` adds the request's cost to the current slice and
  returns its total (``cache.add`` creates it when missing); one ``get_many`` reads the nine
  before it. A total above the limit refuses the request, which takes its cost back
  (``decr``), so refused requests spend nothing. ``Retry-After`` is the time until enough of
  the oldest slices have left the window for the request to fit.
- No request is ever let past a limit as long as ``incr`` is atomic: it is on Redis (INCRBY;
  ``REDIS_URL``, production), on memledger's locking file cache across the processes of one
  host (the default without ``REDIS_URL``; ``memory_core/cache_backends.py``) and on the
  local-memory cache within one process (it holds a lock). **Django's own file and database
  caches implement ``incr`` as a get and a set**: concurrent requests on one key can lose
  counts there (and their generic ``incr`` resets the timeout, so the counter's time to live
  is set again after it; ``_keep_window`` gives it back). Several web hosts need Redis to
  count together. A request racing a refused one (whose cost sits in the counter until it is
  taken back) may be refused a moment early; none is ever let through late.
- The counters live in the ``throttle`` cache (``cache_backends.counter_cache_alias``),
  which nothing else writes: a cache that is full drops entries to make room (memledger's
  file cache its expired ones first, then Django's random third), and the deletion steps'
  generation keys once filled the shared one, so that every new entry dropped a third of the
  live counters and let their keys past their limits. Settings without that alias count in
  ``default``.
- A cache that is down (Redis unreachable, a cache folder that cannot be written) refuses
  the request with 503 ``rate_limiter_unavailable`` and ``Retry-After``: never a 500, and
  never a request let through unmetered. Taking a charge back is best effort (logged): the
  counter expires with its window anyway.
"""

import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from rest_framework import exceptions
from rest_framework.throttling import BaseThrottle

from memory_core.cache_backends import THROTTLE_CACHE_ALIAS, counter_cache_alias
from memory_core.exceptions import RateLimiterUnavailable, ValidationFailed
from memory_core.principals import AgentPrincipal

logger = logging.getLogger(__name__)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """Return ``(allowed, seconds)`` of a rate like "1200/min" (DRF's spelling: the period's
    first letter, s, m, h or d, counts; ``config.env.env_rate`` refused any other word)."""
    allowed, period = rate.split("/")
    return int(allowed), PERIODS[period[0]]


def _keep_window(backend, key: str, timeout: int) -> None:
    # Django's generic incr (file and database caches) is a get and a set that also resets
    # the timeout to the default (300 s): a day's counter would vanish after five quiet
    # minutes. Give it its window back.
    if type(backend).incr is BaseCache.incr:
        backend.touch(key, timeout)


def counter_cache(alias: str = THROTTLE_CACHE_ALIAS) -> BaseCache:
    """The cache the counters of ``alias`` live in (``cache_backends.counter_cache_alias``):
    the rate limits', or the failed logins' (``LOGINS_CACHE_ALIAS``)."""
    return caches[counter_cache_alias(alias)]


def counter_add(key: str, amount: int, timeout: int, *, alias: str = THROTTLE_CACHE_ALIAS) -> int:
    """Add ``amount`` to the counter ``key`` (created at 0, kept ``timeout`` seconds) and
    return its new value: atomic where the cache's ``incr`` is (module docstring)."""
    backend = counter_cache(alias)
    try:
        value = backend.incr(key, amount)
    except ValueError:  # the slice's first request (or its counter was evicted)
        if backend.add(key, amount, timeout):
            return amount
        value = backend.incr(key, amount)  # another request created it meanwhile
    _keep_window(backend, key, timeout)
    return value


def counter_take_back(
    key: str, amount: int, timeout: int, *, alias: str = THROTTLE_CACHE_ALIAS
) -> None:
    """Subtract ``amount`` from the counter ``key`` (a refused request's cost). Best effort:
    with the cache down the charge stays until its window ends."""
    backend = counter_cache(alias)
    try:
        backend.decr(key, amount)
        _keep_window(backend, key, timeout)
    except ValueError:  # evicted meanwhile: nothing to take back
        return
    except Exception:  # the cache is down (Redis, the cache folder)
        logger.warning("rate limit counter %s not taken back: the cache failed", key, exc_info=True)


SLICES = 10  # a period's window is counted in this many slices


def _until_it_fits(window: list[int], cost: int, allowed: int) -> int:
    """Return in how many slice starts from the current slice's a request of ``cost`` fits,
    ``window`` holding the spend of each slice, oldest first, the current one last: they leave
    the window in that order, one at each slice start. Found at the latest when every slice
    has left, since ``cost <= allowed``."""
    excess = sum(window) + cost - allowed
    for age, count in enumerate(window):
        excess -= count
        if excess <= 0:
            return age + 1
    return len(window)


@dataclass(frozen=True)
class WindowCharge:
    """What ``window_charge`` did: the cost kept on the counter ``key`` (``fits``), or taken
    back, with the seconds until it would fit (``wait``)."""

    fits: bool
    key: str
    wait: float


def _reach(period: int, whole_period: bool) -> tuple[float, int, int]:
    """Return a window's slice width, how many slices it counts (the current one included)
    and how long a slice's counter must live."""
    width = period / SLICES
    if not whole_period:
        return width, SLICES, period
    return width, SLICES + 1, math.ceil(period + width)


def window_charge(
    prefix: str,
    cost: int,
    allowed: int,
    period: int,
    *,
    whole_period: bool = False,
    alias: str = THROTTLE_CACHE_ALIAS,
) -> WindowCharge:
    """Charge ``cost`` to the sliding window of the counters named ``prefix`` + slice number
    (module docstring): kept when the window, with it, holds at most ``allowed`` in
    ``period`` seconds; else taken back. Raises what the cache raises (it is down).

    The window is the current slice and the nine before it, so it spans 90 to 100 % of
    ``period``: a burst at the end of a slice leaves it after 90 % of the period. With
    ``whole_period`` it is the current slice and the ten before it, every charge of the last
    ``period`` seconds counted (100 to 110 % of it): a bound that must hold within any
    ``period`` (the failed logins: ten of them, then ten more checked passwords 13.5 of the
    15 minutes later; stop 52's audit).

    A slice's counter is never used again once its slice has passed: one whose expiry a
    cache lost (Redis's ``incr`` is an EXISTS and an INCRBY, and a key expiring between the
    two comes back without one) holds no later window's count."""
    now = time.time()
    width, slices, timeout = _reach(period, whole_period)
    current = int(now // width)
    key = f"{prefix}{current}"
    earlier = [f"{prefix}{number}" for number in range(current - slices + 1, current)]
    spent = counter_add(key, cost, timeout, alias=alias)
    counts = counter_cache(alias).get_many(earlier)
    if spent + sum(counts.values()) <= allowed:
        return WindowCharge(True, key, 0.0)
    counter_take_back(key, cost, timeout, alias=alias)
    window = [counts.get(name, 0) for name in earlier] + [spent - cost]
    return WindowCharge(False, key, (current + _until_it_fits(window, cost, allowed)) * width - now)


def window_clear(
    prefix: str, period: int, *, whole_period: bool = False, alias: str = THROTTLE_CACHE_ALIAS
) -> None:
    """Forget what the sliding window of ``prefix`` holds (``window_charge``)."""
    width, slices, _ = _reach(period, whole_period)
    current = int(time.time() // width)
    names = [f"{prefix}{n}" for n in range(current - slices + 1, current + 1)]
    counter_cache(alias).delete_many(names)


class _SlidingWindowThrottle(BaseThrottle):
    scope = ""
    setting = ""
    # What the 429 calls this limit (``refusal``): a client tells its rate limit from a
    # spent write quota, which leaves its reads alone.
    limit = ""
    describes = ""

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
        return self.charge(request, principal.api_key_id, cost, rate)

    def charge(self, request, api_key_id, cost: int, rate: str) -> bool:
        """Charge ``cost`` of key ``api_key_id``'s limit at ``rate``; whether it fits (if
        not, ``wait`` says for how long, and the request records the refusal)."""
        allowed, period = parse_rate(rate)
        if cost > allowed:
            # No window will ever hold it: a 429 with Retry-After would be retried forever.
            raise ValidationFailed(
                f"This request costs {cost} against the key's {self.limit.replace('_', ' ')} "
                f"of {rate}, which no window can ever hold: send smaller batches.",
                code="over_limit",
                details={"limit": self.limit, "rate": rate},
            )
        prefix = f"throttle:{self.scope}:{api_key_id}:"
        try:
            charge = window_charge(prefix, cost, allowed, period)
        except Exception as exc:  # the cache is down: refuse, never let it through unmetered
            logger.warning("rate limit cache failed; request refused", exc_info=True)
            raise RateLimiterUnavailable(
                "The rate limiter cannot count this key's requests right now; carry on "
                "without memory and retry later.",
            ) from exc
        held = _charges_holder(request)
        if charge.fits:
            # Kept, to be given back if a later limit refuses the request.
            held.throttle_charges = [
                *getattr(held, "throttle_charges", ()),
                (charge.key, cost, period),
            ]
            return True
        for charged in getattr(held, "throttle_charges", ()):
            counter_take_back(*charged)  # an earlier limit let it through: it spends nothing
        held.throttle_charges = []
        self.wait_seconds = charge.wait
        request.refused_by_throttle = True
        request.throttle_refusal = (self, rate)
        return False

    def wait(self) -> float | None:
        return self.wait_seconds


class ApiKeyRateThrottle(_SlidingWindowThrottle):
    """Requests per key per period, all methods (``MEMLEDGER_RATE_LIMIT``, e.g. "1200/min")."""

    scope = "api_key"
    setting = "MEMLEDGER_RATE_LIMIT"
    limit = "rate_limit"
    describes = "This key's rate limit ({rate}, every request) is reached"


def _charge_or_refuse(throttle: _SlidingWindowThrottle, request, api_key_id, cost: int) -> None:
    """Charge ``cost`` to ``throttle``'s limit of key ``api_key_id`` where DRF's throttles
    did not (or could not yet) count it; past the limit, raise its 429."""
    rate = getattr(settings, throttle.setting)
    if rate is None:
        return
    if not throttle.charge(request, api_key_id, cost, rate):
        raise exceptions.Throttled(wait=throttle.wait())


def rate_limit_charge_refused(request, api_key_id) -> None:
    """Charge a request that authentication refuses once its key is known (a subject token
    that is forged, expired or another agent's) to the key's rate limit, as every request is
    (docs/api.md, 429): DRF throttles after authentication, so such requests were never
    limited, each one a key lookup and a write of its last use (stop 52's audit). Past the
    limit, the 429 instead of the 401."""
    _charge_or_refuse(ApiKeyRateThrottle(), request, api_key_id, 1)


class ApiKeyWriteQuotaThrottle(_SlidingWindowThrottle):
    """Writes per key per period (``MEMLEDGER_WRITE_QUOTA``, e.g. "20000/day"); a batch
    spends one write per item."""

    scope = "api_key_writes"
    setting = "MEMLEDGER_WRITE_QUOTA"
    limit = "write_quota"
    describes = (
        "This key's write quota ({rate}, a write per memory stored) is spent; its reads, "
        "retrievals and deletions still pass"
    )

    def cost(self, request, view) -> int:
        # A view that only reads through POST (retrieval: the query is a body) says so. A
        # method the view lacks writes nothing (its 405 comes after the throttles): the batch
        # priced a PUT by reading its body, answering 400 or 415 instead (stop 59's audit).
        # Nor does a request the view answers 406 (``NotAcceptableLast``: it too comes after
        # the throttles); the batch priced it by its body, answering 400 or 415 where every
        # other endpoint answers 406 (stop 63's review).
        if (
            request.method not in WRITE_METHODS
            or request.method not in view.allowed_methods
            or getattr(view, "reads_only", False)
            or getattr(view, "not_acceptable", None) is not None
        ):
            return 0
        # A view that stores several writes a request (the batch) says how many: the whole
        # batch is counted, and refused before anything is stored if it does not fit.
        write_cost = getattr(view, "write_cost", None)
        return write_cost(request) if write_cost is not None else 1


def refusal(request, wait: int) -> tuple[str, dict] | None:
    """Return the message and details of the 429 a limit answered ``request`` with (which
    limit, its rate, when to retry), or None when none of these limits refused it."""
    refused = getattr(request, "throttle_refusal", None)
    if refused is None:
        return None
    throttle, rate = refused
    message = f"{throttle.describes.format(rate=rate)}: retry in {wait} s (Retry-After)."
    return message, {"limit": throttle.limit, "rate": rate}


class SpendsNoWriteQuota:
    """A view whose writes take memories away (a deletion, a revoke, a task's close): the write
    quota guards what an agent stores, and a person's "delete my data" waited out a spent
    quota (~22 hours). The rate limit still counts these requests."""

    def write_cost(self, request) -> int:
        return 0


def write_quota_charge(request, cost: int) -> None:
    """Charge ``cost`` to the write quota of ``request``'s key, which the throttle let through
    for nothing (``IdempotentWriteMixin.write_cost``), once it turns out to write after all;
    past the quota, raise its 429."""
    _charge_or_refuse(ApiKeyWriteQuotaThrottle(), request, request.user.api_key_id, cost)


def write_quota_refund(request) -> None:
    """Give back what the write quota charged ``request``: it turned out to write nothing (an
    idempotent replay the throttle could not yet tell from a write, because the first
    request was still in flight when it counted, or a write refused with a 4xx error:
    ``api.exceptions.exception_handler``, or answered 503 as its transaction committed:
    ``api.middleware.DatabaseUnavailableMiddleware``). The rate limit's charge stays."""
    prefix = f"throttle:{ApiKeyWriteQuotaThrottle.scope}:"
    held = _charges_holder(request)
    kept = []
    for charged in getattr(held, "throttle_charges", ()):
        if charged[0].startswith(prefix):
            counter_take_back(*charged)
        else:
            kept.append(charged)
    held.throttle_charges = kept


def _charges_holder(request):
    """Where a request's charges are kept: on Django's request under DRF's, which a
    middleware sees too. A write whose request fails as ATOMIC_REQUESTS commits, after DRF's
    dispatch, is answered 503 by the middleware, which gives its write back (stop 57's audit
    of failure behaviour: it kept the charge, and the agent retrying as told was throttled)."""
    return getattr(request, "_request", request)
