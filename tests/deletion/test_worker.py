"""Deletion on a real Celery worker process and a real broker, including its failure modes."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from memory_core.deletion.services import deletion_request
from memory_core.deletion.sweep import deletion_sweep
from memory_core.models import DeletionOperation, DeletionStep, Memory, MemoryEvent
from memory_core.tasks import reembed_memory, send
from tests.celery_worker import start_worker, unique_queue, wait_for
from tests.deletion.conftest import seed_everywhere, unit_vector
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def _status(operation_id):
    return DeletionOperation.objects.values_list("status", flat=True).get(pk=operation_id)


def test_worker_deletes_from_every_store_and_the_status_moves(
    celery_worker, owner, owner_principal, memories
):
    target = memories[0]
    seed_everywhere(owner, memories)
    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    seen = [operation.status]

    def completed():
        status = _status(operation.id)
        if status != seen[-1]:
            seen.append(status)
        return status == "completed"

    wait_for(completed, timeout=60, interval=0.02, message="the operation to complete")
    assert seen[0] == "pending" and seen[-1] == "completed"
    steps = DeletionStep.objects.filter(operation_id=operation.id)
    assert steps.count() == 10  # the stores of STORES in test_services.py
    assert all(step.status == "verified" and step.verified_at for step in steps)
    row = Memory.objects.get(pk=target.id)
    assert (row.status, row.content, row.embedding) == ("deleted", "", None)
    assert MemoryEvent.objects.filter(memory_id=target.id, action="deleted").count() == 1


def test_worker_killed_mid_operation_completes_after_restart_without_double_work(
    owner, owner_principal, memories, settings
):
    queue = unique_queue("kill")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    seeded = seed_everywhere(owner, memories)
    doomed = start_worker(queue=queue, env={"MEMLEDGER_DELETION_FAULTS": "exports=sleep:60"})
    try:
        operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
        wait_for(
            lambda: "deletion fault: exports sleeps" in doomed.log(),
            timeout=60,
            message="the exports step to start",
        )
        assert _status(operation.id) == "running"
        before = dict(
            DeletionStep.objects.filter(operation_id=operation.id, status="verified").values_list(
                "store", "verified_at"
            )
        )
        doomed.kill()  # SIGKILL, worker and pool child, in the middle of the exports step
    finally:
        doomed.stop()
    assert not doomed.alive()
    assert _status(operation.id) == "running"
    assert set(before) == {
        "primary",
        "events",
        "embeddings",
        "full_text",
        "traces",
        "queued_reprocessing",
        "retrieval_cache",
        "summaries",
    }
    # The killed step's transaction was rolled back with the worker: it is still pending.
    assert DeletionStep.objects.get(operation_id=operation.id, store="exports").status == "pending"

    fresh = start_worker(queue=queue)
    try:
        # The message went down with the worker: the sweep re-drives the operation.
        assert str(operation.id) in deletion_sweep(stale_seconds=0)
        wait_for(lambda: _status(operation.id) == "completed", timeout=60, message="completion")
    finally:
        fresh.stop()
        fresh.purge()
    steps = {s.store: s for s in DeletionStep.objects.filter(operation_id=operation.id)}
    assert all(s.status == "verified" for s in steps.values())
    # Steps verified before the kill were not run again; the interrupted one ran once more.
    assert {store: steps[store].verified_at for store in before} == before
    assert all(s.attempts == 1 for s in steps.values())
    assert MemoryEvent.objects.filter(memory_id=memories[0].id, action="deleted").count() == 1
    assert (
        str(memories[0].id)
        not in (settings.MEMLEDGER_EXPORT_DIR / seeded["export"].path).read_text()
    )
    assert DeletionOperation.objects.get(pk=operation.id).attempts == 2


def test_broker_unreachable_at_request_then_the_sweep_completes_it(celery_worker, owner, memories):
    # The request comes from a process whose broker is down (nothing listens on port 1).
    code = (
        "from memory_core.deletion.services import deletion_request\n"
        "from memory_core.principals import SystemPrincipal\n"
        "from memory_core.rls import tenant_scope\n"
        f"with tenant_scope('{owner.tenant_id}'):\n"
        f"    op = deletion_request(principal=SystemPrincipal(tenant_id='{owner.tenant_id}'),"
        f" memory_id='{memories[0].id}')\n"
        "print('OPERATION', op.id, op.status)"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "MEMLEDGER_DB_NAME": connection.settings_dict["NAME"],
        "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
        "MEMLEDGER_CELERY_QUEUE": celery_worker.queue,
    }
    result = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "broker unavailable" in result.stderr
    operation_id = result.stdout.split("OPERATION ")[1].split()[0]
    assert _status(operation_id) == "pending"
    assert Memory.objects.get(pk=memories[0].id).status == "deleted"  # unretrievable already

    assert operation_id in deletion_sweep(stale_seconds=0)
    wait_for(lambda: _status(operation_id) == "completed", timeout=60, message="completion")


def test_reembed_queued_for_a_memory_deleted_meanwhile_does_nothing(
    celery_worker, owner_principal, memories
):
    target = memories[0]
    send(reembed_memory, str(target.id), countdown=2)
    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    wait_for(lambda: _status(operation.id) == "completed", timeout=60, message="completion")
    wait_for(
        lambda: f"skipped: memory {target.id} is tombstoned" in celery_worker.log(),
        timeout=30,
        message="the re-embed task to skip the tombstoned memory",
    )
    row = Memory.objects.get(pk=target.id)
    assert (row.embedding, row.embedding_model, row.content) == (None, "", "")


def test_worker_deletes_a_whole_tenant(celery_worker, tenant, owner, memories, api_key):
    """The request on the command's path, the steps on a real worker: the tenant's every store
    and its identities are verified clean."""
    from memory_core.deletion.services import tenant_deletion_request
    from memory_core.models import RetrievalTrace, Subject

    seed_everywhere(owner, memories)
    operation = tenant_deletion_request(tenant_id=tenant.id)
    wait_for(
        lambda: _status(operation.id) == "completed",
        timeout=60,
        interval=0.05,
        message="the tenant's operation to complete",
    )
    steps = DeletionStep.objects.filter(operation_id=operation.id)
    assert {step.store for step in steps} >= {"identities", "traces", "exports", "evaluation"}
    assert all(step.status == "verified" for step in steps)
    assert not RetrievalTrace.objects.filter(tenant=tenant).exists()
    owner_row = Subject.objects.get(pk=owner.pk)
    assert owner_row.external_id == str(owner.pk)


def test_the_workers_log_of_a_run_names_the_request_that_asked_for_it(
    celery_worker, api_client, memories
):
    response = api_client.delete(
        f"/api/v1/memories/{memories[0].id}", HTTP_X_REQUEST_ID="support-case-77"
    )
    assert response.status_code == 202, response.content
    operation_id = response.json()["operation_id"]
    wait_for(lambda: _status(operation_id) == "completed", timeout=60, message="completion")
    line = wait_for(
        lambda: next(
            (x for x in celery_worker.log().splitlines() if f"deletion {operation_id}: run" in x),
            None,
        ),
        timeout=30,
        message="the run's log line",
    )
    assert "[support-case-77]" in line, line
    # The worker's own lines, outside any task, belong to no request.
    ready = next(x for x in celery_worker.log().splitlines() if " ready." in x)
    assert "[-]" in ready, ready


def _database_read_only(on: bool) -> None:
    """Make new connections to the test database take no writes (as after a failover to a
    standby), or take them again. Set as the owner; this process reconnects after it."""
    from memory_core.rls import owner_connection

    name = connection.settings_dict["NAME"]
    value = "on" if on else "DEFAULT"
    with owner_connection() as owner, owner.cursor() as cursor:
        cursor.execute("SET default_transaction_read_only = off")  # this session writes
        cursor.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = {value}')


def test_a_deletion_run_on_a_read_only_database_is_retried_until_it_takes_writes(
    owner, owner_principal, memories, settings
):
    """A database that takes no writes (SQLSTATE 25006) failed the task at once, unretried:
    the operation waited for the sweep. It is now retried with backoff, as a database that is
    down is, and completes once the database takes writes again (no sweep runs here)."""
    queue = unique_queue("readonly")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    _database_read_only(True)
    worker = start_worker(queue=queue)
    try:
        wait_for(
            lambda: "Retry in" in worker.log() and "DatabaseReadOnly" in worker.log(),
            timeout=60,
            message="the task to be retried on the read-only database",
        )
        assert _status(operation.id) == "pending"
        _database_read_only(False)
        wait_for(lambda: _status(operation.id) == "completed", timeout=90, message="completion")
    finally:
        _database_read_only(False)
        worker.stop()
        worker.purge()
    assert "raised unexpected" not in worker.log()


def test_key_deletion_on_a_worker_leaves_another_subjects_key(celery_worker, api_client, tenant):
    """Stop 57's audit of deletion found no test of a key's deletion run by a real worker:
    it holds that every store of the subject's key is verified clean, and that the
    subject's other key and another subject's memory on the same key are left untouched."""
    alice, bob = SubjectFactory(tenant=tenant), SubjectFactory(tenant=tenant)
    mine = MemoryFactory(
        subject=alice, memory_key="style.tone", embedding=unit_vector(1), embedding_model="t"
    )
    other = MemoryFactory(subject=alice, memory_key="style.lang")
    theirs = MemoryFactory(subject=bob, memory_key="style.tone", content="Bob likes terse.")
    seeded = seed_everywhere(alice, [mine, other])
    response = api_client.post(
        "/api/v1/deletions",
        {"subject": alice.external_id, "memory_key": "style.tone"},
        format="json",
    )
    assert response.status_code == 202, response.content
    op_id = response.json()["operation_id"]
    wait_for(
        lambda: _status(op_id) == "completed",
        timeout=90,
        message="the key's deletion to complete",
    )
    body = api_client.get(f"/api/v1/deletions/{op_id}").json()
    assert body["memory_count"] == 1 and all(s["status"] == "verified" for s in body["steps"])
    assert Memory.objects.get(pk=theirs.pk).status == "active"
    assert Memory.objects.get(pk=other.pk).status == "active"
    row = Memory.objects.get(pk=mine.pk)
    assert (row.content, row.embedding, row.memory_key) == ("", None, "")
    assert str(mine.id) not in seeded["eval_path"].read_text()
    seeded["trace"].refresh_from_db()
    assert mine.id not in seeded["trace"].cited_ids and other.id in seeded["trace"].cited_ids
    for event in MemoryEvent.objects.filter(memory_id=mine.id):
        assert "note" not in event.details
