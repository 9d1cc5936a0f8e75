"""What a tenant's deletion spends in each cache step: once a subject, against once a tenant.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python \
        scripts/tenant_cache_invalidation_cost.py [--subjects 66000] \
        [--redis redis://127.0.0.1:6379] [--json OUT]

A tenant's deletion has two cache steps (``retrieval_cache``, ``summaries``: the
``memory_core.deletion.stores._CacheStore`` pair), each a purge and a verification. Until
stop 49 each invalidated and then checked the generation of every subject of the tenant
(``retrieval_cache.subject_invalidate``, ``subject_invalidated``); now it bumps and
checks the tenant's generation once (``tenant_invalidate``, ``tenant_invalidated``).
This runs both ways for one step of a tenant of ``--subjects`` subjects, on memledger's
locking file cache (in a fresh temporary folder, 5,000 entries at most as configured) and,
with ``--redis``, on Django's Redis cache; then checks that an entry cached before either
is unreachable after it. Prints the seconds of each.
"""

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import at_least  # noqa: E402


def per_subject(retrieval_cache, tenant_id, subject_ids) -> float:
    started = time.perf_counter()
    written = {
        subject_id: retrieval_cache.subject_invalidate(tenant_id=tenant_id, subject_id=subject_id)[
            "generation"
        ]
        for subject_id in subject_ids
    }
    stale = [
        subject_id
        for subject_id in subject_ids
        if not retrieval_cache.subject_invalidated(
            tenant_id=tenant_id, subject_id=subject_id, generation=written[subject_id]
        )
    ]
    if stale:
        raise SystemExit(f"{len(stale)} subjects were not invalidated")
    return time.perf_counter() - started


def per_tenant(retrieval_cache, tenant_id) -> float:
    started = time.perf_counter()
    written = retrieval_cache.tenant_invalidate(tenant_id=tenant_id)["generation"]
    if not retrieval_cache.tenant_invalidated(tenant_id=tenant_id, generation=written):
        raise SystemExit("the tenant was not invalidated")
    return time.perf_counter() - started


def unreachable_after(retrieval_cache, invalidate) -> bool:
    """Whether an entry cached before ``invalidate(tenant_id, subject_id)`` is gone after."""
    from django.core.cache import cache

    from memory_core.rls import tenant_scope

    tenant_id, subject_id = uuid.uuid4(), uuid.uuid4()
    place = {"tenant_id": tenant_id, "subject_id": subject_id, "key": "probe"}
    retrieval_cache.cache_set(**place, value="cached", memory_ids=[])
    entry = retrieval_cache._entry_key("retrieval", tenant_id, subject_id, "probe")
    with tenant_scope(tenant_id):
        before = retrieval_cache.cache_get(**place)
        invalidate(tenant_id, subject_id)
        after = retrieval_cache.cache_get(**place)
    cache.delete_many(
        [
            entry,
            retrieval_cache._generation_key("retrieval", tenant_id, subject_id),
            retrieval_cache._tenant_generation_key("retrieval", tenant_id),
        ]
    )
    return before == "cached" and after is None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=at_least(1), default=66000)
    parser.add_argument("--redis", help="a Redis URL to measure Django's Redis cache too")
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.test import override_settings

    from memory_core import retrieval_cache

    backends = {
        "locking file cache": {
            "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
            "LOCATION": tempfile.mkdtemp(prefix="memledger-tenant-cache-"),
            "OPTIONS": {"MAX_ENTRIES": 5000},
        }
    }
    if opts.redis:
        backends["redis"] = {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": opts.redis,
        }
    report = {"subjects": opts.subjects, "seconds_per_step": {}}
    subject_ids = [uuid.uuid4() for _ in range(opts.subjects)]
    for name, backend in backends.items():
        with override_settings(CACHES={"default": backend}):
            tenant_id = uuid.uuid4()
            subjects = per_subject(retrieval_cache, tenant_id, subject_ids)
            tenant = per_tenant(retrieval_cache, tenant_id)
            # The generations this left (kept a week otherwise: on Redis, the machine's).
            from django.core.cache import cache

            cache.delete_many(
                [retrieval_cache._generation_key("retrieval", tenant_id, s) for s in subject_ids]
                + [retrieval_cache._tenant_generation_key("retrieval", tenant_id)]
            )
            held = unreachable_after(
                retrieval_cache,
                lambda t, s: retrieval_cache.tenant_invalidate(tenant_id=t),
            ) and unreachable_after(
                retrieval_cache,
                lambda t, s: retrieval_cache.subject_invalidate(tenant_id=t, subject_id=s),
            )
        report["seconds_per_step"][name] = {
            "once_a_subject": round(subjects, 3),
            "once_a_tenant": round(tenant, 6),
            "an_entry_cached_before_is_unreachable_after": held,
        }
        print(
            f"{name}: {subjects:.2f} s once a subject, {tenant * 1000:.2f} ms once a tenant "
            f"({opts.subjects:,} subjects); an entry cached before is unreachable after: {held}"
        )
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return (
        0
        if all(
            v["an_entry_cached_before_is_unreachable_after"]
            for v in report["seconds_per_step"].values()
        )
        else 1
    )


if __name__ == "__main__":
    raise SystemExit(main())
