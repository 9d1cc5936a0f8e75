"""A memory past its class's retention is not in use, though stored active until the sweep.

Under the tenant's active policy, retrieval leaves such a row out (stage 4,
``retention_overdue``) and the retention sweep deletes it within minutes. The write path read
"in use" as status and valid_until only (``test_past_end_heads.py``): an approval of a
waiting write past its retention superseded the key's live value, a conflict's winner past it
revoked the live candidate, and writes and corrections were measured against such a head.
"""

import copy
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.exceptions import Conflict
from memory_core.models import Memory, MemoryEvent, PolicyVersion, ReviewItem, Status
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.types import ConflictPlace
from memory_core.services.conflicts import conflict_open, conflict_resolve
from memory_core.services.policy import policy_publish
from memory_core.services.reviews import review_approve
from memory_core.services.writes import memory_write
from tests.api.test_memories import URL
from tests.factories import (
    MemoryFactory,
    approve_workflow_consent,
    pending_write_on,
    write_body,
)
from tests.memory_core.test_past_end_heads import KEY, approve_an_inference_on, inferred

pytestmark = pytest.mark.django_db


def _keep_preferences(tenant, days: int) -> None:
    """Publish the active policy again, keeping preferences ``days`` days (the defaults:
    until revoked)."""
    active = PolicyVersion.objects.filter(tenant=tenant, is_active=True).first()
    document = copy.deepcopy(active.document if active else DEFAULT_POLICY)
    document["retention"]["preference_days"] = days
    policy_publish(tenant=tenant, document=document, note=f"preferences kept {days} days")


def _written_days_ago(memory: Memory, days: int) -> None:
    then = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(created_at=then, valid_from=then)
    memory.refresh_from_db()


@pytest.fixture
def overdue(tenant, subject):
    """An explicit preference written 40 days ago, under a policy now keeping them 30 days:
    stored active, with no valid_until, and past its class's retention."""
    head = MemoryFactory(subject=subject, memory_key=KEY, content="Prefers concise answers.")
    _written_days_ago(head, 40)
    _keep_preferences(tenant, 30)
    return head


def test_an_approval_of_a_write_past_its_retention_is_refused_and_the_live_head_stays(
    tenant, subject, reviewer
):
    """The write waited 40 days; the key's head is a recent correction; the policy now keeps
    preferences 30 days. Approved, the overdue write superseded the live head, and the sweep
    then deleted it: the key was left with no usable value."""
    live = MemoryFactory(subject=subject, memory_key=KEY, content="Prefers detailed answers.")
    item = pending_write_on(live, "Prefers concise answers, for the user's eyesight.")
    _written_days_ago(item.memory, 40)
    _keep_preferences(tenant, 30)
    with pytest.raises(Conflict) as refused:
        review_approve(principal=reviewer, item_id=item.id, reason="Checked with the user.")
    assert refused.value.code == "review_expired"
    assert "policy" in refused.value.message
    live.refresh_from_db()
    assert live.status == Status.ACTIVE
    assert Memory.objects.get(pk=item.memory_id).status == Status.PENDING_APPROVAL
    assert ReviewItem.objects.get(pk=item.pk).state == "open"  # a reviewer rejects it


def test_an_approval_within_the_retention_still_supersedes_the_head(tenant, subject, reviewer):
    """The control: written 20 days ago, under the same 30 days, the approval goes through."""
    live = MemoryFactory(subject=subject, memory_key=KEY, content="Prefers detailed answers.")
    item = pending_write_on(live, "Prefers concise answers, for the user's eyesight.")
    _written_days_ago(item.memory, 20)
    _keep_preferences(tenant, 30)
    review_approve(principal=reviewer, item_id=item.id, reason="Checked with the user.")
    live.refresh_from_db()
    assert live.status == Status.SUPERSEDED
    assert Memory.objects.get(pk=item.memory_id).supersedes_id == live.pk


def test_an_approval_is_not_measured_against_a_head_past_its_retention(overdue, reviewer):
    """A waiting inference on the key, approved: it opened a conflict with the overdue head,
    a memory no agent is given (``approval_head``, ``heads_on_key``)."""
    approved = approve_an_inference_on(overdue, reviewer)
    assert approved.status == Status.ACTIVE and approved.supersedes_id is None
    assert not ReviewItem.objects.filter(kind="conflict").exists()
    overdue.refresh_from_db()
    assert overdue.status == Status.ACTIVE  # the sweep deletes it; nothing else changed


def test_a_write_on_a_key_whose_head_is_past_its_retention_is_not_measured_against_it(
    agent_principal, tenant, subject, overdue
):
    """An inference on the key was answered "kept as a separate, non-winning chain" and
    opened a conflict with the overdue explicit head (``writes._heads``)."""
    approve_workflow_consent(tenant, "user_preference")
    _keep_preferences(tenant, 30)  # again: the consent's policy keeps them until revoked
    result = memory_write(principal=agent_principal, data=inferred(subject))
    assert result.decision == "accepted", result.rule_codes
    assert "supersession.conflict_lower_authority" not in result.rule_codes
    assert result.memory.supersedes_id is None
    assert not ReviewItem.objects.filter(kind="conflict").exists()


def test_a_write_on_a_key_whose_head_is_within_its_retention_is_measured_against_it(
    agent_principal, tenant, subject, overdue
):
    """The control: the same head written 20 days ago is in use, and the inference is a
    separate, non-winning chain in conflict with it, as before."""
    _written_days_ago(overdue, 20)
    approve_workflow_consent(tenant, "user_preference")
    _keep_preferences(tenant, 30)
    result = memory_write(principal=agent_principal, data=inferred(subject))
    assert "supersession.conflict_lower_authority" in result.rule_codes
    assert ReviewItem.objects.filter(kind="conflict", state="open").exists()


def test_a_correction_of_a_memory_past_its_retention_is_refused(api_client, agent, overdue):
    """Answered 201 and superseded: the overdue fact was put back in use as a new version
    (written now, so within the retention) the sweep no longer deletes."""
    Memory.objects.filter(pk=overdue.pk).update(agent=agent)
    response = api_client.post(
        f"{URL}/{overdue.pk}/supersede",
        {
            "content": "Prefers concise answers.",
            "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-9"},
        },
        format="json",
    )
    assert response.status_code == 409, response.json()
    error = response.json()["error"]
    assert error["code"] == "not_chain_head"
    assert "retention" in error["message"]
    overdue.refresh_from_db()
    assert overdue.status == Status.ACTIVE
    assert Memory.objects.filter(subject=overdue.subject).count() == 1


def test_a_correction_waiting_past_its_retention_is_not_already_waiting(api_client, tenant):
    """Sent again, a sensitive correction was answered "already waiting" with the earlier
    one, which can no longer be approved (``review_expired``): the person's correction
    reached no reviewer that could take it."""
    first = api_client.post(URL, write_body(), format="json")
    assert first.status_code == 201, first.json()
    head_id = first.json()["memory"]["id"]
    correction = {
        "content": "User prefers concise answers.",
        "sensitivity": "sensitive",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"},
    }
    waiting = api_client.post(f"{URL}/{head_id}/supersede", correction, format="json")
    assert waiting.status_code == 202, waiting.json()
    stale_id = waiting.json()["memory_id"]
    _written_days_ago(Memory.objects.get(pk=stale_id), 40)
    _keep_preferences(tenant, 30)
    again = api_client.post(f"{URL}/{head_id}/supersede", correction, format="json")
    assert again.status_code == 202, again.json()
    assert again.json()["memory_id"] != stale_id
    assert Memory.objects.filter(status=Status.PENDING_APPROVAL).count() == 2


def _conflict_of_inferences(tenant, subject, *, old_days: int):
    """Two inferences on one key in conflict (an open item), the first written ``old_days``
    ago, the second today; return (the item, the old one, the new one)."""
    old, new = (
        MemoryFactory(subject=subject, memory_key=KEY, content=content,
                      authority="model_inference", source_type="model_inference")
        for content in ("Prefers concise answers.", "Prefers detailed answers.")
    )  # fmt: skip
    item = conflict_open(
        tenant_id=tenant.id, subject_id=subject.id, memory_key=KEY,
        place=ConflictPlace.of(old), candidate_ids=[old.id, new.id],
    )  # fmt: skip
    # Aged once the item stands: a row already past its retention opens no conflict.
    _written_days_ago(old, old_days)
    return item, old, new


@pytest.fixture
def rivals(tenant, subject):
    """Two inferences on one key in conflict (an open item): the first written 40 days ago,
    past its retention under a policy keeping preferences 30 days; the second today."""
    _keep_preferences(tenant, 30)
    return _conflict_of_inferences(tenant, subject, old_days=40)


def test_a_winner_past_its_retention_is_not_active_and_nothing_changes(rivals, reviewer):
    """Chosen, the overdue row (given to no agent, deleted by the sweep) revoked the only
    candidate still in use."""
    item, old, new = rivals
    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                         winner_id=old.id, reason="the old one")  # fmt: skip
    assert refused.value.code == "winner_not_active"
    assert "retention" in refused.value.message
    assert ReviewItem.objects.get(pk=item.id).state == "open"
    assert Memory.objects.get(pk=new.pk).status == Status.ACTIVE
    assert not MemoryEvent.objects.filter(
        action__in=["revoked", "conflict_resolved"], memory_id__in=[old.id, new.id]
    ).exists()


def test_choosing_the_live_winner_leaves_a_loser_past_its_retention_to_the_sweep(rivals, reviewer):
    item, old, new = rivals
    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=new.id, reason="the live one")  # fmt: skip
    assert Memory.objects.get(pk=old.pk).status == Status.ACTIVE  # the sweep deletes it
    assert not MemoryEvent.objects.filter(action="revoked", memory_id=old.id).exists()


def test_without_an_active_policy_nothing_is_past_its_retention(tenant, subject, reviewer):
    """As retrieval and the sweep read it: no active policy limits nothing (not the
    defaults' ``inferred_days``), and an old inference still wins."""
    PolicyVersion.objects.filter(tenant=tenant).update(is_active=False)
    item, old, new = _conflict_of_inferences(tenant, subject, old_days=400)
    conflict_resolve(principal=SystemPrincipal(tenant_id=tenant.id), item_id=item.id,
                     outcome="choose_winner", winner_id=old.id, reason="the old one")  # fmt: skip
    assert Memory.objects.get(pk=new.pk).status == Status.REVOKED
