"""Two beat schedulers (or a beat restarted mid-round) must not double-run the sweeps.

Both sweeps run at the same instant in two threads (two database connections) over the same
stale work; each piece of work must be done exactly once.
"""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.deletion.retention import retention_apply
from memory_core.deletion.services import deletion_request
from memory_core.deletion.sweep import deletion_sweep
from memory_core.models import DeletionOperation, MemoryEvent, Status, Tombstone
from memory_core.principals import SystemPrincipal
from memory_core.rls import platform_scope
from tests.factories import MemoryFactory, SubjectFactory
from tests.threads import errors_of, in_thread


def _twice(function):
    """Run ``function`` in two threads released together; return both results."""
    barrier = threading.Barrier(2)

    def run():
        barrier.wait(timeout=10)
        # Beat's tasks run the sweeps in platform mode (memory_core/tasks.py).
        with platform_scope("test: beat"):
            return function()

    threads = [in_thread(run), in_thread(run)]
    assert errors_of(*threads) == []
    return [thread.result for thread in threads]


@pytest.mark.django_db(transaction=True)
def test_two_deletion_sweeps_redrive_each_stale_operation_once(tenant):
    subject = SubjectFactory(tenant=tenant)
    principal = SystemPrincipal(tenant_id=tenant.id)
    operations = [
        deletion_request(principal=principal, memory_id=MemoryFactory(subject=subject).id)
        for _ in range(6)
    ]
    DeletionOperation.objects.filter(pk__in=[o.pk for o in operations]).update(
        requested_at=timezone.now() - timedelta(minutes=10), last_attempt_at=None
    )
    first, second = _twice(lambda: deletion_sweep(stale_seconds=60))
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(str(o.pk) for o in operations)


@pytest.mark.django_db(transaction=True)
def test_two_retention_sweeps_expire_and_delete_each_memory_once(tenant):
    subject = SubjectFactory(tenant=tenant)
    past = timezone.now() - timedelta(days=1)
    expiring = [
        MemoryFactory(subject=subject, valid_from=past - timedelta(days=1), valid_until=past)
        for _ in range(5)
    ]
    revoked = [MemoryFactory(subject=subject, status=Status.REVOKED) for _ in range(4)]
    _twice(retention_apply)
    expired_events = MemoryEvent.objects.filter(
        memory_id__in=[m.id for m in expiring], action=MemoryEvent.Action.EXPIRED
    )
    assert expired_events.count() == len(expiring)
    # Revoked preferences are deleted by retention: one tombstone, one operation each.
    assert Tombstone.objects.filter(memory_id__in=[m.id for m in revoked]).count() == len(revoked)
    ops = DeletionOperation.objects.filter(tenant=tenant, requested_by_id="retention")
    assert sum(len(o.memory_ids) for o in ops) == len(revoked)
