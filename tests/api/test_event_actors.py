"""Who acted on a memory, as an agent is told: an agent's id or memledger's own name, never a
person's. A memory's events (``GET /api/v1/memories/{id}``, the one agent answer that holds
them) named the end user who corrected or revoked it and the reviewer who approved or rejected
it by their portal login's id."""

import pytest
from django.contrib.auth import get_user_model

from memory_core.models import MemoryEvent
from memory_core.principals import SubjectPrincipal
from memory_core.services.writes import consent_withdraw, memory_correct, memory_revoke
from tests.factories import write_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"


def alice_of(tenant) -> SubjectPrincipal:
    """The end user ``user-1`` (the subject ``write_body`` writes about) in the portal."""
    from memory_core.models import PortalMembership, Subject

    user = get_user_model().objects.create_user("alice", password="pw-alice-12345")
    subject = Subject.objects.get(tenant=tenant, external_id="user-1")
    PortalMembership.objects.create(user=user, tenant=tenant, role="end_user", subject=subject)
    return SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=user.pk)


def events(api_client, memory_id) -> list[tuple[str, str, str]]:
    detail = api_client.get(f"{URL}/{memory_id}")
    assert detail.status_code == 200, detail.json()
    return [(e["action"], e["actor_type"], e["actor_id"]) for e in detail.json()["events"]]


def written(api_client, **fields) -> str:
    response = api_client.post(URL, write_body(**fields), format="json")
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def test_an_agent_sees_which_agent_wrote_a_memory(api_client, agent):
    memory_id = written(api_client)
    actors = {(a, t, i) for a, t, i in events(api_client, memory_id) if t == "agent"}
    assert actors and all(i == str(agent.id) for _, _, i in actors)


def test_an_end_users_correction_does_not_name_the_user(api_client, agent, tenant):
    first = written(api_client)
    alice = alice_of(tenant)
    result = memory_correct(
        principal=alice, memory_id=first, data={"content": "User prefers long answers."}
    )
    assert result.decision == "accepted"
    seen = events(api_client, result.memory.id)
    assert ("corrected", "user", "") in seen and ("superseded", "user", "") in seen
    # Stored as it was: the portal and the admin still say who.
    assert MemoryEvent.objects.get(memory_id=result.memory.id, action="corrected").actor_id == (
        str(alice.user_id)
    )
    # The agent who wrote the first version is still named.
    assert ("created", "agent", str(agent.id)) in seen or ("admitted", "agent", str(agent.id)) in (
        seen
    )


def test_an_end_users_revoke_and_consent_withdrawal_do_not_name_the_user(api_client, tenant):
    revoked = written(api_client)
    alice = alice_of(tenant)
    memory_revoke(principal=alice, memory_id=revoked, reason="not true any more")
    assert ("revoked", "user", "") in events(api_client, revoked)

    withdrawn = written(
        api_client,
        memory_type="project_constraint",
        memory_key="atlas.lang",
        scope="project:atlas",
        content="Atlas uses Go.",
        consent="workflow",
    )
    consent_withdraw(principal=alice, memory_id=withdrawn)
    assert [e for e in events(api_client, withdrawn) if e[0] == "consent_withdrawn"] == [
        ("consent_withdrawn", "user", "")
    ]


def decided(api_client, reviewer, decision: str, reason: str = "checked") -> str:
    """Return the id of a sensitive write the agent made and ``reviewer`` decided on."""
    body = write_body(memory_key="health.notes", content="User is allergic to dust.")
    pending = api_client.post(URL, body, format="json")
    assert pending.status_code == 202, pending.json()
    item = pending.json()["review_item"]
    token = "a" * 32  # any well-formed token, sent as the cookie and the header
    reviewer.cookies["csrftoken"] = token
    answer = reviewer.post(
        f"/api/v1/review/items/{item}/{decision}",
        {"reason": reason},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert answer.status_code == 200, answer.json()
    return pending.json()["memory_id"]


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_reviewers_decision_does_not_name_the_reviewer(api_client, reviewer, decision):
    memory_id = decided(api_client, reviewer, decision)
    action = {"approve": "approved", "reject": "rejected"}[decision]
    assert [e for e in events(api_client, memory_id) if e[0] == action] == [
        (action, "reviewer", "")
    ]
    stored = MemoryEvent.objects.get(memory_id=memory_id, action=action)
    assert stored.actor_type == "reviewer" and stored.actor_id  # kept for the portal


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_reviewers_reason_is_not_told_to_agents(api_client, reviewer, decision):
    """A reviewer's words stay on the review item (the portal, the reviewer API): the event
    agents read keeps the item's id and the reason code, never the free text, which may
    quote the person's data."""
    reason = "Dana's allergy is already on file at the clinic."
    memory_id = decided(api_client, reviewer, decision, reason=reason)
    detail = api_client.get(f"{URL}/{memory_id}")
    assert detail.status_code == 200
    action = {"approve": "approved", "reject": "rejected"}[decision]
    [event] = [e for e in detail.json()["events"] if e["action"] == action]
    assert set(event["details"]) <= {"review_item", "successor", "supersedes"}
    assert "allergy" not in detail.content.decode()


@pytest.mark.parametrize(
    ("actor_type", "actor_id", "shown"),
    [
        ("agent", "3f0c1d9e-agent", "3f0c1d9e-agent"),
        ("system", "retention", "retention"),
        ("system", "deletion", "deletion"),
        ("user", "41", ""),
        ("reviewer", "42", ""),
        ("admin", "43", ""),
    ],
)
def test_only_an_agents_or_memledgers_id_is_shown(api_client, tenant, actor_type, actor_id, shown):
    memory_id = written(api_client)
    MemoryEvent.objects.create(
        tenant=tenant,
        memory_id=memory_id,
        action=MemoryEvent.Action.CONFLICT_RESOLVED,
        actor_type=actor_type,
        actor_id=actor_id,
    )
    assert events(api_client, memory_id)[-1] == ("conflict_resolved", actor_type, shown)
