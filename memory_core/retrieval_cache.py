"""A small cache for derived reads of one subject's memories (retrieval packages, summaries).

Every entry lives under its subject's *generation* and its tenant's: keys embed both, so
bumping either makes every older entry unreachable at once, whatever backend holds them (file
cache locally, Redis in production). Deletion bumps the generation of every subject it touches
(the ``retrieval_cache`` and ``summaries`` stores of ``memory_core.deletion``), and a tenant's
deletion the tenant's alone: once a subject, a tenant of 66,000 subjects took ~45 s a store,
and one of ~200,000 would have passed the task's time limit (stop 48's audit).

Generations are nanosecond timestamps, not counters: if the generation key itself is evicted
or the cache is cleared, the next value is new and never revives an old entry. A bump writes
a greater value than the one it replaces, whatever the host's clock says, and two bumps of
one key take turns (a database lock: ``_one_bump_at_a_time``), so a deletion's
verification checks that the generation its purge wrote, or a greater one, is in place
(``subject_invalidated``): never a clock against another host's (until stop 63 it compared
the worker's generation with the web host's ``requested_at``, and a worker a second behind
left both cache steps failed until its clock caught up). Entries also
carry the memory ids they were built from; a read that finds any of them in the tombstone
ledger is a miss, so a cache never serves a memory after its deletion even between the
deletion's commit and its cache step (or while a cache that was down has not had that step
yet). The check fails closed: a connection that does not act for the entry's tenant (no
tenant set, another tenant: row-level security would hide the ledger) reads a miss, and so
does an entry of a subject whose deletion (the whole subject's or a key's) is queued.

A cache backend that fails (Redis down, a full cache folder) is a miss on read and keeps
nothing on write, logged: the caller builds the value again. Only the deletion steps
(``subject_invalidate``, ``subject_invalidated``) let the error through, so that the
step fails and is retried instead of being verified.

Namespaces: ``retrieval`` (packages the read path may cache) and ``summary`` (per-subject
digests). No request path caches anything here yet; the deletion steps invalidate both, so a
cache added later is unreachable after a deletion from its first entry (docs/operations.md).
Two things a path that starts caching content here must add first (a review found both; each
is harmless while nothing is cached):

- invalidation on every other change that makes a cached package wrong: a revoke, a
  correction, a review's decision, a task's close, a policy published, an agent's grant set.
  Only deletion bumps a generation, and an entry's check reads the tombstones and the
  subject's queued deletion only;
- removal of the bytes: bumping a generation makes the older entries unreachable, not gone.
  The file cache keeps them on disk until they are read past their timeout or culled, so
  entries holding content must be deleted by the deletion step (a per-generation list of
  keys), or hold ids and hashes only.
"""

from __future__ import annotations

import hashlib
import logging
import time
from contextlib import contextmanager

from django.core.cache import cache
from django.db import connection

from memory_core.rls import PLATFORM_SETTING, TENANT_SETTING

logger = logging.getLogger(__name__)

# A generation key lives this long after its last set. A missing generation is always safe
# (the next read starts a new one, so no older entry can be found), so it need only outlive
# the entries written under it to keep them reachable; kept forever, one per subject a
# deletion ever touched, they filled the cache.
GENERATION_SECONDS = 7 * 24 * 3600


def _generation_key(namespace: str, tenant_id, subject_id) -> str:
    return f"memledger:gen:{namespace}:{tenant_id}:{subject_id}"


def _tenant_generation_key(namespace: str, tenant_id) -> str:
    return f"memledger:gen:{namespace}:{tenant_id}"


def _generations(keys: list[str]) -> list[int]:
    """Return the current generation of each of ``keys`` (one read), creating the missing."""
    found = cache.get_many(keys)
    generations = []
    for key in keys:
        generation = found.get(key)
        if generation is None:
            generation = time.time_ns()
            # add() keeps a concurrent writer's value if it got there first.
            if not cache.add(key, generation, timeout=GENERATION_SECONDS):
                generation = cache.get(key, generation)
        generations.append(generation)
    return generations


def _entry_key(namespace: str, tenant_id, subject_id, key: str) -> str:
    tenant, subject = _generations(
        [
            _tenant_generation_key(namespace, tenant_id),
            _generation_key(namespace, tenant_id, subject_id),
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"memledger:{namespace}:{tenant_id}:{subject_id}:t{tenant}:g{subject}:{digest}"


def cache_get(*, tenant_id, subject_id, key: str, namespace: str = "retrieval"):
    """Return the cached value for ``key``, or None: missing, invalidated, citing a deletion,
    of a subject whose deletion is queued, or unreadable (the cache is down: a miss, never an
    error, since the caller can always build the value again)."""
    try:
        entry = cache.get(_entry_key(namespace, tenant_id, subject_id, key))
    except Exception:  # Redis down, a full or unreadable cache folder: read as a miss
        logger.warning("cache read failed; treated as a miss", exc_info=True)
        return None
    if entry is None:
        return None
    memory_ids = [str(memory_id) for memory_id in entry.get("memory_ids") or []]
    if not _entry_may_be_served(tenant_id, subject_id, memory_ids):
        return None
    return entry["value"]


# One round trip: whether this connection sees the tenant's rows at all (row-level security:
# its tenant, or platform mode; otherwise the ledger would look empty and every entry would
# pass), whether any memory the entry was built from is in the ledger, and whether a
# deletion of the subject (the whole subject's or a key's) is queued (its memories are not
# tombstoned yet, but none may be handed out from the ask on: docs/retrieval.md, stage 2).
_SERVABLE_SQL = """
    SELECT coalesce(current_setting(%(tenant_setting)s, true), '') = %(tenant)s
           OR (coalesce(current_setting(%(tenant_setting)s, true), '') = ''
               AND coalesce(current_setting(%(platform_setting)s, true), '') = 'on'),
           EXISTS (SELECT 1 FROM memory_core_tombstone
                   WHERE memory_id = ANY(%(ids)s::uuid[])),
           EXISTS (SELECT 1 FROM memory_core_subject
                   WHERE id = %(subject)s::uuid AND tenant_id = %(tenant)s::uuid
                     AND deletion_queued_at IS NOT NULL)
"""


def _entry_may_be_served(tenant_id, subject_id, memory_ids: list[str]) -> bool:
    """Whether an entry of the subject built from ``memory_ids`` may still be served.

    Fails closed: a connection that cannot see the tenant's tombstones serves nothing.
    """
    params = {
        "tenant": str(tenant_id),
        "subject": str(subject_id),
        "ids": memory_ids,
        "tenant_setting": TENANT_SETTING,
        "platform_setting": PLATFORM_SETTING,
    }
    with connection.cursor() as cursor:
        cursor.execute(_SERVABLE_SQL, params)
        sees_tenant, deleted, queued = cursor.fetchone()
    return sees_tenant and not deleted and not queued


def cache_set(
    *,
    tenant_id,
    subject_id,
    key: str,
    value,
    memory_ids,
    namespace: str = "retrieval",
    timeout: int = 300,
) -> None:
    """Cache ``value`` (built from ``memory_ids``) for the subject's current generation.

    A cache that is down keeps nothing (logged): the value is simply built again next time.
    """
    try:
        cache.set(
            _entry_key(namespace, tenant_id, subject_id, key),
            {"value": value, "memory_ids": [str(memory_id) for memory_id in memory_ids]},
            timeout=timeout,
        )
    except Exception:  # Redis down, a full or unreadable cache folder
        logger.warning("cache write failed; nothing cached", exc_info=True)


def subject_invalidate(*, tenant_id, subject_id, namespace: str = "retrieval") -> dict:
    """Make every cached entry of the subject in ``namespace`` unreachable; return evidence:
    the generation before and the one written, which ``subject_invalidated`` checks."""
    return _bump(_generation_key(namespace, tenant_id, subject_id))


def subject_invalidated(*, tenant_id, subject_id, generation: int, namespace: str = "retrieval"):
    """Return whether the invalidation that wrote ``generation`` (``subject_invalidate``'s)
    still holds for the subject in ``namespace``: its generation is that one or a later
    bump's, so no entry written before the invalidation is reachable.

    A missing generation key (evicted, culled, cache cleared) counts too: the next read starts
    a generation that was never used before, so no older entry can be found. An older value
    (a cache restored from a snapshot) does not.
    """
    current = cache.get(_generation_key(namespace, tenant_id, subject_id))
    return _holds(current, generation)


def tenant_invalidate(*, tenant_id, namespace: str = "retrieval") -> dict:
    """Make every cached entry of every subject of the tenant in ``namespace`` unreachable
    (one write, whatever the tenant holds); return evidence, as ``subject_invalidate``."""
    return _bump(_tenant_generation_key(namespace, tenant_id))


def tenant_invalidated(*, tenant_id, generation: int, namespace: str = "retrieval") -> bool:
    """Return whether the invalidation that wrote ``generation`` (``tenant_invalidate``'s)
    still holds (``subject_invalidated``'s rule, for every subject of the tenant at once)."""
    return _holds(cache.get(_tenant_generation_key(namespace, tenant_id)), generation)


def _bump(key: str) -> dict:
    """Set the generation at ``key`` to a new one; return it with the one before.

    The new one is the current time in nanoseconds or, on a host whose clock is behind the
    one that wrote the generation before, that one plus one: greater than every value the key
    held, which ``_holds`` relies upon. Bumps of one key take turns (``_one_bump_at_a_time``).
    """
    with _one_bump_at_a_time(key):
        before = cache.get(key)
        generation = max(time.time_ns(), (before or 0) + 1)
        cache.set(key, generation, timeout=GENERATION_SECONDS)
    return {"generation_before": before, "generation": generation}


@contextmanager
def _one_bump_at_a_time(key: str):
    """Hold a PostgreSQL session advisory lock named by ``key`` while the block runs.

    Two deletions of one subject at once (every host's worker shares the database, not always
    a cache lock) both read the generation before either wrote, and the one that read the
    clock first wrote last, a smaller value: the other's verification failed, "verification
    found residue", until its next run (stop 65's CI). Taking turns, the second reads the
    first's value and writes a greater one. Stop 65 let any value above the one a bump
    replaced hold instead, and so an older generation put back too (a snapshot restored over
    a value a host whose clock was behind had started: stop 66's review). Let go as the bump
    ends, not at the commit: a deletion's phase bumps several keys in one transaction, and
    two holding them to its end could wait for each other.
    """
    name = f"memledger.cache-generation:{key}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [name])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [name])


def _holds(current: int | None, generation: int) -> bool:
    # A smaller value is an older generation put back (a cache restored from a snapshot) or,
    # rarely, one a reader on a host whose clock is behind started after the key was evicted:
    # the step fails, and its next run bumps past it.
    return current is None or current >= generation
