"""A head past its valid_until is not in use, though stored active until the sweep runs.

``Memory.status_at`` calls such a row expired, and retrieval drops it (stage 5). The write
path read the stored status only: a correction superseded it and put its fact back in use,
and a write or an approval on its key was measured against it (a conflict opened with a
memory no agent is given).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.models import Memory, ReviewItem, Status
from memory_core.services.reviews import review_approve
from memory_core.services.writes import memory_write
from tests.api.test_memories import URL
from tests.factories import MemoryFactory, approve_workflow_consent, pending_write_on

pytestmark = pytest.mark.django_db

KEY = "style.answers"


@pytest.fixture
def expired(subject):
    """An explicit preference whose valid_until passed five minutes ago, stored active."""
    now = timezone.now()
    return MemoryFactory(
        subject=subject,
        memory_key=KEY,
        content="Prefers concise answers.",
        valid_from=now - timedelta(days=10),
        valid_until=now - timedelta(minutes=5),
    )


def inferred(subject, content="Seems to prefer detailed answers.") -> dict:
    return {
        "subject": subject.external_id,
        "memory_type": "user_preference",
        "memory_key": KEY,
        "scope": "global",
        "content": content,
        "source": {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-3"},
    }


def approve_an_inference_on(head, reviewer) -> Memory:
    """Approve a sensitive inference written on ``head``'s key; return the approved row."""
    item = pending_write_on(
        head,
        "Seems to prefer detailed answers, says the user's doctor.",
        authority="model_inference",
        source_type="model_inference",
        consent="workflow",
    )
    review_approve(principal=reviewer, item_id=item.id, reason="ok")
    return Memory.objects.get(pk=item.memory_id)


def test_a_correction_of_a_memory_past_its_valid_until_is_refused(api_client, expired):
    """Answered 201 and superseded, with a new end asked: the expired fact was in use again."""
    response = api_client.post(
        f"{URL}/{expired.pk}/supersede",
        {
            "content": "Prefers concise answers.",
            "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-9"},
            "valid_until": (timezone.now() + timedelta(days=365)).isoformat(),
        },
        format="json",
    )
    assert response.status_code == 409, response.json()
    error = response.json()["error"]
    assert error["code"] == "not_chain_head"
    assert "expired" in error["message"]
    expired.refresh_from_db()
    assert expired.status == Status.ACTIVE  # the sweep marks it expired; nothing else changed
    assert Memory.objects.filter(subject=expired.subject).count() == 1


def test_a_write_on_a_key_whose_head_is_past_its_valid_until_is_not_measured_against_it(
    agent_principal, tenant, subject, expired
):
    """An inference on the key opened a conflict with the expired explicit memory, and was
    answered as "kept as a separate, non-winning chain"."""
    approve_workflow_consent(tenant, "user_preference")
    result = memory_write(principal=agent_principal, data=inferred(subject))
    assert result.decision == "accepted", result.rule_codes
    assert "supersession.conflict_lower_authority" not in result.rule_codes
    assert result.memory.supersedes_id is None
    assert not ReviewItem.objects.filter(kind="conflict").exists()
    expired.refresh_from_db()
    assert expired.status == Status.ACTIVE  # neither superseded nor in conflict


def test_a_write_supersedes_a_head_still_in_use(agent_principal, tenant, subject, expired):
    """The control: a head whose valid_until lies ahead is measured against, as before."""
    Memory.objects.filter(pk=expired.pk).update(valid_until=timezone.now() + timedelta(days=1))
    approve_workflow_consent(tenant, "user_preference")
    result = memory_write(principal=agent_principal, data=inferred(subject))
    assert "supersession.conflict_lower_authority" in result.rule_codes
    assert ReviewItem.objects.filter(kind="conflict", state="open").exists()


def test_an_approval_is_not_measured_against_a_head_past_its_valid_until(expired, reviewer):
    """A waiting inference on the key, approved after the head's end passed, opened a
    conflict with a memory no agent is given."""
    approved = approve_an_inference_on(expired, reviewer)
    assert approved.status == Status.ACTIVE and approved.supersedes_id is None
    assert not ReviewItem.objects.filter(kind="conflict").exists()
    expired.refresh_from_db()
    assert expired.status == Status.ACTIVE
