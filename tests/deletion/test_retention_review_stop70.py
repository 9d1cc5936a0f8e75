"""Stop 70's review of 1bc7876a (retention: the policies read once a run, a tenant's turn's
bounded lock wait, ``manage.py retention_sweep``).

1. ``retention_sweep``, which a monitoring job runs, ended in a traceback when the database
   could not be used: not reachable (the server down, a wrong host in the job's
   environment), or taking no writes (a standby after a failover). The sweep raises these
   on purpose (``retention.database_unavailable``: every later step would fail alike, and
   the beat task retries them); the command now ends with one sentence naming the error.
2. The command waited without end for a lock (a subject's deletion's), printing nothing,
   where the beat task's run ends at its soft time limit: it ends at the same limit now,
   its waiting statement cancelled on the server.
3. A retention operation read its tenant's active version (``chosen_under``) without a lock:
   a version published after that read and before the operation committed (one that keeps
   the rows longer) did not save them, and the operation named a version no longer active
   when it committed. Before 1bc7876a too (since stop 51): no regression of its shared
   reading, which only moved the reading earlier in the run.
4. A tenant's turn (``_turn_take``) in a caller's transaction: a lock wait that times out
   leaves that transaction usable with its own ``lock_timeout`` (checked here; it was so).
"""

import copy
import io
import json
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from memory_core.deletion import retention
from memory_core.deletion import services as deletion_services
from memory_core.locks import SUBJECT_LOCK_PREFIX
from memory_core.models import MemoryClass, MemoryType, PolicyVersion, Tenant, Tombstone
from memory_core.rls import PLATFORM_SETTING, platform_scope, tenant_scope
from memory_core.services.policy import policy_publish
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import MemoryFactory, SubjectFactory
from tests.processes import closed_port, run_manage
from tests.threads import in_thread

pytestmark = pytest.mark.django_db


def test_the_retention_sweep_command_on_a_database_not_reachable_says_so_without_a_traceback():
    """A monitoring job's run against a database that refuses connections died in two chained
    ``OperationalError`` tracebacks; the exit status was 1, as a failed step's."""
    result = run_manage(
        "retention_sweep",
        DATABASE_URL=f"postgres://memledger@127.0.0.1:{closed_port()}/memledger",
        DB_CONNECT_TIMEOUT="2",
    )

    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "retention sweep: the database could not be used" in result.stderr, result.stderr
    assert "Connection refused" in result.stderr, result.stderr
    assert result.stdout == ""


@pytest.mark.django_db(transaction=True)
def test_the_retention_sweep_command_on_a_database_that_takes_no_writes_says_so(tenant):
    """A standby (here ``default_transaction_read_only``, as a failover leaves it) refuses the
    sweep's first write with SQLSTATE 25006, which the sweep raises (the beat task retries it):
    the command ended in an ``InternalError`` traceback, its report never printed."""
    out, err = io.StringIO(), io.StringIO()
    with connection.cursor() as cursor:  # outside platform mode, as a command starts
        cursor.execute(
            "SELECT current_setting(%s), set_config(%s, '', false)", [PLATFORM_SETTING] * 2
        )
        (platform, _) = cursor.fetchone()
        cursor.execute("SET default_transaction_read_only = on")
    try:
        with pytest.raises(CommandError) as raised:
            call_command("retention_sweep", stdout=out, stderr=err)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET default_transaction_read_only")
            cursor.execute(
                "SELECT current_setting(%s), set_config(%s, %s, false)",
                [PLATFORM_SETTING, PLATFORM_SETTING, platform],
            )
            after = cursor.fetchone()[0]

    message = str(raised.value)
    assert message.startswith("retention sweep: the database could not be used"), message
    assert "read-only transaction" in message, message
    assert out.getvalue() == "" and after == ""  # no report; platform mode was left
    assert json.loads(_sweep_report())["steps_failed"] == []  # and the next run goes on


@pytest.mark.django_db(transaction=True)
def test_the_retention_sweep_command_whose_connection_is_lost_says_so(tenant, monkeypatch):
    """The server ends the sweep's connection during a step (a restart, a failover; here
    ``pg_terminate_backend``): the run stops there, and the command said so in a traceback."""
    real = retention.idempotency_records_expire

    def connection_lost(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return real(**kwargs)

    monkeypatch.setattr(retention, "idempotency_records_expire", connection_lost)
    out = io.StringIO()

    with pytest.raises(CommandError) as raised:
        call_command("retention_sweep", stdout=out, stderr=io.StringIO())

    assert str(raised.value).startswith("retention sweep: the database could not be used")
    assert out.getvalue() == ""
    monkeypatch.undo()
    assert json.loads(_sweep_report())["steps_failed"] == []  # a new connection goes on


@pytest.mark.django_db(transaction=True)
def test_the_retention_sweep_command_ends_at_the_tasks_soft_time_limit(tenant, settings):
    """An operation of the memories' rules waits for its subject's lock, which a subject's
    deletion holds for as long as it runs (``delete_subject`` of a large subject: minutes;
    an abandoned session: for good). The beat task's run ends at its soft time limit; the
    command's waited without end, printing nothing, and a monitoring job running it every few
    minutes piled up runs. It ends at the same limit now, naming it (exit status 1)."""
    settings.CELERY_TASK_SOFT_TIME_LIMIT = 2
    episode = _episode(tenant, timedelta(days=91))

    def subject_held():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                [f"{SUBJECT_LOCK_PREFIX}{episode.subject_id}"],
            )

    out = io.StringIO()
    with held_in_another_transaction(tenant.id, subject_held) as holder:
        started = time.monotonic()
        with pytest.raises(CommandError) as raised:
            call_command("retention_sweep", stdout=out, stderr=io.StringIO())
        took = time.monotonic() - started
        assert holder.is_alive()  # still held when the command ended
        waiting = _advisory_lock_waits_after(seconds=2)

    assert took < 2 + 3, took
    assert waiting == 0  # its statement was cancelled, not left waiting on the server
    message = str(raised.value)
    assert message.startswith("retention sweep: the run was ended at 2 s"), message
    assert out.getvalue() == ""
    assert not Tombstone.objects.filter(memory_id=episode.id).exists()
    assert json.loads(_sweep_report())["memories_deleted"] == 1  # the lock free: deleted


@pytest.mark.django_db(transaction=True)
def test_a_version_published_while_an_operation_is_written_saves_its_rows(tenant, monkeypatch):
    """The operation (chosen under version 1) has read the active version and writes its
    tombstones when the tenant publishes version 2, which keeps the episode a year. Until
    stop 70's review nothing held version 1: the publish committed at once, and the
    operation went on and deleted the episode under version 1, committed after version 2 was
    the tenant's. The operation now holds the active version's row (``FOR SHARE``) from its
    read to its commit: the publish waits for it (the deletion came first), or, begun
    before the read, is waited for, and the operation then writes nothing."""
    episode = _episode(tenant, timedelta(days=100))
    longer = copy.deepcopy(PolicyVersion.objects.get(tenant=tenant, is_active=True).document)
    longer["retention"]["episodic_days"] = 365
    real, seen = deletion_services.tombstones_insert, {}

    def published_meanwhile(**kwargs):
        def publish():
            with tenant_scope(tenant.id):
                policy_publish(tenant=tenant, document=longer, note="published meanwhile")

        publisher = in_thread(publish)
        publisher.join(3)
        seen["published_first"], seen["publisher"] = not publisher.is_alive(), publisher
        monkeypatch.setattr(deletion_services, "tombstones_insert", real)
        return real(**kwargs)

    monkeypatch.setattr(deletion_services, "tombstones_insert", published_meanwhile)
    with platform_scope("test"):
        retention.retention_delete(limit=100)
    seen["publisher"].outcome(30)

    assert PolicyVersion.objects.get(tenant=tenant, is_active=True).version == 2
    deleted = Tombstone.objects.filter(memory_id=episode.id).exists()
    assert not (seen["published_first"] and deleted), (
        "deleted under version 1 though version 2 was published before the deletion committed"
    )


def _advisory_lock_waits_after(seconds: float) -> int:
    """The backends of this database still waiting for an advisory lock after ``seconds``
    (0 as soon as none is)."""
    deadline = time.monotonic() + seconds
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory' "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
            waiting = cursor.fetchone()[0]
        if not waiting or time.monotonic() >= deadline:
            return waiting
        time.sleep(0.05)


def _episode(tenant, age: timedelta):
    created = timezone.now() - age
    return MemoryFactory(
        subject=SubjectFactory(tenant=tenant),
        memory_type=MemoryType.EPISODE,
        memory_class=MemoryClass.EPISODIC,
        created_at=created,
        valid_from=created,
    )


def _sweep_report() -> str:
    out = io.StringIO()
    call_command("retention_sweep", stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_a_turn_that_waits_too_long_in_a_callers_transaction_leaves_it_usable(tenant):
    """``_turn_take`` inside a caller's transaction runs in a savepoint: the lock wait that
    times out rolls back the savepoint only (the caller's next statement runs), and the
    caller's own ``lock_timeout`` is its again, after a turn that timed out as after one
    taken (``set_config(..., true)`` outlasts a released savepoint: it is put back)."""

    def lock_timeout() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('lock_timeout')")
            return cursor.fetchone()[0]

    with platform_scope("test"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '7s'")
        with held_in_another_transaction(
            tenant.id, lambda: Tenant.objects.select_for_update().get(pk=tenant.id)
        ):
            started = time.monotonic()
            with pytest.raises(OperationalError):
                retention._turn_take(tenant.id)
            assert time.monotonic() - started < retention.TURN_LOCK_TIMEOUT_MS / 1000 + 2
        assert lock_timeout() == "7s"
        assert not Tenant.objects.filter(pk=tenant.id, retention_swept_at__isnull=False).exists()
        retention._turn_take(tenant.id)  # the row free: taken, in the same transaction
        assert lock_timeout() == "7s"
        assert Tenant.objects.filter(pk=tenant.id, retention_swept_at__isnull=False).exists()
