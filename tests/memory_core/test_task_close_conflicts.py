"""A task's close expires what was bound to it; a conflict it leaves with one candidate in use
has nothing left to decide and closes (resolution ``task_closed``), as after a revoke."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.models import Memory, ReviewItem
from memory_core.services.tasks import task_close
from memory_core.services.writes import memory_write
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def data(content, source="user_input", scope="task:T-1"):
    return {
        "subject": "user-5",
        "memory_type": "project_constraint",
        "memory_key": "deploy.region",
        "scope": scope,
        "content": content,
        "source": {"type": source, "conversation_id": "c", "message_id": content[:20]},
    }


def test_a_conflict_the_close_settles_is_closed(agent_principal):
    memory_write(principal=agent_principal, data=data("Deploy T-1 to eu-west-1."))
    weak = memory_write(
        principal=agent_principal, data=data("Deploy T-1 to us-east-1.", "model_inference")
    )
    item = weak.review_item
    assert item is not None and item.kind == "conflict" and item.state == "open"

    closed = task_close(principal=agent_principal, user_id="user-5", task_id="T-1")

    assert len(closed.expired) == 2
    item.refresh_from_db()
    assert (item.state, item.resolution) == ("resolved", "task_closed")


def test_a_conflict_with_two_candidates_still_in_use_stays_open(agent_principal):
    """One candidate bound to the task (scoped to it), two others not: the close leaves two in
    use."""
    for content, source in (
        ("Deploy to eu-west-1.", "user_input"),
        ("Deploy to us-east-1.", "model_inference"),
    ):
        memory_write(principal=agent_principal, data=data(content, source, scope="global"))
    item = ReviewItem.objects.get(kind="conflict")
    task_row = Memory.objects.filter(pk__in=item.candidate_ids).first()
    # Scoped to the task: a constraint merely carrying its task_id outlives the close.
    Memory.objects.filter(pk=task_row.pk).update(scope_kind="task", scope_ref="T-1")
    third = memory_write(
        principal=agent_principal,
        data=data("Deploy to ap-south-1.", "model_inference", scope="global"),
    )
    item.refresh_from_db()
    assert third.memory.id in item.candidate_ids and len(item.candidate_ids) == 3

    closed = task_close(principal=agent_principal, user_id="user-5", task_id="T-1")

    assert closed.expired == [task_row.pk]
    item.refresh_from_db()
    assert item.state == "open"


def test_a_candidate_past_its_end_is_not_counted_in_use(tenant, system_principal):
    """docs/api.md (tasks/close): a conflict the close leaves with fewer than two candidates
    in use closes. One past its valid_until keeps the status "active" until the sweep, and
    counted, it kept the conflict open with one candidate to choose (stop 52's audit)."""
    subject = SubjectFactory(tenant=tenant, external_id="user-5")
    episode = {
        "subject": subject,
        "memory_key": "deploy.region",
        "memory_type": "previous_decision",
        "memory_class": "episodic",
        "authority": "model_inference",
        "source_type": "model_inference",
        "confidence": 0.7,
    }
    now = timezone.now()
    in_use = MemoryFactory(content="eu-west-1", **episode)
    past_end = MemoryFactory(
        content="us-east-1",
        valid_from=now - timedelta(days=2),
        valid_until=now - timedelta(hours=1),
        **episode,
    )
    bound = MemoryFactory(content="ap-south-1", task_id="T-1", **episode)
    item = ReviewItem.objects.create(
        tenant=tenant,
        subject=subject,
        kind="conflict",
        memory_key="deploy.region",
        candidate_ids=[in_use.pk, past_end.pk, bound.pk],
    )
    closed = task_close(principal=system_principal, user_id="user-5", task_id="T-1")
    assert closed.expired == [bound.pk]
    item.refresh_from_db()
    assert (item.state, item.resolution) == ("resolved", "task_closed")
