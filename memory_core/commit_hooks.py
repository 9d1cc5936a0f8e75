"""Work run once a transaction commits, which never fails what committed.

Django's ``on_commit(..., robust=True)`` logs and swallows any exception a hook raises,
Celery's ``SoftTimeLimitExceeded`` included: a task whose time ran out while a hook appended
its journal line (the retention sweep commits one deletion a subject) went on into the hard
kill (stop 61's review). ``after_commit`` is as robust but lets the task's time run out.

A hook registered while a web request runs waits for a lock as long as the request may
(``MEMLEDGER_REQUEST_LOCK_TIMEOUT``, ``rls.request_lock_scope``): the database's and the
deletion journal's file lock. It runs in the request, before its answer, after the
request's own ``lock_timeout`` ended with its transaction. Unbounded, a revoke's record
waited for a whole tenant's deletion that took the row as the revoke committed, until
gunicorn killed the worker (stop 64's audit of failures), and its journal line for a prune
holding the journal (stop 64's review). A hook registered in a Celery task or a command is
not bounded by this; one may bound itself (``services.conflicts._heal_after_commit``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextvars import ContextVar

from celery.exceptions import SoftTimeLimitExceeded
from django.core.signals import request_finished, request_started
from django.db import transaction
from django.dispatch import receiver

from memory_core.rls import request_lock_scope

logger = logging.getLogger(__name__)

# Whether this thread serves a web request now (Django's request_started to request_finished).
_in_request: ContextVar[bool] = ContextVar("memledger_in_request", default=False)


# Set and set back, not reset by a token: the two receivers share no frame to carry it.
@receiver(request_started)
def _request_started(**kwargs) -> None:
    _in_request.set(True)


@receiver(request_finished)
def _request_finished(**kwargs) -> None:
    _in_request.set(False)


def after_commit(hook: Callable[[], object]) -> None:
    """Run ``hook`` once the current transaction commits (at once outside one); an exception
    it raises is logged, never raised, but for the task's soft time limit. Registered in a
    web request, its lock waits are bounded as the request's were (``LockNotAvailable``,
    logged: the deletion sweep does what it could not)."""
    bounded = _in_request.get()
    transaction.on_commit(lambda: _run(hook, bounded=bounded))


def _run(hook: Callable[[], object], *, bounded: bool) -> None:
    try:
        with request_lock_scope() if bounded else contextlib.nullcontext():
            hook()
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception("the after-commit work %r failed", hook)
