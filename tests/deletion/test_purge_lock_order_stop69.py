"""A deletion run takes the events and traces it purges in id order (stop 69).

Stop 68's audit of deletion's tasks: two deletions reaching the same rows (a memory's and its
subject's reach the same rejected writes' events; two memories one trace cites, the same
trace) each updated them in one statement, in the order of its plan: the table's, or that of
a synchronised scan, which starts where another scan of the table is. Two orders deadlock,
which rolls one run's phase back. Each run now locks the rows in id order before it updates
them. Shown here with the rows stored out of id order (the larger id first): a transaction in
flight holds the row of the smaller id; the run waits for it and, until it is let go, holds
no lock on the other row. Before, it had taken (and updated) the row stored first.
"""

import threading
import uuid

import pytest
from django.db import OperationalError, connection, transaction

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import DeletionOperation, MemoryEvent, RetrievalTrace
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from tests.factories import MemoryFactory
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)

SMALL, LARGE = (uuid.UUID(f"{n:08x}-0000-4000-8000-000000000000") for n in (1, 0xFFFFFFF0))


def _stored_first(table: str, ids: list) -> object:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE id = ANY(%s) ORDER BY ctid", [ids])  # noqa: S608
        return cursor.fetchone()[0]


def _holding(tenant_id, model, pk):
    """Start a transaction on another thread that locks ``model``'s row ``pk`` until
    ``let_go`` is set; return ``(thread, let_go)`` once it holds it."""
    held, let_go = threading.Event(), threading.Event()

    def hold():
        with tenant_scope(tenant_id), transaction.atomic():
            model.objects.select_for_update().get(pk=pk)
            held.set()
            assert let_go.wait(60)

    holder = in_thread(hold, released=[held])
    assert held.wait(30), holder.error
    return holder, let_go


def _free(tenant_id, model, pk) -> bool:
    """Whether another transaction can lock ``model``'s row ``pk`` at once."""

    def probe():
        with tenant_scope(tenant_id), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT id FROM {model._meta.db_table} WHERE id = %s FOR UPDATE NOWAIT",  # noqa: S608
                    [pk],
                )
                return cursor.fetchone() is not None

    prober = in_thread(probe)
    prober.wait(30)
    if isinstance(prober.error, OperationalError):
        return False  # lock not available: the run holds it
    assert prober.error is None, prober.error
    return prober.result


def _run_blocked_at(tenant, operation, model, small, large):
    """Run ``operation`` while the row ``small`` is held; return whether ``large`` was free
    while the run waited, and the run's status once let go."""
    holder, let_go = _holding(tenant.id, model, small)
    try:

        def run():
            with tenant_scope(tenant.id):
                return deletion_run(operation_id=operation.id)

        runner = in_thread(run, name="run")
        for _ in range(1500):
            if someone_waits_for_a_lock() or not runner.is_alive():
                break
            threading.Event().wait(0.02)
        assert runner.is_alive(), f"the run did not wait: {runner.error or runner.result}"
        free = _free(tenant.id, model, large)
    finally:
        let_go.set()
        holder.wait(30)
    runner.wait(60)
    assert runner.error is None, runner.error
    return free, runner.result


def test_the_traces_step_locks_the_traces_it_scrubs_in_id_order(tenant, owner, private_queue):
    memory, kept = MemoryFactory(subject=owner), MemoryFactory(subject=owner)
    for pk in (LARGE, SMALL):  # stored in this order: the table's order is not the ids'
        RetrievalTrace.objects.create(
            id=pk, tenant=tenant, subject=owner, mode="task", cited_ids=[memory.id, kept.id]
        )
    assert _stored_first("memory_core_retrievaltrace", [SMALL, LARGE]) == LARGE
    operation = deletion_request(
        principal=SystemPrincipal(tenant_id=tenant.id), memory_id=memory.id
    )

    free, status = _run_blocked_at(tenant, operation, RetrievalTrace, SMALL, LARGE)

    assert free, "the run held the trace of the larger id while it waited for the smaller"
    assert status == DeletionOperation.State.COMPLETED
    assert list(RetrievalTrace.objects.filter(cited_ids__overlap=[memory.id])) == []


def test_the_events_step_locks_the_events_it_scrubs_in_id_order(tenant, owner, private_queue):
    memory = MemoryFactory(subject=owner)
    small, large = 10**12, 10**12 + 1
    for pk in (large, small):  # stored in this order
        MemoryEvent.objects.create(
            id=pk,
            tenant=tenant,
            memory_id=memory.id,
            action=MemoryEvent.Action.REVOKED,
            actor_type=MemoryEvent.ActorType.SYSTEM,
            details={"reason": "She told me she moved to Lisbon."},
        )
    assert _stored_first("memory_core_memoryevent", [small, large]) == large
    operation = deletion_request(
        principal=SystemPrincipal(tenant_id=tenant.id), memory_id=memory.id
    )

    free, status = _run_blocked_at(tenant, operation, MemoryEvent, small, large)

    assert free, "the run held the event of the larger id while it waited for the smaller"
    assert status == DeletionOperation.State.COMPLETED
    details = MemoryEvent.objects.filter(pk__in=[small, large]).values_list("details", flat=True)
    assert list(details) == [{}, {}]
