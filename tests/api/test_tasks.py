"""``POST /api/v1/tasks/close``: what was bound to a finished task stops being used."""

import uuid

import pytest

from memory_core.models import Memory, MemoryEvent
from memory_core.subject_tokens import subject_token_issue
from tests.factories import write_body

pytestmark = pytest.mark.django_db

CLOSE = "/api/v1/tasks/close"


def write(client, **fields):
    response = client.post("/api/v1/memories", write_body(**fields), format="json")
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


@pytest.fixture
def task_memories(api_client):
    state = {"memory_type": "task_state", "memory_key": "", "session_id": "s-1"}
    return {
        "state": write(api_client, **state, task_id="T-1", content="Login page done."),
        "decision": write(
            api_client,
            memory_type="previous_decision",
            memory_key="db.engine",
            scope="task:T-1",
            content="For this task we use SQLite.",
        ),  # fmt: skip
        "other_task": write(api_client, **state, task_id="T-2", content="Settings page next."),
        "preference": write(api_client),
    }


def test_closing_a_task_expires_what_was_bound_to_it(api_client, task_memories):
    # The seed: "A task decision should usually expire when the task closes."
    response = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert response.status_code == 200, response.json()
    assert sorted(response.json()["expired"]) == sorted(
        [task_memories["state"], task_memories["decision"]]
    )
    statuses = dict(Memory.objects.values_list("pk", "status"))
    assert {name: statuses[uuid.UUID(pk)] for name, pk in task_memories.items()} == {
        "state": "expired", "decision": "expired", "other_task": "active", "preference": "active",
    }  # fmt: skip
    event = MemoryEvent.objects.get(memory_id=task_memories["decision"], action="expired")
    assert event.reason_code == "task_closed" and event.actor_type == "agent"
    retrieved = api_client.post(
        "/api/v1/retrieve",
        {"query": "Where was I?", "intent": "resume_task",
         "context": {"user_id": "user-1", "session_id": "s-1", "task_id": "T-1"}},
        format="json",
    ).json()  # fmt: skip
    assert not {item["id"] for item in retrieved["items"]} & {
        task_memories["state"],
        task_memories["decision"],
    }
    again = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert again.json()["expired"] == []  # closing twice changes nothing more


def test_closing_a_task_expires_its_writes_waiting_for_a_reviewer_and_closes_their_items(
    api_client, tenant
):
    """A sensitive write bound to the task waited for a reviewer through the close; approved
    later, it became the closed task's active state."""
    from memory_core.exceptions import Conflict
    from memory_core.models import ReviewItem
    from memory_core.principals import SystemPrincipal
    from memory_core.services.reviews import review_approve

    response = api_client.post(
        "/api/v1/memories",
        write_body(
            memory_type="task_state", memory_key="", session_id="s-1", task_id="T-1",
            content="The user has asthma; the plan avoids running.",
        ),
        format="json",
    )  # fmt: skip
    assert response.status_code == 202, response.json()
    pending = response.json()["memory_id"]
    closed = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert closed.json()["expired"] == [pending]
    assert Memory.objects.get(pk=pending).status == "expired"
    item = ReviewItem.objects.get(memory_id=pending)
    assert (item.state, item.resolution) == ("resolved", "task_closed")
    with pytest.raises(Conflict) as refused:
        review_approve(principal=SystemPrincipal(tenant_id=tenant.id), item_id=item.id, reason="ok")
    assert refused.value.code == "review_closed"
    assert Memory.objects.get(pk=pending).status == "expired"


def test_a_task_close_stays_within_the_agents_grant(api_client, agent, task_memories):
    agent.write_types = ["task_state"]
    agent.save(update_fields=["write_types"])
    response = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert response.json()["expired"] == [task_memories["state"]]
    assert response.json()["outside_grant"] == 1  # the decision: not a type it may write
    agent.write_types = ["task_state", "previous_decision"]
    agent.any_subject = False
    agent.save(update_fields=["write_types", "any_subject"])
    refused = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "subject_not_granted"
    token = subject_token_issue(tenant_id=agent.tenant_id, agent_id=agent.id, user_id="user-1")
    allowed = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json",
                              HTTP_X_MEMLEDGER_SUBJECT_TOKEN=token)  # fmt: skip
    assert allowed.json()["expired"] == [task_memories["decision"]]


@pytest.mark.parametrize(
    "body",
    [{}, {"user_id": "user-1"}, {"user_id": "user-1", "task_id": "T-1", "scope": "all"},
     {"user_id": "user-1", "task_id": "x" * 201}, {"user_id": "u\x00", "task_id": "T-1"}],
)  # fmt: skip
def test_a_bad_close_is_a_400_and_changes_nothing(api_client, task_memories, body):
    response = api_client.post(CLOSE, body, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_input"
    assert not Memory.objects.filter(status="expired").exists()


def test_an_unknown_subject_or_task_expires_nothing(api_client, task_memories, other_api_client):
    for client, body in ((api_client, {"user_id": "nobody", "task_id": "T-1"}),
                         (api_client, {"user_id": "user-1", "task_id": "T-9"}),
                         (other_api_client, {"user_id": "user-1", "task_id": "T-1"})):  # fmt: skip
        response = client.post(CLOSE, body, format="json")
        assert response.status_code == 200 and response.json()["expired"] == []
    assert not Memory.objects.filter(status="expired").exists()
