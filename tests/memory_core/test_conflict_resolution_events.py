"""The events of a conflict's resolution record a policy version, as every event does.

DESIGN.md: every change is an event "with actor, reason code and policy version". A revoke
records the memory's policy version; the revocation of a conflict's loser and the
``conflict_resolved`` event of each candidate recorded none.
"""

import copy

import pytest

from memory_core.models import MemoryEvent
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.policy import policy_publish
from memory_core.services.writes import memory_write
from tests.factories import approve_workflow_consent

pytestmark = pytest.mark.django_db


def data(content: str, source: str = "user_input") -> dict:
    return {
        "subject": "user-5",
        "memory_type": "user_preference",
        "memory_key": "style.answers",
        "scope": "global",
        "content": content,
        "source": {"type": source, "conversation_id": "c", "message_id": "m-1"},
    }


@pytest.mark.parametrize("outcome", ["choose_winner", "keep_both_scoped", "ask_user"])
def test_a_resolutions_events_record_each_memorys_policy_version(
    agent_principal, reviewer, tenant, outcome
):
    approve_workflow_consent(tenant, "user_preference")  # policy version 2
    stated = memory_write(principal=agent_principal, data=data("Prefers concise answers."))
    policy_publish(tenant=tenant, document=copy.deepcopy(DEFAULT_POLICY), note="v3")
    document = copy.deepcopy(DEFAULT_POLICY)
    document["admission"]["workflow_consent_types"] = ["user_preference"]
    policy_publish(tenant=tenant, document=document, note="v4")
    guessed = memory_write(
        principal=agent_principal,
        data=data("Seems to prefer detailed answers.", "model_inference"),
    )
    item = guessed.review_item
    assert item is not None and item.kind == "conflict"
    versions = {stated.memory.id: 2, guessed.memory.id: 4}
    assert {m.id: m.policy_version for m in (stated.memory, guessed.memory)} == versions

    conflict_resolve(
        principal=reviewer,
        item_id=item.id,
        outcome=outcome,
        winner_id=stated.memory.id if outcome == "choose_winner" else None,
        reason="The user said so.",
    )

    resolved = MemoryEvent.objects.filter(
        details__review_item=str(item.id), action="conflict_resolved"
    )
    assert {e.memory_id: e.policy_version for e in resolved} == versions
    if outcome == "choose_winner":
        lost = MemoryEvent.objects.get(memory_id=guessed.memory.id, action="revoked")
        assert (lost.reason_code, lost.policy_version) == ("conflict_lost", 4)
