"""Stop 67's audit of policies and retention: the probes, each as a test.

The sweep (``deletion.retention``) and every read (retrieval's statement, ``not_ended``)
judge a memory by one rule (``policy_check.retention_cutoffs``); these check that they agree
at the cut-off itself, whatever the zone ``now`` is given in, on a corrected chain and on a
write still waiting for a reviewer, and that a publication refuses a period no sweep can
read.
"""

import copy
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from memory_core.deletion.retention import retention_delete
from memory_core.deletion.runner import deletion_run
from memory_core.exceptions import ValidationFailed
from memory_core.models import (
    DeletionOperation,
    Memory,
    MemoryClass,
    MemoryType,
    PolicyVersion,
    ReviewItem,
    Status,
    Tombstone,
)
from memory_core.policy_check import InUse
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.selectors.policy import active_retention
from memory_core.services.policy import policy_publish
from tests.factories import MemoryFactory, pending_write_on

pytestmark = pytest.mark.django_db

EPISODIC = timedelta(days=DEFAULT_POLICY["retention"]["episodic_days"])


def _episode(owner, created_at, **fields):
    return MemoryFactory(
        subject=owner, incident=True, created_at=created_at, valid_from=created_at, **fields
    )


def _deleted() -> set:
    return set(Tombstone.objects.values_list("memory_id", flat=True))


def _in_use(owner, now) -> set:
    use = InUse.of(active_retention(owner.tenant_id), now, tenant_id=owner.tenant_id)
    return set(
        Memory.objects.filter(subject=owner, status=Status.ACTIVE)
        .not_ended(use)
        .values_list("pk", flat=True)
    )


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "America/Adak"])
def test_the_sweep_and_the_reads_agree_at_the_cut_off_in_any_zone(owner, zone):
    """A memory written exactly ``episodic_days`` before ``now`` is kept and in use; one a
    microsecond older is deleted and out of use: the same moment for the sweep and the
    reads, whatever the zone the moment is given in (+14:00; -10:00, whose summer time the
    period crosses). In a zone with summer time, ``now - timedelta(days=90)`` is taken on the
    wall clock: the sweep's cut-off moved by an hour, and kept a row an hour past its due."""
    now = datetime(2026, 12, 1, 10, 0, 0, 500_000, tzinfo=UTC)
    given = now.astimezone(ZoneInfo(zone))
    at_cut_off = _episode(owner, now - EPISODIC)
    past_it = _episode(owner, now - EPISODIC - timedelta(microseconds=1))
    # A refused write, ``rejected_days`` (30) after the decision: 1 November, summer time's
    # last day in Adak.
    decided = now - timedelta(days=DEFAULT_POLICY["retention"]["rejected_days"])
    MemoryFactory(subject=owner, status=Status.REJECTED, updated_at=decided)
    refused = MemoryFactory(
        subject=owner, status=Status.REJECTED, updated_at=decided - timedelta(microseconds=1)
    )

    assert _in_use(owner, given) == {at_cut_off.pk}
    retention_delete(now=given)

    assert _deleted() == {past_it.pk, refused.pk}


def test_a_corrected_chain_is_judged_version_by_version(owner):
    """Each version counts from its own write: the old version past the period goes, the
    correction written since stays, in use, with its link to what it replaced."""
    now = timezone.now()
    old = _episode(owner, now - EPISODIC - timedelta(days=1), memory_key="deploy.window")
    old.status = Status.SUPERSEDED
    old.save(update_fields=["status"])
    head = _episode(
        owner, now - timedelta(days=1), memory_key="deploy.window", version=2, supersedes=old
    )

    (operation,) = retention_delete(now=now)
    assert deletion_run(operation_id=operation.id) == "completed"

    assert _deleted() == {old.pk}
    head.refresh_from_db()
    assert (head.status, head.supersedes_id) == (Status.ACTIVE, old.pk)
    assert _in_use(owner, timezone.now()) == {head.pk}


def test_a_write_waiting_for_a_reviewer_past_its_period_goes_with_its_review_item(owner):
    """A pending write the period has passed is deleted like any row of its class, and its
    review item closes: no reviewer is left to approve a row the ledger holds."""
    now = timezone.now()
    head = _episode(owner, now - timedelta(days=1), memory_key="deploy.window")
    old = now - EPISODIC - timedelta(days=1)
    item = pending_write_on(
        head,
        "The deploy window moved to Friday.",
        memory_class=MemoryClass.EPISODIC,
        memory_type=MemoryType.INCIDENT,
        created_at=old,
        valid_from=old,
    )

    (operation,) = retention_delete(now=now)
    assert deletion_run(operation_id=operation.id) == "completed"

    assert _deleted() == {item.memory_id}
    item.refresh_from_db()
    assert (item.state, item.resolution) == (ReviewItem.State.RESOLVED, "deleted")
    assert Memory.objects.get(pk=head.pk).status == Status.ACTIVE


def test_a_memory_another_operation_holds_is_not_taken_twice(owner):
    """A memory whose deletion is queued (another operation's, not run yet) is in the ledger
    already: the sweep opens no second operation for it, now or at its next run."""
    now = timezone.now()
    due = _episode(owner, now - EPISODIC - timedelta(days=1))
    (first,) = retention_delete(now=now)

    assert retention_delete(now=now) == []
    assert DeletionOperation.objects.filter(memory_ids__contains=[due.pk]).count() == 1
    assert deletion_run(operation_id=first.id) == "completed"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("episodic_days", -1),
        ("episodic_days", 0),  # a class's period: at 0 a write ends as it starts
        ("working_hours", 1.5),
        ("episodic_days", "30"),
        ("episodic_days", True),
        ("episodic_days", 36_501),
        ("working_hours", 876_001),
        ("trace_days", -1),
        ("rejected_days", 10**400),
        ("episode_days", 30),  # no such class
    ],
)
def test_a_period_no_sweep_can_read_is_refused_and_the_policy_stays(tenant, key, value):
    before = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retention"][key] = value

    with pytest.raises(ValidationFailed) as refused:
        policy_publish(tenant=tenant, document=document)

    assert refused.value.code == "invalid_policy"
    assert list(refused.value.details) == [f"retention.{key}"]
    assert PolicyVersion.objects.get(tenant=tenant, is_active=True) == before


def test_a_sweep_cut_short_takes_the_most_overdue_rows_first(owner):
    """A rule's batch inherited the model's newest-first order: on a backlog larger than a
    batch, each run deleted the rows just past their due and left the most overdue, content
    and all, for the runs after it (stop 67's audit of retention)."""
    now = timezone.now()
    oldest = _episode(owner, now - EPISODIC - timedelta(days=30))
    _episode(owner, now - EPISODIC - timedelta(days=2))
    _episode(owner, now - EPISODIC - timedelta(days=1))

    (operation,) = retention_delete(now=now, limit=1)

    assert [str(pk) for pk in operation.memory_ids] == [str(oldest.pk)]
