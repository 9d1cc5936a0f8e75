"""A request id on every answer and on every log line written for the request, tasks too.

An operator who gets "the API answered 500 at 14:02" needs the one log line that says why;
an agent's developer needs something to quote. Each request gets an id: the proxy's
``X-Request-ID`` when it sends one that is safe to log (1 to 128 of ``A-Z a-z 0-9 . _ : -``),
else a new one (32 hex digits). It is answered in ``X-Request-ID``, carried in the details of
a 500's JSON body (``api.middleware.server_error``), and added to each log record as
``request_id`` by ``RequestIdLogFilter`` ("-" outside a request: commands, the beat's tasks).

A Celery task sent while a request runs (a deletion's run, sent as the request commits)
carries the id in a message header (``memledger_request_id``) and runs under it, so the
worker's log lines of that run name the request that asked for it.
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid

from celery.signals import before_task_publish, task_postrun, task_prerun
from django.core.signals import request_finished
from django.dispatch import receiver

HEADER = "X-Request-ID"
TASK_HEADER = "memledger_request_id"
_SAFE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_current: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def current_request_id() -> str:
    """Return the id of the request this code runs for ("-" outside a request)."""
    return _current.get()


def _incoming_or_new(value: str | None) -> str:
    # A proxy's id is kept only when it cannot forge a log line or a header.
    if value and _SAFE.fullmatch(value):
        return value
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """Give the request its id until its answer is sent, and answer it in ``X-Request-ID``.

    The id outlives this middleware on purpose: Django logs a 4xx or 5xx answer
    (``django.request``) after the middleware chain has returned. ``request_finished``, sent
    once the answer is out, clears it.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = _incoming_or_new(request.headers.get(HEADER))
        _current.set(request.request_id)
        response = self.get_response(request)
        response[HEADER] = request.request_id
        return response


@receiver(request_finished)
def _request_id_clear(**kwargs) -> None:
    _current.set("-")


class RequestIdLogFilter(logging.Filter):
    """Add ``request_id`` to every record (the log format prints it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get()
        return True


@before_task_publish.connect
def _request_id_to_task(headers=None, **kwargs) -> None:
    request_id = _current.get()
    if headers is not None and request_id != "-":
        headers.setdefault(TASK_HEADER, request_id)


@task_prerun.connect
def _request_id_from_task(task=None, **kwargs) -> None:
    request_id = getattr(task.request, TASK_HEADER, None) if task is not None else None
    _current.set(request_id if isinstance(request_id, str) and _SAFE.fullmatch(request_id) else "-")


@task_postrun.connect
def _request_id_after_task(**kwargs) -> None:
    _current.set("-")
