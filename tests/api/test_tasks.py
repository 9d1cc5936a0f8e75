"""``POST /api/v1/tasks/close``: what was bound to a finished task stops being used."""

import json
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


def test_closing_a_task_leaves_a_preference_that_merely_carries_the_task_id(api_client):
    """Stop 57's audit of tasks found that a close expired every memory carrying the task's
    task_id: a global explicit preference (and an incident) written while the task ran was
    gone from every later retrieval. By its task_id a close now expires the task's working
    state and its decisions only (task_state, previous_decision); whatever is scoped to the
    task still expires whole, and the other types keep their class's retention."""
    rows = {
        "preference": write(api_client, task_id="T-1"),  # global, explicit
        "incident": write(
            api_client, memory_type="incident", memory_key="", task_id="T-1",
            content="The staging deploy failed on a missing migration.",
        ),
        "decision": write(
            api_client, memory_type="previous_decision", memory_key="db.engine", task_id="T-1",
            content="For this task we use SQLite.",
        ),
        "state": write(
            api_client, memory_type="task_state", memory_key="", task_id="T-1",
            content="Login page done.",
        ),
        "scoped_preference": write(
            api_client, memory_key="style.indent", scope="task:T-1",
            content="User prefers tabs in this task's files.",
        ),
    }  # fmt: skip
    closed = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert closed.status_code == 200, closed.json()
    assert sorted(closed.json()["expired"]) == sorted(
        [rows["decision"], rows["state"], rows["scoped_preference"]]
    )
    statuses = {name: Memory.objects.get(pk=pk).status for name, pk in rows.items()}
    assert statuses == {
        "preference": "active", "incident": "active", "decision": "expired", "state": "expired",
        "scoped_preference": "expired",
    }  # fmt: skip


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


@pytest.mark.parametrize(
    ("task_id", "code"),
    [("\ud800", "surrogate_characters_not_allowed"), ("T\u202e1", "bidi_controls_not_allowed")],
)
def test_a_close_by_an_id_no_write_can_store_is_a_400(api_client, task_memories, task_id, code):
    """Stop 57's audit of tasks found this holding: a lone surrogate or a bidirectional
    control in a close's task_id is the write's 400, and nothing is expired."""
    body = json.dumps({"user_id": "user-1", "task_id": task_id})
    response = api_client.post(CLOSE, body, content_type="application/json")
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["details"]["task_id"][0]["code"] == code
    assert not Memory.objects.filter(status="expired").exists()


def test_a_task_named_in_words_is_closed(api_client):
    """Stop 57's audit of tasks found this holding: a task id of any letters (``Sprint 12
    review``) names a scope, and its close expires what is scoped to it."""
    scoped = write(
        api_client, memory_type="previous_decision", memory_key="review.format",
        scope="task:Sprint 12 review", content="For this review we demo on staging.",
    )  # fmt: skip
    body = {"user_id": "user-1", "task_id": "Sprint 12 review"}
    response = api_client.post(CLOSE, body, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["expired"] == [scoped]


def test_a_correction_of_task_state_stays_bound_and_an_expired_one_is_not_corrected(api_client):
    """Stop 57's audit of tasks found this holding: a correction inherits the task_id, so the
    close expires the new version (the old one is superseded), and a correction of the
    expired state is a 409: the closed task's state is not brought back."""
    source = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"}
    old = write(
        api_client, memory_type="task_state", memory_key="task.progress", session_id="s-1",
        task_id="T-1", content="Login page done.",
    )  # fmt: skip
    correction = {"content": "Login and settings pages done.", "source": source}
    corrected = api_client.post(f"/api/v1/memories/{old}/supersede", correction, format="json")
    new = corrected.json()["memory"]["id"]
    closed = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert closed.json()["expired"] == [new]
    again = api_client.post(
        f"/api/v1/memories/{new}/supersede", {"content": "All done.", "source": source},
        format="json",
    )  # fmt: skip
    assert again.status_code == 409, again.json()
    assert Memory.objects.get(pk=new).status == "expired"


def test_closing_one_task_does_not_expire_another_tasks_state(api_client):
    """Stop 62's audit of tasks found that a memory could belong to two tasks: a write with
    ``task_id`` T-1 and scope ``task:T-2`` was accepted (``parse_candidate`` never compared
    them); retrieval read it as T-2's state, but the close of T-1 (``bound_to_task``) expired
    it too, while T-2 still ran. Such a write is refused now, 400 ``invalid_scope`` with a
    sentence naming both, by the single write and the batch (and ``import_memories``, which
    share the parser); a correction takes neither field, so it cannot make one; the same task
    in both is a write as before, and only its task's close expires it."""
    body = write_body(
        memory_type="task_state", memory_key="", scope="task:T-2", task_id="T-1",
        content="Checkout form half done; card validation next.",
    )  # fmt: skip
    single = api_client.post("/api/v1/memories", body, format="json")
    batch = api_client.post(
        "/api/v1/memories/batch", {"items": [write_body(), body]}, format="json"
    )

    assert single.status_code == batch.status_code == 400, (single.json(), batch.json())
    [refused] = single.json()["error"]["details"]["scope"]
    assert refused["code"] == "invalid_scope"
    assert "task:T-2" in refused["message"] and "T-1" in refused["message"]
    assert batch.json()["error"]["details"] == {"items.1.scope": [refused]}
    assert not Memory.objects.exists()
    state = write(
        api_client, memory_type="task_state", memory_key="", scope="task:T-2", task_id="T-2",
        content="Checkout form half done; card validation next.",
    )  # fmt: skip
    source = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"}
    corrected = api_client.post(
        f"/api/v1/memories/{state}/supersede",
        {"content": "Checkout form done.", "source": source, "task_id": "T-1"},
        format="json",
    )
    assert corrected.status_code == 400, corrected.json()
    assert corrected.json()["error"]["details"]["task_id"][0]["code"] == "unknown_field"

    closed = api_client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")

    assert closed.json()["expired"] == []
    assert Memory.objects.get(pk=state).status == "active"
