"""The default cache without Redis: counters that lose no counts across processes, entries
that keep their expiry when counted, and culling that drops expired entries first."""

import multiprocessing
import time

import pytest
from django.core.cache.backends.filebased import FileBasedCache

from memory_core.cache_backends import LockingFileBasedCache, read_expiry

PROCESSES = 4
INCREMENTS = 300


def _count(backend_class, location: str, key: str, start) -> None:
    cache = backend_class(location, {})
    start.wait(timeout=60)  # all at once, not one after another
    for _ in range(INCREMENTS):
        cache.add(key, 0, 3600)
        cache.incr(key)


def _race(backend_class, location: str) -> int:
    context = multiprocessing.get_context("fork")
    start = context.Barrier(PROCESSES)
    workers = [
        context.Process(target=_count, args=(backend_class, location, "counter", start))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    return backend_class(location, {}).get("counter")


def test_processes_counting_at_once_lose_no_count(tmp_path):
    assert _race(LockingFileBasedCache, str(tmp_path / "locking")) == PROCESSES * INCREMENTS


def test_djangos_file_cache_loses_counts_there(tmp_path):
    """The reason for the class above (if Django's ever stops losing them, drop ours)."""
    assert _race(FileBasedCache, str(tmp_path / "django")) < PROCESSES * INCREMENTS


def _expiry(cache, key) -> float:
    with open(cache._key_to_file(key), "rb") as handle:
        return read_expiry(handle)


def test_a_counted_entry_keeps_its_expiry(tmp_path):
    cache = LockingFileBasedCache(str(tmp_path), {})
    cache.add("window", 0, 86400)
    expiry = _expiry(cache, "window")
    assert cache.incr("window", 5) == 5
    assert cache.decr("window", 2) == 3
    assert _expiry(cache, "window") == expiry  # Django's incr would set 300 s
    with pytest.raises(ValueError):
        cache.incr("missing")


def test_culling_drops_expired_entries_before_live_ones(tmp_path):
    cache = LockingFileBasedCache(str(tmp_path), {"OPTIONS": {"MAX_ENTRIES": 10}})
    for index in range(6):
        cache.set(f"old-{index}", index, 1)
    for index in range(4):
        cache.set(f"live-{index}", index, 3600)
    time.sleep(1.1)
    cache.set("one-more", 1, 3600)  # the cache is full: culled first
    assert [cache.get(f"live-{index}") for index in range(4)] == [0, 1, 2, 3]
    assert cache.get("one-more") == 1
    assert len(cache._list_cache_files()) == 5
