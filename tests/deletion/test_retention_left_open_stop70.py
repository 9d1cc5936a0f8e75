"""The retention sweep's items left open at the last audit (stop 70).

1. The run read every tenant's active policy for the traces' ``trace_days`` and again, with
   the versions, for the memories' rules: one reading serves both now, so no run applies two
   versions of a tenant's policy.
2. A tenant's turn (``retention_swept_at``) waited without bound for the tenant's row: a
   transaction holding it (a whole tenant's deletion, ``FOR UPDATE`` until it commits) held
   the sweep there, every later tenant's rules with it. The wait is bounded now; the tenant
   is counted in ``tenant_failures`` and takes its turn at the next run.
3. A step that failed at every run was named only in the worker's INFO line:
   ``manage.py retention_sweep`` runs a sweep, prints the report and exits 1 naming it.
"""

import copy
import io
import json
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core.deletion import retention
from memory_core.deletion.retention import TURN_LOCK_TIMEOUT_MS, retention_apply
from memory_core.models import (
    IdempotencyRecord,
    Memory,
    PolicyVersion,
    Tenant,
    Tombstone,
)
from memory_core.rls import platform_scope
from memory_core.services.policy import policy_publish
from tests.deletion.conftest import episode_aged, held_in_another_transaction, idempotency_record

pytestmark = pytest.mark.django_db


def _policy_reads(queries) -> int:
    """The statements that read policy documents (the sweep's readings of the policies)."""
    return sum(
        1
        for query in queries.captured_queries
        if 'FROM "memory_core_policyversion"' in query["sql"] and '"document"' in query["sql"]
    )


def test_the_active_policies_are_read_once_a_run(tenant, other_tenant):
    """Until stop 70 the memories' rules read every active policy again (~0.12 ms a tenant),
    after the traces' steps had read them for their ``trace_days``."""
    due = [episode_aged(each, timedelta(days=91)) for each in (tenant, other_tenant)]

    with CaptureQueriesContext(connection) as queries:
        result = retention_apply()

    assert _policy_reads(queries) == 1
    assert result["memories_deleted"] == 2 and result["steps_failed"] == []
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {m.id for m in due}


def _published_after_the_traces_steps(monkeypatch, tenant, episodic_days: int) -> None:
    """Publish a version of ``tenant``'s policy keeping episodes ``episodic_days`` once the
    run's traces' steps have read the policies (as the idempotency records' step runs)."""
    real = retention.idempotency_records_expire

    def then_published(**kwargs):
        document = copy.deepcopy(PolicyVersion.objects.get(tenant=tenant, is_active=True).document)
        document["retention"]["episodic_days"] = episodic_days
        policy_publish(tenant=tenant, document=document, note="published during a sweep")
        monkeypatch.setattr(retention, "idempotency_records_expire", real)
        return real(**kwargs)

    monkeypatch.setattr(retention, "idempotency_records_expire", then_published)


def test_a_version_published_during_a_run_is_the_next_runs_for_every_step(tenant, monkeypatch):
    """One reading for the traces' steps and the memories' rules: a version published between
    them (shorter: an episode of 20 days is due under it, not under the 90 of the one read) is
    the next run's. Until stop 70 the rules read it, and a run applied two versions."""
    episode = episode_aged(tenant, timedelta(days=20))
    _published_after_the_traces_steps(monkeypatch, tenant, episodic_days=10)

    assert retention_apply()["memories_deleted"] == 0
    assert Memory.objects.get(pk=episode.id).status == "active"

    assert retention_apply()["memories_deleted"] == 1
    assert Tombstone.objects.filter(memory_id=episode.id).exists()


def test_a_version_published_during_a_run_that_keeps_the_rows_longer_saves_them(
    tenant, monkeypatch
):
    """The rules choose under the run's one reading; the operation that finds another version
    active as it locks its rows writes nothing (``chosen_under``), so a version that keeps
    them longer saves them, as when the rules read the policies themselves."""
    episode = episode_aged(tenant, timedelta(days=100))
    _published_after_the_traces_steps(monkeypatch, tenant, episodic_days=365)

    for _ in range(2):
        assert retention_apply()["memories_deleted"] == 0
    assert Memory.objects.get(pk=episode.id).status == "active"


@pytest.mark.django_db(transaction=True)
def test_a_held_tenant_row_is_waited_for_a_bounded_time_and_its_turn_is_the_next_runs(
    tenant, other_tenant
):
    """A whole tenant's deletion holds the tenant's row (``FOR UPDATE``) until it commits,
    minutes for a large tenant. Until stop 70 the sweep waited for it at the tenant's turn
    with no bound (here the ten seconds the other transaction held it, then deleted the
    tenant's rows as it ended), the later tenants' rules with it. It waits
    ``TURN_LOCK_TIMEOUT_MS`` now, counts the tenant in ``tenant_failures``, and goes on; the
    tenant's turn was not taken, so the next run starts with it."""
    due = {each.id: episode_aged(each, timedelta(days=91)) for each in (tenant, other_tenant)}

    def sweep():
        with platform_scope("retention sweep"):
            return retention_apply()

    with held_in_another_transaction(
        tenant.id, lambda: Tenant.objects.select_for_update().get(pk=tenant.id)
    ) as holder:
        started = time.monotonic()
        result = sweep()
        took = time.monotonic() - started
        assert holder.is_alive()  # still held when the run ended

    assert took < TURN_LOCK_TIMEOUT_MS / 1000 + 5, took
    assert result["tenant_failures"] == [
        {"step": "delete", "tenant_id": str(tenant.id), "count": 1}
    ]
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {due[other_tenant.id].id}
    swept = dict(Tenant.objects.values_list("pk", "retention_swept_at"))
    assert swept[tenant.id] is None and swept[other_tenant.id] is not None
    with connection.cursor() as cursor:  # the bound was the turn's own
        cursor.execute("SELECT current_setting('lock_timeout')")
        assert cursor.fetchone()[0] == "0"

    again = sweep()

    assert again["tenant_failures"] == [] and again["memories_deleted"] == 1
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {
        memory.id for memory in due.values()
    }


def _command():
    """Run ``manage.py retention_sweep``; return its report, what it wrote to stderr, and the
    CommandError it ended with (None: exit status 0)."""
    out, err = io.StringIO(), io.StringIO()
    error = None
    try:
        call_command("retention_sweep", stdout=out, stderr=err)
    except CommandError as exc:
        error = exc
    return json.loads(out.getvalue()), err.getvalue(), error


@pytest.mark.django_db(transaction=True)
def test_the_retention_sweep_command_names_a_failed_step_and_exits_1(tenant):
    """A step whose statement always outlasts its timeout (here: the idempotency records'
    table held ``ACCESS EXCLUSIVE`` by another transaction, and a role's ``lock_timeout``)
    was named in every run's ``steps_failed``, which only the worker's log line carried. The
    command prints the report and exits 1 naming the step; the other steps went on."""
    old = episode_aged(tenant, timedelta(days=91))
    idempotency_record(tenant, timezone.now() - timedelta(days=2))

    def table_held():
        with connection.cursor() as cursor:
            cursor.execute("LOCK TABLE memory_core_idempotencyrecord IN ACCESS EXCLUSIVE MODE")

    with connection.cursor() as cursor:  # as ``ALTER ROLE ... SET lock_timeout`` gives it
        cursor.execute("SET lock_timeout = '300ms'")
    try:
        with held_in_another_transaction(tenant.id, table_held):
            report, err, error = _command()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

    assert report["steps_failed"] == ["idempotency_records"]
    assert error is not None and "step(s) failed: idempotency_records" in str(error)
    assert report["memories_deleted"] == 1 and Tombstone.objects.filter(memory_id=old.id).exists()
    assert IdempotencyRecord.objects.count() == 1 and err == ""

    report, err, error = _command()  # the table free again: the step's rows go, exit 0

    assert error is None and report["steps_failed"] == []
    assert report["idempotency_records_deleted"] == 1 and not IdempotencyRecord.objects.exists()


def test_the_retention_sweep_command_names_a_tenants_failed_part(tenant, monkeypatch):
    """A tenant's part that fails (here a statement the database refuses) is named on stderr
    with its step; it alone does not make the exit status 1: the other tenants went on."""
    real = retention._tenant_retention_delete

    def fails(tenant_id, *args, **kwargs):
        if tenant_id == tenant.id:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 / 0")
        return real(tenant_id, *args, **kwargs)

    monkeypatch.setattr(retention, "_tenant_retention_delete", fails)

    report, err, error = _command()

    assert error is None and report["steps_failed"] == []
    assert report["tenant_failures"] == [
        {"step": "delete", "tenant_id": str(tenant.id), "count": 1}
    ]
    assert f"tenant {tenant.id}'s part of delete failed 1 time(s)" in err
