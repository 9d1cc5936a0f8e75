"""Retention: expiry past valid_until and per-class retention, through deletion operations."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.deletion.retention import retention_apply
from memory_core.deletion.runner import deletion_run
from memory_core.models import (
    Authority,
    DeletionOperation,
    Memory,
    MemoryClass,
    MemoryEvent,
    MemoryType,
    Tombstone,
)
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def _memory(owner, memory_type, memory_class, age, **fields):
    created = timezone.now() - age
    return MemoryFactory(
        subject=owner,
        memory_type=memory_type,
        memory_class=memory_class,
        created_at=created,
        valid_from=created,
        **fields,
    )


def test_retention_expires_and_deletes_by_class(owner):
    working_old = _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=25))
    working_new = _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=2))
    episode_old = _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91))
    episode_new = _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=10))
    preference_old = _memory(
        owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=900)
    )
    revoked = _memory(
        owner,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=3),
        status="revoked",
    )
    inferred_old = _memory(
        owner,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=31),
        authority=Authority.MODEL_INFERENCE,
        source_type="model_inference",
    )
    past_validity = _memory(
        owner,
        MemoryType.PROJECT_CONSTRAINT,
        MemoryClass.PREFERENCE,
        timedelta(days=2),
        valid_until=timezone.now() - timedelta(minutes=1),
    )

    result = retention_apply()

    assert result["expired"] == 1
    past_validity.refresh_from_db()
    assert past_validity.status == "expired"
    assert MemoryEvent.objects.filter(memory_id=past_validity.id, action="expired").count() == 1
    gone = {working_old.id, episode_old.id, revoked.id, inferred_old.id}
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == gone
    reasons = set(DeletionOperation.objects.values_list("reason_code", flat=True))
    assert reasons == {
        "retention:working",
        "retention:episodic",
        "retention:revoked",
        "retention:inferred",
    }
    for operation in DeletionOperation.objects.all():
        assert deletion_run(operation_id=operation.id) == "completed"
    for memory in (working_new, episode_new, preference_old):
        assert Memory.objects.get(pk=memory.id).status == "active"  # preferences until revoked
    assert set(Memory.objects.filter(status="deleted").values_list("pk", flat=True)) == gone

    # A second sweep finds nothing more to do.
    assert retention_apply() == {"expired": 0, "deletion_operations": 0, "memories_deleted": 0}
