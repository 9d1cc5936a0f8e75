"""Work run once a transaction commits, which never fails what committed.

Django's ``on_commit(..., robust=True)`` logs and swallows any exception a hook raises,
Celery's ``SoftTimeLimitExceeded`` included: a task whose time ran out while a hook appended
its journal line (the retention sweep commits one deletion a subject) went on into the hard
kill (stop 61's review). ``after_commit`` is as robust but lets the task's time run out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction

logger = logging.getLogger(__name__)


def after_commit(hook: Callable[[], object]) -> None:
    """Run ``hook`` once the current transaction commits (at once outside one); an exception
    it raises is logged, never raised, but for the task's soft time limit."""
    transaction.on_commit(lambda: _run(hook))


def _run(hook: Callable[[], object]) -> None:
    try:
        hook()
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception("the after-commit work %r failed", hook)
