"""A whole subject's deletion and an evaluation run's load read the database's clock.

What a whole subject's deletion takes of its derived stores is bounded in time: the traces
and exports made before its first run, the refused writes and review items made before the
request; and a run's load asks for the deletions not completed before it began. Each bound
was a host's ``timezone.now()`` (the worker's, the web host's, the command host's) compared
with a row's ``created_at`` written on another host's clock (stop 64's audit of deletion,
left open there). Every side of those comparisons is the database's clock now.
"""

from contextlib import contextmanager
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import (
    deletion_request,
    queued_deletions_journal,
    queued_subject_deletion_run,
    subject_deletion_queue,
)
from memory_core.deletion.sweep import deletion_sweep
from memory_core.evaluation import harness, locomo
from memory_core.evaluation.dataset import DatasetError
from memory_core.evaluation.harness import evaluate_dataset
from memory_core.exports import export_create, export_dir
from memory_core.models import AdmissionDecision, Export, MemoryEvent, RetrievalTrace, Tenant
from memory_core.principals import SystemPrincipal
from memory_core.rls import platform_scope
from tests.deletion.test_evaluation_runs import dataset, run_tenants
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db

# How far behind the host of the block is: more than a test takes from its row to its run.
SKEW = timedelta(seconds=30)


@contextmanager
def clock_behind(skew: timedelta = SKEW):
    """Run the block on a host whose clock is ``skew`` behind the others' and the database's
    (``timezone.now`` as the code calls it; a model's default keeps the true one)."""
    true_now = timezone.now
    with mock.patch.object(timezone, "now", lambda: true_now() - skew):
        yield


def _completed_on_a_worker_behind(operation) -> None:
    with clock_behind():
        assert deletion_run(operation_id=operation.id) == "completed"


def test_a_trace_made_just_before_delete_everything_goes_with_it(owner, owner_principal, memories):
    """Stop 65's audit of deletion: the traces step kept the subject's traces made after the
    operation's ``started_at``, the worker's clock, by their ``created_at``, the web host's:
    on a worker half a minute behind, a trace made just before the request (citing none of
    the person's memories, naming them by their subject) read as one made during the run,
    was kept, and the step's check, bounded alike, passed. Both are the database's clock."""
    trace = RetrievalTrace.objects.create(tenant_id=owner.tenant_id, subject=owner, mode="task")
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)

    _completed_on_a_worker_behind(operation)

    assert not RetrievalTrace.objects.filter(pk=trace.pk).exists(), "the trace was kept"


def test_an_export_made_just_before_delete_everything_is_removed(owner, owner_principal, memories):
    """Stop 65's audit of deletion: the exports step removed the subject's exports made
    before the operation's ``started_at`` (the worker's clock) and rewrote those made since
    (the web host's ``created_at``): on a worker half a minute behind, an export made just
    before the request was rewritten, its row and file kept, and the check passed."""
    export = export_create(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
    )
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)

    _completed_on_a_worker_behind(operation)

    assert not Export.objects.filter(pk=export.pk).exists(), "the export was kept, rewritten"
    assert not (export_dir() / export.path).exists()


def _refused_write(owner) -> MemoryEvent:
    """A write about ``owner`` admission refused: its event keeps the writer's reason."""
    decision = AdmissionDecision.objects.create(
        tenant_id=owner.tenant_id,
        subject=owner,
        outcome=AdmissionDecision.Outcome.REJECTED,
        rule_codes=["injection.instruction_override"],
    )
    return MemoryEvent.objects.create(
        tenant_id=owner.tenant_id,
        memory_id=decision.id,
        action=MemoryEvent.Action.REJECTED,
        actor_type="agent",
        details={"decision": str(decision.id), "reason": "She told me about her diagnosis."},
    )


@pytest.mark.parametrize("queued", [False, True], ids=["at once", "queued"])
def test_a_refused_writes_reason_from_just_before_the_request_is_scrubbed(
    owner, owner_principal, memories, queued
):
    """Stop 65's audit of deletion: the events step scrubbed the subject's refused writes
    made before the operation's ``requested_at`` (or the queued mark's moment), the clock of
    the web host that took the request, by their ``created_at``, the clock of the one that
    took the write: a request taken on a host half a minute behind left the writer's reason
    of a write refused just before it, and the check passed. Both are the database's clock."""
    event = _refused_write(owner)
    with clock_behind():  # the web host taking the request
        if queued:
            subject_deletion_queue(principal=owner_principal, subject_id=owner.id)
        else:
            operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    if queued:
        operation = queued_subject_deletion_run(owner.id)

    assert deletion_run(operation_id=operation.id) == "completed"

    event.refresh_from_db()
    assert "reason" not in event.details, "the refused write's reason was kept"


def _deleted_before(load, owner_principal, target):
    """Return ``load``, run once ``target``'s deletion has completed on a worker behind."""

    def deleted_first(*args, **kwargs):
        _completed_on_a_worker_behind(
            deletion_request(principal=owner_principal, memory_id=target.id)
        )
        return load(*args, **kwargs)

    return deleted_first


def test_a_deletion_completed_while_a_run_loads_reaches_it(owner_principal, memories, monkeypatch):
    """Stop 65's audit of deletion: a run's load asked for the deletions completed since it
    began (``evaluation_run_reached``), its start on the command host's clock against the
    operation's ``completed_at`` on the worker's: one completed during the load on a worker
    half a minute behind read as completed before it, and the kept run held its words."""
    target = memories[0]
    load = _deleted_before(harness.load_dataset_memories, owner_principal, target)
    monkeypatch.setattr(harness, "load_dataset_memories", load)

    with pytest.raises(DatasetError, match="run it again"):
        evaluate_dataset(dataset(target.content, "Prefers trains."), keep=True, prefix="eval-clk-")

    assert run_tenants("eval-clk-") == []


def test_a_deletion_completed_while_a_locomo_run_loads_reaches_it(
    owner, owner_principal, monkeypatch
):
    """Stop 65's audit of deletion: the same of ``eval_locomo``'s load."""
    target = MemoryFactory(subject=owner, content="[1 May 2023] A: I like tea.")
    monkeypatch.setattr(locomo, "load", _deleted_before(locomo.load, owner_principal, target))
    turn = {"speaker": "A", "dia_id": "D1:1", "text": "I like tea."}
    question = {"question": "What does A like?", "evidence": ["D1:1"], "category": 1}
    conversation = {"session_1_date_time": "1 May 2023", "session_1": [turn]}
    data = [{"sample_id": "s1", "conversation": conversation, "qa": [question]}]

    with pytest.raises(DatasetError, match="run it again"):
        locomo.evaluate_locomo(data, ks=[1], keep=True)

    with platform_scope("test"):
        assert not Tenant.objects.filter(evaluation_run=True).exists()


def test_the_sweep_on_a_host_ahead_sends_nothing_asked_for_just_now(
    owner, owner_principal, memories, journal, private_queue
):
    """Stop 65's audit of deletion: the deletion sweep took an operation (or a queued mark) as
    stuck by its own host's clock against the moment the web host or the worker wrote: on a
    host an hour fast, every deletion asked for within the hour was sent again each round,
    and every queued mark journaled again. It reads the database's clock now, as they are."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    subject_deletion_queue(principal=owner_principal, subject_id=owner.id, memory_key="k")

    with clock_behind(-timedelta(hours=1)):  # an hour ahead
        assert deletion_sweep(stale_seconds=60) == [], "sent again as if stuck"
        assert queued_deletions_journal(older_than=60) == 0, "journaled again"

    operation.refresh_from_db()
    assert operation.last_attempt_at is None
