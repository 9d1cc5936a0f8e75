"""The retries' backoff, one for all: Celery's automatic retries of every task
(``tasks.COMMON``), the retry a memory task raises itself (``tasks.MemoryTask``) and the wait
of a deletion a run left partial (``deletion.runner``). 2 s, doubling with each retry, at
most 300 s (docs/operations.md)."""

from __future__ import annotations

from celery.utils.time import get_exponential_backoff_interval

FACTOR = 2  # seconds before the first retry
MAXIMUM = 300  # seconds: the longest wait between two runs


def backoff(retries: int, *, full_jitter: bool = True) -> int:
    """Return the seconds before the retry that follows ``retries`` earlier ones: ``FACTOR``
    doubling with each, at most ``MAXIMUM``; with ``full_jitter`` (Celery's), any whole
    number of seconds from 0 to that."""
    return get_exponential_backoff_interval(
        factor=FACTOR, retries=retries, maximum=MAXIMUM, full_jitter=full_jitter
    )
