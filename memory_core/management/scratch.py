"""Work that leaves nothing behind: the worlds fuzzers and hunts plant, then throw away."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import transaction

T = TypeVar("T")


class _Discard(Exception):
    pass


def rolled_back(work: Callable[[], T], *, keep: bool = False) -> T:
    """Return ``work()``, run in one transaction that is then rolled back (committed if
    ``keep``): whatever it planted, and whatever its requests wrote, is gone."""
    result = None
    try:
        with transaction.atomic():
            result = work()
            if not keep:
                raise _Discard
    except _Discard:
        pass
    return result
