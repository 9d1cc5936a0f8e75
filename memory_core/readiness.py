"""Whether this process can serve: the checks behind the readiness probe (``/readyz``).

- ``database``: whether the server is a primary that takes writes, asked on this process's
  connection as the application role. A server that is down or refuses the role fails it
  within ``DB_CONNECT_TIMEOUT`` (``database_unavailable``); a standby (``pg_is_in_recovery``,
  after a failover that left this process on it: ``database_in_recovery``) or a read-only
  database (``transaction_read_only``, ``default_transaction_read_only = on``:
  ``database_read_only``) fails it too: every write and retrieval would answer 503.
- ``migrations``: every migration of this release is applied. A process of a new release
  started before ``migrate`` would fail on its first query of a new column; it stays out of
  the load balancer instead. Once true, a process keeps the answer (the schema only moves
  forward under a running release), so later probes cost one ``SELECT 1``.
- ``rate_limit_cache``: whether the cache the rate limits count in answers and counts (Redis
  with ``REDIS_URL``, within ``REDIS_TIMEOUT_SECONDS``; else this host's file cache): a
  counter of its own is added to, as a request's is. Without it every agent request answers
  503 ``rate_limiter_unavailable`` (``cache_unavailable``); a read alone passed a cache that
  reads and refuses writes (a full folder, Redis out of memory under ``noeviction``), and
  the probe said ready while every request was refused (stop 47's audit). With neither
  ``MEMLEDGER_RATE_LIMIT`` nor ``MEMLEDGER_WRITE_QUOTA`` set nothing counts there and it is
  not asked (``{"ok": true, "used": false}``): its outage made the probe say not ready while
  every request was served (stop 58's audit of failures).
- ``embedding_model``: whether the model is loaded in this process. It does not make the
  process unready: without the model retrieval degrades to the stores that need no vector
  and writes answer 503, as DESIGN.md's failure behaviour asks, and a process started with
  ``MEMLEDGER_WARM_UP=false`` loads it on first use.

The answers name checks and states, never data, and counts rather than migration names: the
probe is unauthenticated.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from memory_core.embeddings import get_embedder

logger = logging.getLogger(__name__)

_migrations_applied = False


@dataclass
class Readiness:
    ready: bool
    checks: dict[str, dict] = field(default_factory=dict)


def _database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_is_in_recovery(), current_setting('transaction_read_only')")
            in_recovery, read_only = cursor.fetchone()
    except DatabaseError as exc:
        logger.warning("readiness: the database is unavailable: %s", exc)
        return {"ok": False, "code": "database_unavailable"}
    if in_recovery:
        logger.warning("readiness: the database is a standby (in recovery): it takes no writes")
        return {"ok": False, "code": "database_in_recovery"}
    if read_only == "on":
        logger.warning("readiness: the database is read-only: it takes no writes")
        return {"ok": False, "code": "database_read_only"}
    return {"ok": True}


def _migrations() -> dict:
    global _migrations_applied  # a per-process memo of a one-way fact
    if not _migrations_applied:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            return {"ok": False, "code": "migrations_pending", "pending": len(pending)}
        _migrations_applied = True
    return {"ok": True}


# The probe's own counter in the rate limits' cache (never a key's: those are named by their
# digest), kept a minute.
READYZ_COUNTER = "memledger:readyz"
READYZ_COUNTER_SECONDS = 60


def _rate_limits_set() -> bool:
    # With neither set no request counts in the cache (``api.throttling``'s throttles let it
    # through first), so its outage refuses none: it must not make the process unready.
    return bool(settings.MEMLEDGER_RATE_LIMIT or settings.MEMLEDGER_WRITE_QUOTA)


def _rate_limit_cache() -> dict:
    from django.core.cache import caches

    from memory_core.cache_backends import counter_cache_alias

    if not _rate_limits_set():
        return {"ok": True, "used": False}
    backend = caches[counter_cache_alias()]
    try:
        # As ``api.throttling.counter_add`` counts: incr, or add when the counter is new.
        try:
            backend.incr(READYZ_COUNTER)
        except ValueError:
            backend.add(READYZ_COUNTER, 1, timeout=READYZ_COUNTER_SECONDS)
        backend.touch(READYZ_COUNTER, READYZ_COUNTER_SECONDS)
    except Exception as exc:  # Redis down or hung, full, a folder that cannot be written
        logger.warning("readiness: the rate limits' cache is unavailable: %s", exc)
        return {"ok": False, "code": "cache_unavailable"}
    return {"ok": True}


def _embedding_model() -> dict:
    # Made is not loaded: an embedder whose weights fail their check is made, and never loads.
    # Only asked of one already made: the probe must not make one (nor load the model).
    # ``loaded`` is the packaged embedder's; a backend without it (MEMLEDGER_EMBEDDER_BACKEND
    # needs only the ``Embedder`` protocol) is loaded once made: reading it unguarded made
    # every probe a 500 (stop 50's audit).
    made = get_embedder.cache_info().currsize > 0
    return {"ok": True, "loaded": made and bool(getattr(get_embedder(), "loaded", True))}


def readiness_check() -> Readiness:
    """Run the checks; ready when the database answers, takes writes, and the schema is this
    release's, and the rate limits' cache answers (when a rate limit or quota is set)."""
    checks = {"database": _database()}
    if checks["database"]["ok"]:
        try:
            checks["migrations"] = _migrations()
        except DatabaseError as exc:  # the server went away between the two checks
            logger.warning("readiness: could not read the applied migrations: %s", exc)
            checks["migrations"] = {"ok": False, "code": "database_unavailable"}
    else:
        checks["migrations"] = {"ok": False, "code": "not_checked"}
    checks["rate_limit_cache"] = _rate_limit_cache()
    checks["embedding_model"] = _embedding_model()
    return Readiness(ready=all(check["ok"] for check in checks.values()), checks=checks)


def readiness_forget() -> None:
    """Forget that the migrations were found applied (tests; a schema rolled back by hand)."""
    global _migrations_applied
    _migrations_applied = False
