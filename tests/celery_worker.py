"""A real Celery worker for tests: a subprocess on its own queue, using the test database.

Use the ``celery_worker`` fixture in tests marked ``@pytest.mark.django_db(transaction=True)``
(the worker is another process: it only sees committed rows). Import it into a conftest or a
test module::

    from tests.celery_worker import celery_session_worker, celery_worker  # noqa: F401

The worker is started once per test session on a queue of its own (``test-<pid>-<random>``,
set on both sides: ``MEMLEDGER_CELERY_QUEUE`` for the worker, ``CELERY_TASK_DEFAULT_QUEUE`` for
the producer) on the broker of ``CELERY_BROKER_URL`` (Redis in CI; locally kombu's filesystem
transport, in a folder per test database). It is stopped at the end of the session; a test
that kills it gets a fresh one. ``start_worker`` starts an extra one (e.g. with fault
injection) that the caller stops.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from django.db import connection

from memory_core.deletion.worker import WorkerProcess


def unique_queue(prefix: str = "test") -> str:
    return f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def start_worker(*, queue: str, env: dict | None = None, concurrency: int = 1) -> WorkerProcess:
    """Start a worker on ``queue`` against the test database; the caller stops it."""
    return WorkerProcess(
        db_name=connection.settings_dict["NAME"],
        queue=queue,
        concurrency=concurrency,
        env={"DJANGO_SETTINGS_MODULE": "config.settings.test", **(env or {})},
        settings_module="config.settings.test",
    ).start()


@pytest.fixture(scope="session")
def celery_session_worker(django_db_setup, django_db_blocker):
    """One worker for the whole session, on a queue of its own."""
    worker = start_worker(queue=unique_queue())
    yield worker
    worker.stop()
    worker.purge()


@pytest.fixture
def celery_worker(celery_session_worker, settings):
    """The session's worker, alive, with this process sending to its queue."""
    if not celery_session_worker.alive():
        celery_session_worker.start()
    settings.CELERY_TASK_DEFAULT_QUEUE = celery_session_worker.queue
    return celery_session_worker


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.1, message: str = ""):
    """Poll ``predicate`` until it returns a truthy value; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {message or predicate}")
