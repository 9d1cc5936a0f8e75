"""The beat sweep: re-drives stuck operations, and two sweepers never pick the same one."""

import json
import time
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from memory_core.deletion.runner import deletion_retry_in
from memory_core.deletion.services import deletion_request
from memory_core.deletion.sweep import deletion_sweep
from memory_core.deletion.worker import WorkerProcess
from memory_core.models import DeletionOperation
from memory_core.rls import tenant_scope
from memory_core.tasks import DeletionIncomplete, deletion_run_task

pytestmark = pytest.mark.django_db(transaction=True)


def _conninfo():
    params = connection.get_connection_params()
    keep = ("host", "port", "user", "password", "dbname")
    return {k: v for k, v in params.items() if k in keep}


def test_sweep_skips_an_operation_another_sweeper_holds(private_queue, owner_principal, memories):
    first = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    second = deletion_request(principal=owner_principal, memory_id=memories[1].id)
    with psycopg.connect(**_conninfo()) as other:
        # Another beat scheduler (platform mode, like the sweep task: row-level security) is
        # in the middle of its round and holds the first row.
        other.execute("SELECT set_config('memledger.platform', 'on', false)")
        other.execute(
            "SELECT id FROM memory_core_deletionoperation WHERE id = %s FOR UPDATE", [first.id]
        )
        assert deletion_sweep(stale_seconds=0) == [str(second.id)]
    # Stamped when re-driven: the next round within the threshold leaves it alone.
    assert deletion_sweep(stale_seconds=60) == []
    assert DeletionOperation.objects.get(pk=second.id).last_attempt_at is not None


def test_sweep_ignores_completed_failed_and_fresh_operations(
    private_queue, owner_principal, memories
):
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert deletion_sweep(stale_seconds=60) == []  # just requested: not stuck yet
    DeletionOperation.objects.filter(pk=operation.id).update(status="failed")
    assert deletion_sweep(stale_seconds=0) == []


SWEEP_PROBE = r"""
import json, time
from memory_core.deletion.sweep import deletion_sweep
from memory_core.rls import platform_scope
started = time.monotonic()
with platform_scope("test: sweep"):
    redriven = deletion_sweep(stale_seconds=0)
print("RESULTS" + json.dumps({"redriven": redriven, "seconds": time.monotonic() - started}))
"""


def test_a_sweep_stops_sending_at_the_first_send_a_hung_broker_times_out(
    private_queue, owner_principal, memories
):
    """Each send to a broker that never answers costs its timeout: the sweep's sends stop at
    the first that fails (500 of them held the worker past its time limit), and the next
    sweep sends them all again."""
    operations = [
        deletion_request(principal=owner_principal, memory_id=memory.id) for memory in memories
    ]
    answer, result = _run_against_a_silent_broker(SWEEP_PROBE)
    assert sorted(answer["redriven"]) == sorted(str(operation.id) for operation in operations)
    assert result.stderr.count("broker unavailable, left to the sweep") == 1, result.stderr
    assert "2 sends left to the next sweep" in result.stderr


def _run_each_copy(operation, copies: int) -> list[str]:
    """Run the task of ``operation`` once for each of ``copies`` messages taken in turn, while
    a store fails (the evaluation volume not mounted yet); return each run's outcome."""
    from django.conf import settings

    configured = settings.MEMLEDGER_EVAL_DATA_DIRS
    settings.MEMLEDGER_EVAL_DATA_DIRS = ["/nonexistent/memledger-eval"]
    outcomes = []
    try:
        for _copy in range(copies):
            try:
                outcomes.append(deletion_run_task(str(operation.pk)))
            except DeletionIncomplete:
                outcomes.append("partial")
    finally:
        settings.MEMLEDGER_EVAL_DATA_DIRS = configured  # the volume is back
    return outcomes


def _queued_copies(queue: str) -> int:
    return WorkerProcess(db_name=connection.settings_dict["NAME"], queue=queue).purge()


def test_copies_the_sweep_sent_during_a_backlog_do_not_dead_letter_a_deletion_at_once(
    settings, private_queue, owner, owner_principal, memories
):
    """Stop 64's audit of failures: the sweep sends the task of an operation waiting in
    ``pending`` again each minute (workers down or behind), and every queued copy counted as a
    run. When the first ended partial (a store failing for a second), the others ran it again
    at once, each spending one of ``MEMLEDGER_DELETION_MAX_ATTEMPTS`` runs with no backoff
    between them: eight copies dead-lettered the deletion in 0.9 s, and the person's deletion
    waited for a reviewer's retry. A copy delivered before the operation's backoff ends
    (``next_run_at``) waits for it."""
    maximum = settings.MEMLEDGER_DELETION_MAX_ATTEMPTS
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    for _minute in range(maximum - 1):
        back = timezone.now() - timedelta(minutes=2)
        DeletionOperation.objects.filter(pk=operation.pk).update(
            requested_at=back, last_attempt_at=back
        )
        assert str(operation.pk) in deletion_sweep(stale_seconds=60)
    copies = _queued_copies(private_queue)
    assert copies == maximum, copies  # the request's message and the sweep's copies

    started = time.monotonic()
    outcomes = _run_each_copy(operation, copies)
    elapsed = time.monotonic() - started

    operation.refresh_from_db()
    assert operation.status != DeletionOperation.State.FAILED, (
        f"dead-lettered within {elapsed:.1f} s by {copies} queued copies run back to back "
        f"({outcomes}); attempts {operation.attempts}/{maximum}, no backoff between them"
    )
    assert operation.attempts == 1


def test_a_copy_delivered_while_a_partial_deletion_backs_off_spends_no_run(
    private_queue, owner, owner_principal, memories
):
    """Stop 64's audit of failures: the common case. The operation's first message waited
    more than a minute behind other work, so the sweep sent one copy; the first run ended
    partial, and the copy right behind it ran the operation again at once, a second run
    spent where a partial operation waits out its backoff first. It waits now, and the task
    retries when the backoff ends."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    back = timezone.now() - timedelta(minutes=2)
    DeletionOperation.objects.filter(pk=operation.pk).update(requested_at=back)
    assert str(operation.pk) in deletion_sweep(stale_seconds=60)
    copies = _queued_copies(private_queue)
    assert copies == 2, copies

    assert _run_each_copy(operation, copies) == ["partial", "partial"]

    operation.refresh_from_db()
    assert operation.status == DeletionOperation.State.PARTIAL
    assert operation.attempts == 1, (
        f"the sweep's copy ran the partial operation again at once: {operation.attempts} runs "
        "spent with no backoff between them"
    )
    # The first run's backoff: 2 s jittered over its upper half.
    assert operation.last_attempt_at + timedelta(seconds=1) <= operation.next_run_at
    assert operation.next_run_at <= timezone.now() + timedelta(seconds=2)


def _backoff_left(operation) -> float:
    """Return the seconds until ``operation``'s backoff ends, on the database's clock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT extract(epoch FROM next_run_at - now()) "
            "FROM memory_core_deletionoperation WHERE id = %s",
            [operation.pk],
        )
        return float(cursor.fetchone()[0])


def test_a_partial_deletions_backoff_never_waits_longer_than_its_maximum(
    private_queue, owner, owner_principal, memories
):
    """Stop 64's review of failures: the backoff is "2 s doubling each run, at most 300 s"
    (docs/operations.md), but ``next_run_at`` was written on the clock of the worker that ran
    the operation and compared with another worker's (``timezone.now()`` on each host): a
    run on a host an hour fast made every copy, the sweep's too, wait out that hour (and a
    countdown that long meets the broker's visibility timeout). Both sides now read the
    database's clock, and a ``next_run_at`` further off than the longest backoff (written so
    before) is due: the copy runs the operation."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    skewed = timezone.now() + timedelta(hours=1)  # "now + 2 s" on a host an hour fast
    DeletionOperation.objects.filter(pk=operation.pk).update(
        status=DeletionOperation.State.PARTIAL, attempts=1, next_run_at=skewed
    )

    assert _run_each_copy(operation, 1) == ["partial"]

    operation.refresh_from_db()
    assert operation.attempts == 2, "the copy waited out a backoff of an hour"
    with tenant_scope(operation.tenant_id):
        waits = deletion_retry_in(operation_id=operation.pk)
    assert 0 < waits <= 4, f"a copy waits {waits:.0f} s after the second run (2-4 s)"


def test_a_run_on_a_host_whose_clock_is_ahead_backs_off_by_the_databases_clock(
    private_queue, owner, owner_principal, memories, monkeypatch
):
    """Stop 64's review of failures: the run wrote ``next_run_at`` on its own host's clock,
    an hour fast, so the operation waited that hour by every other host's clock and the
    database's. It is written on the database's clock now."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    host_clock = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: host_clock() + timedelta(hours=1))

    assert _run_each_copy(operation, 1) == ["partial"]

    left = _backoff_left(operation)
    assert 0 < left <= 2, f"the first run's backoff ends in {left:.0f} s by the database's clock"


RETENTION_PROBE = r"""
import json
from memory_core.tasks import retention_sweep
print("RESULTS" + json.dumps(retention_sweep()))
"""


def test_a_retention_sweep_sends_nothing_more_after_a_hung_broker_timed_out(tenant):
    """The retention sweep opens one operation a subject due, each sent as it commits: with a
    broker that never answers each send cost its timeout, past ~57 subjects the task's time
    limit, before it expired traces and exports (stop 48's audit). After the first timeout
    the process leaves its sends to the deletion sweep at once."""
    from datetime import timedelta

    from django.utils import timezone

    from memory_core.models import MemoryClass, MemoryType
    from tests.factories import MemoryFactory, SubjectFactory

    old = timezone.now() - timedelta(hours=30)
    for _ in range(4):
        MemoryFactory(subject=SubjectFactory(tenant=tenant), memory_type=MemoryType.TASK_STATE,
                      memory_class=MemoryClass.WORKING, created_at=old, valid_from=old)  # fmt: skip
    answer, result = _run_against_a_silent_broker(RETENTION_PROBE)
    assert answer["deletion_operations"] == 4
    assert DeletionOperation.objects.filter(status="pending").count() == 4  # for the sweep
    assert result.stderr.count("broker unavailable, left to the sweep") == 1, result.stderr
    assert result.stderr.count("broker unavailable a moment ago, left to the sweep") == 3


def _run_against_a_silent_broker(probe: str):
    """Run ``probe`` in ``manage.py shell`` against a Redis broker that accepts connections
    and never answers (each send times out after ``REDIS_TIMEOUT_SECONDS``); return the JSON
    it printed after "RESULTS", and the finished process."""
    import socket

    from tests.processes import run_manage

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        result = run_manage(
            "shell",
            "-c",
            probe,
            timeout=60,
            MEMLEDGER_DB_NAME=connection.settings_dict["NAME"],
            CELERY_BROKER_URL=f"redis://127.0.0.1:{silent.getsockname()[1]}/0",
            REDIS_TIMEOUT_SECONDS="1",
        )
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULTS"))
    return json.loads(line[len("RESULTS") :]), result
