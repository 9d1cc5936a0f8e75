"""Broker down: writes and deletes are still accepted; the sweep completes the deletes later.

A web process whose broker is unreachable (nothing listens on port 1) takes a write (admission
and embedding run in the request, nothing is queued) and a delete (the operation row is the
truth; the on-commit send fails and is logged). Once the broker is back, the beat sweep
re-drives the operation. tests/deletion/test_worker.py drives the same recovery through a
real Celery worker (``test_broker_unreachable_at_request_then_the_sweep_completes_it``).
"""

import json
import logging
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from redis.exceptions import OutOfMemoryError

import memory_core.tasks as tasks
from memory_core.deletion import services
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.sweep import deletion_sweep
from memory_core.models import DeletionOperation, Memory, Status
from tests.factories import MemoryFactory
from tests.processes import run_manage

PROBE = r"""
import json
from django.test import Client
client = Client(HTTP_AUTHORIZATION="Bearer " + KEY)
write = client.post("/api/v1/memories", data={
    "subject": "user-1", "memory_type": "user_preference", "memory_key": "style.answers",
    "scope": "global", "content": "User prefers concise technical answers.",
    "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
}, content_type="application/json")
memory_id = write.json().get("memory", {}).get("id")
delete = client.delete(f"/api/v1/memories/{memory_id}")
print("RESULTS" + json.dumps({"write": [write.status_code, write.json()],
                              "delete": [delete.status_code, delete.json()]}))
"""


@pytest.mark.django_db(transaction=True)
def test_writes_and_deletes_are_accepted_while_the_broker_is_down(api_key):
    result = run_manage(
        "shell",
        "-c",
        f"KEY = {api_key!r}\n" + PROBE,
        timeout=180,
        MEMLEDGER_DB_NAME=connection.settings_dict["NAME"],
        CELERY_BROKER_URL="redis://127.0.0.1:1/0",
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULTS"))
    outcome = json.loads(line[len("RESULTS") :])
    write_status, write_body = outcome["write"]
    assert write_status == 201, write_body
    delete_status, delete_body = outcome["delete"]
    assert delete_status == 202, delete_body
    # The write was complete at once (embedded in the request); the delete scrubbed the
    # primary row in its own request, so it stopped being retrievable there and then.
    assert write_body["memory"]["has_embedding"] is True
    memory = Memory.objects.get(pk=write_body["memory"]["id"])
    assert memory.status == Status.DELETED and memory.content == ""
    operation = DeletionOperation.objects.get(pk=delete_body["operation_id"])
    assert operation.status == DeletionOperation.State.PENDING

    # The broker is back: beat's sweep re-drives it (here run in-process, like the worker).
    DeletionOperation.objects.filter(pk=operation.pk).update(
        requested_at=timezone.now() - timedelta(minutes=5)
    )
    assert str(operation.pk) in deletion_sweep(stale_seconds=60)
    assert deletion_run(operation_id=operation.pk) == DeletionOperation.State.COMPLETED


DELETE_PROBE = r"""
import json, time
from django.test import Client
client = Client(HTTP_AUTHORIZATION="Bearer " + KEY)
started = time.monotonic()
delete = client.delete(f"/api/v1/memories/{MEMORY_ID}")
print("RESULTS" + json.dumps({"delete": [delete.status_code, delete.json()],
                              "seconds": time.monotonic() - started}))
"""


@pytest.fixture
def silent_broker():
    """A "Redis" that accepts connections and never answers (stopped by SIGSTOP, half-open).

    The kernel completes the handshakes of a listening socket's backlog; nothing ever reads
    from or writes to them.
    """
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"redis://127.0.0.1:{sock.getsockname()[1]}/0"


@pytest.mark.django_db(transaction=True)
def test_a_delete_answers_at_once_when_the_broker_accepts_and_never_replies(
    api_key, agent, subject, silent_broker
):
    """The on-commit send times out (REDIS_TIMEOUT_SECONDS) instead of waiting forever: the
    request answers 202 well inside gunicorn's 30 s, and the operation is left to the sweep."""
    memory = MemoryFactory(tenant=subject.tenant, subject=subject)
    result = run_manage(
        "shell",
        "-c",
        f"KEY = {api_key!r}\nMEMORY_ID = {str(memory.pk)!r}\n" + DELETE_PROBE,
        timeout=30,
        MEMLEDGER_DB_NAME=connection.settings_dict["NAME"],
        CELERY_BROKER_URL=silent_broker,
        REDIS_TIMEOUT_SECONDS="1",
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULTS"))
    outcome = json.loads(line[len("RESULTS") :])
    status, body = outcome["delete"]
    assert status == 202, body
    assert outcome["seconds"] < 10, outcome
    operation = DeletionOperation.objects.get(pk=body["operation_id"])
    assert operation.status == DeletionOperation.State.PENDING
    assert "broker unavailable, left to the sweep" in result.stderr


REFUSED = "command not allowed when used memory > 'maxmemory'."


@pytest.mark.parametrize(
    "enqueue", [services.deletion_enqueue, services.subject_deletion_enqueue], ids=["op", "queued"]
)
def test_a_send_the_broker_refuses_is_logged_with_its_cause(enqueue, monkeypatch, caplog):
    """Stop 64's audit of failures: a send the broker refused was logged "broker unavailable,
    left to the sweep" and nothing more. A broker that answers PING and refuses every message
    (Redis out of memory under ``maxmemory-policy noeviction``, a wrong password or ACL, a
    full disk under the filesystem broker) left every deletion pending, the web process's
    and the sweep's sends alike, with a log line repeated each round that named no cause.
    The line names the error now, its traceback beside it."""

    def refused(task, *args, **options):
        raise OutOfMemoryError(REFUSED)

    monkeypatch.setattr(tasks, "send", refused)
    monkeypatch.setattr(services, "_broker_down_until", 0.0)
    with caplog.at_level(logging.WARNING, logger="memory_core.deletion.services"):
        assert enqueue(uuid.uuid4()) is False  # left to the sweep, as documented
    [record] = [r for r in caplog.records if "left to the sweep" in r.getMessage()]
    assert f"OutOfMemoryError: {REFUSED}" in record.getMessage()
    assert record.exc_info and record.exc_info[0] is OutOfMemoryError
