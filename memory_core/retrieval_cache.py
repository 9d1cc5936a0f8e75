"""A small cache for derived reads of one subject's memories (retrieval packages, summaries).

Every entry lives under its subject's *generation*: keys embed the current generation, so
bumping it makes every older entry unreachable at once, whatever backend holds them (file
cache locally, Redis in production). Deletion bumps the generation of every subject it touches
(the ``retrieval_cache`` and ``summaries`` stores of ``memory_core.deletion``).

Generations are nanosecond timestamps, not counters: if the generation key itself is evicted
or the cache is cleared, the next value is new and never revives an old entry. Entries also
carry the memory ids they were built from; a read that finds any of them in the tombstone
ledger is a miss, so a cache never serves a memory after its deletion even between the
deletion's commit and its cache step.

Namespaces: ``retrieval`` (packages the read path may cache) and ``summary`` (per-subject
digests). No request path caches anything here yet; the deletion steps invalidate both, so a
cache added later is covered by deletion from its first entry (docs/operations.md).
"""

from __future__ import annotations

import hashlib
import time

from django.core.cache import cache

NAMESPACES = ("retrieval", "summary")
_FOREVER = None


def _generation_key(namespace: str, tenant_id, subject_id) -> str:
    return f"memledger:gen:{namespace}:{tenant_id}:{subject_id}"


def subject_generation(*, tenant_id, subject_id, namespace: str = "retrieval") -> int:
    """Return the subject's current generation in ``namespace``, creating one if missing."""
    key = _generation_key(namespace, tenant_id, subject_id)
    generation = cache.get(key)
    if generation is None:
        generation = time.time_ns()
        # add() keeps a concurrent writer's value if it got there first.
        if not cache.add(key, generation, timeout=_FOREVER):
            generation = cache.get(key, generation)
    return generation


def _entry_key(namespace: str, tenant_id, subject_id, key: str) -> str:
    generation = subject_generation(tenant_id=tenant_id, subject_id=subject_id, namespace=namespace)
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"memledger:{namespace}:{tenant_id}:{subject_id}:g{generation}:{digest}"


def cache_get(*, tenant_id, subject_id, key: str, namespace: str = "retrieval"):
    """Return the cached value for ``key``, or None (missing, invalidated, or citing a deletion)."""
    from memory_core.models import Tombstone

    entry = cache.get(_entry_key(namespace, tenant_id, subject_id, key))
    if entry is None:
        return None
    memory_ids = entry.get("memory_ids") or []
    if memory_ids and Tombstone.objects.filter(memory_id__in_array=memory_ids).exists():
        return None
    return entry["value"]


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
    """Cache ``value`` (built from ``memory_ids``) for the subject's current generation."""
    cache.set(
        _entry_key(namespace, tenant_id, subject_id, key),
        {"value": value, "memory_ids": [str(memory_id) for memory_id in memory_ids]},
        timeout=timeout,
    )


def subject_invalidate(*, tenant_id, subject_id, namespace: str = "retrieval") -> dict:
    """Make every cached entry of the subject in ``namespace`` unreachable; return evidence.

    The new generation is the current time in nanoseconds, so it also says when the subject
    was last invalidated.
    """
    key = _generation_key(namespace, tenant_id, subject_id)
    before = cache.get(key)
    generation = max(time.time_ns(), (before or 0) + 1)
    cache.set(key, generation, timeout=_FOREVER)
    return {"generation_before": before, "generation": generation}


def subject_invalidated_since(*, tenant_id, subject_id, moment, namespace: str = "retrieval"):
    """Return whether the subject's generation in ``namespace`` started at or after ``moment``.

    True means no entry written before ``moment`` is reachable any more. A missing generation
    key (evicted, culled, cache cleared) counts too: the next read starts a generation that was
    never used before, so no older entry can be found.
    """
    generation = cache.get(_generation_key(namespace, tenant_id, subject_id))
    return generation is None or generation >= int(moment.timestamp() * 1_000_000_000)
