"""Stop 70's review of 1bc7876a (retention: the policies read once a run, a tenant's turn's
bounded lock wait, ``manage.py retention_sweep``).

1. ``retention_sweep``, which a monitoring job runs, ended in a traceback when the database
   could not be used: not reachable (the server down, a wrong host in the job's
   environment), or taking no writes (a standby after a failover). The sweep raises these
   on purpose (``retention.database_unavailable``: every later step would fail alike, and
   the beat task retries them); the command now ends with one sentence naming the error.
2. The command waited without end for a lock (a subject's deletion's), printing nothing,
   and the beat task's run until its soft time limit: an operation of the memories' rules
   waits for its subject's lock and rows (and its COMMIT for the subject's row) 2 s at most
   now (``retention.SUBJECT_LOCK_TIMEOUT_MS``), the subject skipped and named in the
   report's ``subjects_busy``, for the command and the task alike (the third review: a
   SIGALRM soft limit of the command's own stood in for that before).
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

from memory_core.deletion import retention
from memory_core.deletion import services as deletion_services
from memory_core.locks import SUBJECT_LOCK_PREFIX
from memory_core.models import (
    PolicyVersion,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.principals import SystemPrincipal
from memory_core.rls import PLATFORM_SETTING, platform_scope, tenant_scope
from memory_core.services.policy import policy_publish
from tests.deletion.conftest import episode_aged, held_in_another_transaction
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


def _subject_lock_held(subject_id):
    """What a subject's deletion takes first and holds until it commits: the subject's lock."""

    def held():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                [f"{SUBJECT_LOCK_PREFIX}{subject_id}"],
            )

    return held


def _subject_row_held(subject_id):
    """What a whole subject's deletion holds too: the subject's row ``FOR UPDATE``, which the
    operation's COMMIT waits for (its foreign keys' checks, DEFERRABLE INITIALLY DEFERRED)."""
    return lambda: Subject.objects.select_for_update().get(pk=subject_id)


# The seconds a sweep with one busy subject may take here: its one bounded wait, and the rest.
BUSY_SWEEP_SECONDS = retention.SUBJECT_LOCK_TIMEOUT_MS / 1000 + 3


@pytest.mark.timeout(60)
@pytest.mark.django_db(transaction=True)
def test_the_retention_sweep_command_skips_a_subject_whose_lock_is_held(tenant):
    """An operation of the memories' rules waits for its subject's lock, which a subject's
    deletion holds for as long as it runs (``delete_subject`` of a large subject: minutes;
    an abandoned session: for good). The command waited as long, printing nothing (then
    until the task's soft limit, by a SIGALRM of its own). It waits
    ``SUBJECT_LOCK_TIMEOUT_MS`` now: the subject is skipped and named in ``subjects_busy``
    and on stderr, no failure (exit status 0), and the next run deletes the memory."""
    episode = episode_aged(tenant, timedelta(days=91))
    out, err = io.StringIO(), io.StringIO()

    with held_in_another_transaction(tenant.id, _subject_lock_held(episode.subject_id)) as holder:
        started = time.monotonic()
        call_command("retention_sweep", stdout=out, stderr=err)  # no CommandError: exit 0
        took = time.monotonic() - started
        assert holder.is_alive()  # still held when the command ended
        waiting = _lock_waits()

    assert took < BUSY_SWEEP_SECONDS, took
    assert waiting == 0  # its statement ended, not left waiting on the server
    report = json.loads(out.getvalue())
    assert report["subjects_busy"] == [
        {"tenant_id": str(tenant.id), "subject_id": str(episode.subject_id)}
    ]
    assert report["steps_failed"] == [] and report["tenant_failures"] == []
    assert report["memories_deleted"] == 0
    assert f"subject {episode.subject_id} of tenant {tenant.id} was busy" in err.getvalue()
    assert not Tombstone.objects.filter(memory_id=episode.id).exists()

    again = json.loads(_sweep_report())  # the lock free: deleted
    assert again["memories_deleted"] == 1 and again["subjects_busy"] == []
    assert Tombstone.objects.filter(memory_id=episode.id).exists()


@pytest.mark.timeout(60)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("held", [_subject_lock_held, _subject_row_held])
def test_the_retention_sweep_task_skips_a_subject_whose_lock_or_row_is_held(tenant, held, caplog):
    """The beat task (``retention_apply`` under ``platform_scope``, in autocommit on a
    connection of its own, as a worker runs it) waited as the command did, until Celery's
    soft limit: for the subject's lock, or in its operation's COMMIT, whose foreign-key
    checks wait for the subject's row a whole subject's deletion holds. Both are bounded
    now: the subject is skipped, counted in ``subjects_busy`` (no tenant failure, no ERROR
    line: a held subject is normal), and the next run deletes the memory."""
    from memory_core.tasks import retention_sweep

    episode = episode_aged(tenant, timedelta(days=91))
    with held_in_another_transaction(tenant.id, held(episode.subject_id)) as holder:
        sweep = in_thread(retention_sweep)
        report = sweep.outcome(BUSY_SWEEP_SECONDS)  # fails, still running, past the bound
        assert holder.is_alive()
        waiting = _lock_waits()

    assert waiting == 0
    assert report["subjects_busy"] == [
        {"tenant_id": str(tenant.id), "subject_id": str(episode.subject_id)}
    ]
    assert report["steps_failed"] == [] and report["tenant_failures"] == []
    assert report["memories_deleted"] == 0
    assert not Tombstone.objects.filter(memory_id=episode.id).exists()
    busy_lines = [r for r in caplog.records if "is busy" in r.getMessage()]
    assert busy_lines and all(r.levelname == "WARNING" and not r.exc_info for r in busy_lines)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]

    again = in_thread(retention_sweep).outcome(30)  # the lock free: deleted
    assert again["memories_deleted"] == 1 and again["subjects_busy"] == []
    assert Tombstone.objects.filter(memory_id=episode.id).exists()


@pytest.mark.django_db(transaction=True)
def test_a_users_own_deletion_still_waits_for_its_subjects_lock(tenant):
    """The bound is the sweep's alone: a user's request for a memory (API, portal) waits for
    a deletion of its subject in flight, as before, and is made once it ends."""
    episode = episode_aged(tenant, timedelta(days=1))
    principal = SystemPrincipal(tenant_id=tenant.id, name="test")

    def request():
        with tenant_scope(tenant.id):
            return deletion_services.deletion_request(principal=principal, memory_id=episode.id)

    with held_in_another_transaction(tenant.id, _subject_lock_held(episode.subject_id)):
        requester = in_thread(request)
        requester.join((retention.SUBJECT_LOCK_TIMEOUT_MS / 1000) * 2)
        assert requester.is_alive()  # still waiting past the sweep's bound
    operation = requester.outcome(30)

    assert operation.memory_ids == [episode.id]


def _lock_waits() -> int:
    """The backends of this database waiting for a lock now, of any kind."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_version_published_while_an_operation_is_written_saves_its_rows(tenant, monkeypatch):
    """The operation (chosen under version 1) has read the active version and writes its
    tombstones when the tenant publishes version 2, which keeps the episode a year. Until
    stop 70's review nothing held version 1: the publish committed at once, and the
    operation went on and deleted the episode under version 1, committed after version 2 was
    the tenant's. The operation now holds the active version's row (``FOR SHARE``) from its
    read to its commit: the publish waits for it (the deletion came first), or, begun
    before the read, is waited for, and the operation then writes nothing."""
    episode = episode_aged(tenant, timedelta(days=100))
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
