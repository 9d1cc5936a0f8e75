"""Celery's soft time limit ends a deletion run and the sweep's journal catch-up: it is the
task's time running out, never a store's or the journal's failure (stop 61's audit of failure
behaviour; stop 59 made the retention sweep and ``_send_or_leave`` let it through)."""

from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from memory_core.deletion import ledger, stores
from memory_core.deletion import services as deletion_services
from memory_core.deletion.retention import retention_apply
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import DeletionOperation, DeletionStep, MemoryClass, MemoryType
from memory_core.services import revocations
from memory_core.tasks import deletion_sweep
from tests.deletion.journal import journal_lines
from tests.deletion.test_sweep_journal import _revoked_before_0027
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def _out_of_time(*args):  # Celery's signal handler raising where the task is
    raise SoftTimeLimitExceeded()


def test_the_soft_time_limit_inside_a_step_ends_the_deletion_run(
    owner_principal,
    memories,
    journal,
    monkeypatch,
):
    """Stop 61's audit of failure behaviour: the limit arriving in a step's purge ends the
    run, its phase rolled back for the next run. ``runner._run_phase`` recorded it as the
    step's error and went on with every later phase, into the hard kill."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    ran_after = []
    for store in ("exports", "evaluation"):
        real = stores.REGISTRY[store].purge
        monkeypatch.setattr(
            stores.REGISTRY[store],
            "purge",
            lambda ctx, store=store, real=real: ran_after.append(store) or real(ctx),
        )
    monkeypatch.setattr(stores.REGISTRY["primary"], "purge", _out_of_time)

    with pytest.raises(SoftTimeLimitExceeded):
        deletion_run(operation_id=operation.id)

    assert ran_after == []
    step = DeletionStep.objects.get(operation=operation, store="primary")
    assert "SoftTimeLimitExceeded" not in step.last_error
    assert DeletionOperation.objects.get(pk=operation.pk).status != "completed"


def test_the_soft_time_limit_during_the_sweeps_catch_up_is_no_failed_append(
    journal,
    monkeypatch,
):
    """Stop 61's audit of failure behaviour: ``ledger_catch_up`` wrapped the limit into
    ``LedgerAppendFailed``; the sweep logged a false "the journal append failed" and ran
    every later catch-up into the hard kill."""
    monkeypatch.setattr(ledger, "ledger_write_many", _out_of_time)
    with pytest.raises(SoftTimeLimitExceeded):
        ledger.ledger_catch_up([{"operation_id": "00000000-0000-0000-0000-000000000000"}])


def test_the_soft_time_limit_while_the_sweep_records_revocations_ends_the_sweep(
    journal,
    monkeypatch,
):
    """Stop 61's review: the limit arriving as the sweep recorded the memory revocations it
    had journaled was logged as "journaled, but not recorded", and every later catch-up ran
    on (``revocations._catch_up``)."""
    _revoked_before_0027(2)
    monkeypatch.setattr(revocations, "_record", _out_of_time)
    ran = []
    real = revocations._catch_up
    monkeypatch.setattr(
        revocations, "_catch_up", lambda kind, **kw: ran.append(kind.name) or real(kind, **kw)
    )
    with pytest.raises(SoftTimeLimitExceeded):
        deletion_sweep(stale_seconds=0)
    assert len(journal_lines(journal)) == 2  # appended before the limit came
    assert ran == [revocations._REVOCATION.name]


@pytest.mark.django_db(transaction=True)
def test_the_soft_time_limit_in_a_journal_append_after_commit_ends_the_retention_sweep(
    tenant, settings, tmp_path, monkeypatch
):
    """Stop 61's review: the retention sweep commits a deletion a subject, whose journal line
    is appended after the commit; the limit arriving in that append was logged as a failed
    append (by the hook, and by Django's robust ``on_commit``, which swallows any exception),
    and the sweep opened every other subject's deletion into the hard kill
    (``commit_hooks.after_commit``)."""
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "deletion-ledger.jsonl"
    created = timezone.now() - timedelta(hours=30)
    for _ in range(2):
        MemoryFactory(
            subject=SubjectFactory(tenant=tenant),
            memory_type=MemoryType.TASK_STATE,
            memory_class=MemoryClass.WORKING,
            created_at=created,
            valid_from=created,
        )
    appends = []
    monkeypatch.setattr(
        deletion_services, "ledger_write", lambda entry: appends.append(entry) or _out_of_time()
    )
    with pytest.raises(SoftTimeLimitExceeded):
        retention_apply()
    assert len(appends) == 1  # no other subject's deletion was opened after it
    assert DeletionOperation.objects.count() == 1
