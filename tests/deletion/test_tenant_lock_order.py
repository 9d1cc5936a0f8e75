"""A tenant's deletion request (the tenant's rows locked in id order, no subject lock) against
a path that locks a subject's rows out of id order: an approval holds the pending row, then
locks the key's head, of a smaller id. PostgreSQL ended the cycle by failing the request's
wait, an OperationalError: a 500, or a failed ``delete_tenant``. The round now starts again
(found by a race audit of stop 29)."""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import (
    deletion_request_or_queue,
    queued_subject_deletion_run,
    tenant_deletion_request,
)
from memory_core.exports import export_create
from memory_core.models import DeletionOperation, Subject
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import reviews
from memory_core.services.writes import memory_write
from tests.deletion.conftest import held_in_another_transaction, until_waiting_or_done
from tests.deletion.test_concurrency import _until_it_waits
from tests.factories import MemoryFactory, write_body
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def _race(tenant_id, first, *, target, name):
    """Run ``first`` (one request) until it calls ``target.name``, then the tenant's deletion
    request until it waits for a lock (or ends), then ``first`` on; return both threads."""
    paused, go = threading.Event(), threading.Event()
    real = getattr(target, name)
    firsts = set()

    def held(*args, **kwargs):
        if threading.current_thread() in firsts and not paused.is_set():
            paused.set()
            assert go.wait(60)
        return real(*args, **kwargs)

    def run_first():
        firsts.add(threading.current_thread())
        with tenant_scope(tenant_id), transaction.atomic():
            return first()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(target, name, held)
        holder = in_thread(run_first, released=[paused])
        assert paused.wait(60)
        requester = in_thread(lambda: tenant_deletion_request(tenant_id=tenant_id))
        _until_it_waits(requester)
        go.set()
        holder.wait()
        requester.wait()
    return holder, requester


def test_a_tenant_deletion_request_meeting_an_approval_out_of_id_order_goes_round_again(
    tenant,
    private_queue,  # noqa: F811
):
    system = SystemPrincipal(tenant_id=tenant.id)
    for n in range(40):  # until the head's id sorts before the pending write's
        common = {"subject": f"user-{n}", "memory_key": "health.notes"}
        with tenant_scope(tenant.id):
            head = memory_write(
                principal=system, data=write_body(**common, content="User likes walking.")
            ).memory
            pending = memory_write(
                principal=system, data=write_body(**common, content="User has asthma.")
            )
        assert pending.decision == "pending_approval"
        if str(head.id) < str(pending.memory.id):
            break

    approval, request = _race(
        tenant.id,
        lambda: reviews.review_approve(
            principal=system, item_id=pending.review_item.id, reason="ok"
        ),
        target=reviews,
        name="_link_into_chain",
    )

    assert approval.error is None, approval.error
    assert request.outcome() is not None


def test_a_tenant_deletion_while_a_queued_subject_run_waits_is_not_a_deadlock(
    settings, owner, owner_principal, private_queue, journal
):
    """Stop 58's audit of deletion found a whole tenant's deletion asked while the worker's
    run of a queued subject deletion waited for the subject's lock (an export in flight)
    failing on PostgreSQL's deadlock detected, a raw OperationalError: the run held the
    subject's row (and, through the ordering's join, the tenant row) and then waited for the
    memory rows, which the request held before it locked the tenant row and cleared the
    subject's mark. Now the request locks the marked subjects' rows first, waits for the
    run, and completes."""
    for _ in range(2):
        MemoryFactory(subject=owner)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 1
    with tenant_scope(owner.tenant_id):
        queued = deletion_request_or_queue(principal=owner_principal, subject_id=owner.pk)
    assert queued.status == "queued"

    def exporting():  # the person's export, written and not committed yet
        export_create(principal=owner_principal, subject_id=owner.pk)

    def worker():
        with tenant_scope(owner.tenant_id):
            return queued_subject_deletion_run(owner.pk)

    def tenant():
        return tenant_deletion_request(tenant_id=owner.tenant_id)

    with held_in_another_transaction(owner.tenant_id, exporting):
        queued_run = in_thread(worker)
        until_waiting_or_done(queued_run)  # holds the subject's row, waits for its lock
        assert queued_run.is_alive()
        tenants = in_thread(tenant)
        deadline = time.monotonic() + 20
        while not someone_waits_for_a_lock(sessions=2) and tenants.is_alive():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    queued_run.wait(30)
    tenants.wait(30)
    assert queued_run.error is None, queued_run.error
    assert tenants.error is None, f"the tenant's deletion failed: {tenants.error!r}"
    assert tenants.outcome().target == "tenant"


def _until_waiting(sessions: int, *threads) -> None:
    """Return once ``sessions`` backends wait for a lock; fail if a thread ended first."""
    deadline = time.monotonic() + 20
    while not someone_waits_for_a_lock(sessions=sessions):
        assert all(t.is_alive() for t in threads), [t.error for t in threads]
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_queued_run_racing_a_tenant_deletion_answers_it_not_an_empty_operation(
    settings, owner, owner_principal, private_queue, journal
):
    """Stop 58's review found a queued whole-subject run whose memories a whole tenant's
    deletion in flight took making a new operation that held no memory under the queued id,
    which ran to completed while the tenant's operation was pending: the tenant's request,
    started while no subject was marked, took no subject's row, and the run's look at what
    was taken meanwhile (``_queued_taken_meanwhile``) came before it waited for the memory
    rows. Now the request looks once it holds them, answers the tenant's operation, and
    leaves the mark for the sweep."""
    for _ in range(2):
        MemoryFactory(subject=owner)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 1
    tenant_id = owner.tenant_id

    def key_share_on_tenant():  # a transaction that inserted a row of the tenant, say
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM memory_core_tenant WHERE id = %s FOR KEY SHARE", [str(tenant_id)]
            )

    def worker():
        with tenant_scope(tenant_id):
            return queued_subject_deletion_run(owner.pk)

    with held_in_another_transaction(tenant_id, key_share_on_tenant):
        # The tenant's request: no subject marked yet; it locks the memory rows, then waits
        # for the tenant row.
        tenants = in_thread(lambda: tenant_deletion_request(tenant_id=tenant_id))
        _until_waiting(1, tenants)
        # Meanwhile the person's "delete everything" is queued (too large for a request) ...
        with tenant_scope(tenant_id):
            queued = deletion_request_or_queue(principal=owner_principal, subject_id=owner.pk)
        assert queued.status == "queued"
        # ... and the worker's run starts: it waits for the rows the tenant's request holds.
        run = in_thread(worker)
        _until_waiting(2, tenants, run)
    tenant_operation = tenants.outcome(30)
    made = run.outcome(30)
    assert tenant_operation.target == "tenant"
    assert DeletionOperation.objects.get(pk=tenant_operation.pk).status != "completed"
    if not (made.memory_ids or made.already_requested):
        outcome = deletion_run(operation_id=made.pk)  # the id the person was handed
        tenant_status = DeletionOperation.objects.get(pk=tenant_operation.pk).status
        pytest.fail(
            f"the queued run made a new operation holding no memory, which ran to {outcome!r} "
            f"while the tenant's operation that took the memories is {tenant_status!r}"
        )
    assert made.pk == tenant_operation.pk
    # The mark stays: the sweep sends the task again once the tenant's operation completed.
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is not None
