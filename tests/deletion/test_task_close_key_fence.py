"""A task close's journal line replayed while a deletion of another of the subject's keys is
queued (stop 55's audit of tasks; the first test failed on the code before).

docs/operations.md, `memory_task_closed`: "One whose subject's deletion (or its key's) is
queued is not expired ... (the queued deletion removes it)". A live close "expires the rest
and leaves the key's to the worker" (docs/api.md, docs/security.md "Left open"), and the
revocation replay fences only the revoked memory's own key. The task close replay fenced
on any queued key deletion of the subject: the closed task's state, on a key no deletion
would remove, was left in use after the restore. It fences the memory's own key now.
"""

import pytest
from django.utils import timezone

from memory_core.models import Memory, Subject
from memory_core.principals import SystemPrincipal
from memory_core.services.tasks import task_close
from tests.deletion.journal import replay_since
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def journal(settings, tmp_path):
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "deletion-ledger.jsonl"
    settings.MEMLEDGER_BACKUP_RETENTION_DAYS = 35
    return settings.MEMLEDGER_DELETION_LEDGER


@pytest.mark.parametrize(
    ("queued_key", "expired"),
    [("health.notes", True), ("progress", False)],
    ids=["another key", "its own key"],
)
def test_a_task_close_replayed_is_fenced_by_its_own_keys_queued_deletion_only(
    tenant, journal, django_capture_on_commit_callbacks, queued_key, expired
):
    """Another key's queued deletion removes that key only: nothing else would take the
    closed task's state out of use, so the replay expires it, as the close did. Its own key's
    queued deletion is left to remove it, as documented (the control)."""
    owner = SubjectFactory(tenant=tenant)
    state = MemoryFactory(
        subject=owner, memory_type="task_state", memory_class="working",
        memory_key="progress", task_id="ticket-4711",
    )  # fmt: skip
    MemoryFactory(subject=owner, memory_key="health.notes")
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        closed = task_close(
            principal=SystemPrincipal(tenant_id=tenant.id),
            user_id=owner.external_id,
            task_id="ticket-4711",
        )
    assert closed.expired == [state.id]
    # The restored backup: the task's state in use, and a deletion of a key queued.
    Memory.objects.filter(pk=state.pk).update(status="active")
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=1, deletion_queued_key=queued_key
    )

    result = replay_since(backup_time)[0]

    if expired:
        assert result["memories_task_closed_skipped"] == {}
        assert result["memories_task_closed"] == 1
        assert Memory.objects.get(pk=state.pk).status == "expired"
    else:
        assert result["memories_task_closed_skipped"] == {str(state.id): "subject_being_deleted"}
        assert Memory.objects.get(pk=state.pk).status == "active"
