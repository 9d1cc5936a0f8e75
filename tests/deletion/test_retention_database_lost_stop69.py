"""The retention sweep's contained failures are a step's or a tenant's, never the database's.

b27a9eae made a step's failure (a statement or lock timeout) the step's: logged, named in
``steps_failed``, and the sweep goes on. It contained a database that is gone or takes no
writes alike: the sweep logged a failure of every later step (and tenant), ended as a
success, and the task's retry with backoff (``tasks.TRANSIENT``, ``read_only_is_transient``)
never came (stop 69's review of retention's contained steps). Such a failure ends the run.

Run in autocommit, as the beat task runs (``transaction=True``).
"""

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError, connection
from psycopg.pq import TransactionStatus

from memory_core.deletion import retention
from memory_core.deletion.retention import retention_apply
from memory_core.models import Export, IdempotencyRecord, Tombstone
from memory_core.tasks import DatabaseReadOnly, retention_sweep
from tests.deletion.test_retention_steps_contained_stop69 import _backlog

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _export_dir_of_its_own(settings, tmp_path):
    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 24


def test_a_read_only_database_ends_the_sweep_and_the_task_retries_it(tenant, caplog):
    """A failover to a standby: every write is refused (SQLSTATE 25006). The task raised
    ``DatabaseReadOnly`` for Celery to retry; contained, it logged a failure of each step and
    tenant and returned a report, unretried."""
    _backlog(tenant)
    with connection.cursor() as cursor:
        cursor.execute("SET default_transaction_read_only = on")
    try:
        with pytest.raises(DatabaseReadOnly):
            retention_sweep()  # called directly, Celery's retry raises the error
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET default_transaction_read_only")
    assert "the sweep goes on" not in caplog.text and "the other tenants go on" not in caplog.text


def test_a_connection_lost_in_a_step_ends_the_sweep(tenant, monkeypatch, caplog):
    """The server ends the worker's connection in the exports' batch (a restart): every later
    step failed on the closed connection, each logged, and the task returned a success."""
    _backlog(tenant)

    def terminated(*args):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setattr(retention, "_exports_expire_batch", terminated)
    try:
        with pytest.raises(OperationalError):
            retention_sweep()
    finally:
        connection.close()  # the next statement connects again
    assert "the sweep goes on" not in caplog.text


def test_the_soft_time_limit_in_a_later_step_ends_the_run_keeping_what_was_done(
    tenant, monkeypatch
):
    """The limit in the idempotency records' batch ends the run there: not a step's failure,
    no later step runs, and what the earlier steps committed (the exports) stays."""
    _backlog(tenant)

    def out_of_time(*args):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(retention, "_idempotency_records_expire_batch", out_of_time)
    with pytest.raises(SoftTimeLimitExceeded):
        retention_apply()
    assert not Export.objects.exists() and IdempotencyRecord.objects.exists()
    assert not Tombstone.objects.exists()  # the memories' rules did not run


def test_the_contained_steps_hold_no_transaction_across_the_sweep(tenant, monkeypatch):
    """In autocommit, as the beat task runs, a step's guard is no transaction: each batch
    commits on its own, so no lock is held from one step to the next (an ``atomic()`` around
    the run or a step would hold every deleted row's lock for up to the run's 150 s). As each
    step's batch starts, the server has no transaction open for the session (its last
    ReadyForQuery said idle, not in a transaction)."""
    _backlog(tenant)
    seen = {}

    def watched(name, real):
        def batch(*args, **kwargs):
            seen.setdefault(name, set()).add(
                (connection.connection.info.transaction_status, connection.in_atomic_block)
            )
            return real(*args, **kwargs)

        return batch

    for name in ("_exports_expire_batch", "_idempotency_records_expire_batch", "_rule_delete"):
        monkeypatch.setattr(retention, name, watched(name, getattr(retention, name)))

    result = retention_apply()

    assert seen == dict.fromkeys(seen, {(TransactionStatus.IDLE, False)}) and len(seen) == 3
    assert result["steps_failed"] == [] and result["memories_deleted"] == 1
