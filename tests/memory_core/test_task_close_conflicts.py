"""A task's close expires what was bound to it; a conflict it leaves with one candidate in use
has nothing left to decide and closes (resolution ``task_closed``), as after a revoke."""

import pytest

from memory_core.models import Memory, ReviewItem
from memory_core.services.tasks import task_close
from memory_core.services.writes import memory_write

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
    """One candidate bound to the task, two others not: the close leaves two in use."""
    for content, source in (
        ("Deploy to eu-west-1.", "user_input"),
        ("Deploy to us-east-1.", "model_inference"),
    ):
        memory_write(principal=agent_principal, data=data(content, source, scope="global"))
    item = ReviewItem.objects.get(kind="conflict")
    task_row = Memory.objects.filter(pk__in=item.candidate_ids).first()
    Memory.objects.filter(pk=task_row.pk).update(task_id="T-1")
    third = memory_write(
        principal=agent_principal,
        data=data("Deploy to ap-south-1.", "model_inference", scope="global"),
    )
    item.refresh_from_db()
    assert third.memory.id in item.candidate_ids and len(item.candidate_ids) == 3

    task_close(principal=agent_principal, user_id="user-5", task_id="T-1")

    item.refresh_from_db()
    assert item.state == "open"
