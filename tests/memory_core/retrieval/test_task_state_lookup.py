"""The task-state lookup: the state of the request's task (its task_id or its ``task:<id>``
scope), and of its session unless that state is bound to another task (DESIGN.md: an exact
active-state lookup). A request of task T2 in session S1 was given T1's state, scored as
"active state of this task"."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone

from memory_core.models import Memory, Subject
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval import pipeline
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory, insert_memories, write_body
from tests.memory_core.retrieval.conftest import draft

pytestmark = pytest.mark.django_db


def state(subject, content, *, session_id, task_id):
    return MemoryDraft(
        subject=subject,
        memory_type="task_state",
        content=content,
        authority="confirmed_system",
        source_type="admin",
        session_id=session_id,
        task_id=task_id,
    )


def resume(api_client, **context):
    body = {
        "query": "Where was I?",
        "intent": "resume_task",
        "context": {"user_id": "dana", **context},
    }
    response = api_client.post("/api/v1/retrieve", body, format="json")
    assert response.status_code == 200, response.content
    return {item["id"]: item for item in response.json()["items"]}


def test_another_tasks_state_in_the_session_is_not_this_tasks(api_client, tenant):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    t1, t2, loose = memory_store_many(
        drafts=[
            state(me, "Login page done.", session_id="S1", task_id="T1"),
            state(me, "Checkout form half done.", session_id="S1", task_id="T2"),
            state(me, "Reading the style guide.", session_id="S1", task_id=""),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )

    items = resume(api_client, session_id="S1", task_id="T2")

    assert str(t1.id) not in items
    assert {str(t2.id), str(loose.id)} <= set(items)
    assert items[str(t2.id)]["reason"] == "active state of this task"


def test_a_session_alone_finds_each_of_its_tasks_states(api_client, tenant):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    rows = memory_store_many(
        drafts=[
            state(me, "Login page done.", session_id="S1", task_id="T1"),
            state(me, "Checkout form half done.", session_id="S1", task_id="T2"),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )

    assert {str(row.id) for row in rows} <= set(resume(api_client, session_id="S1"))


def write(api_client, **fields) -> str:
    response = api_client.post("/api/v1/memories", write_body(**fields), format="json")
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def retrieve(api_client, query, *, intent="", **context) -> dict:
    body = {"query": query, "context": {"user_id": "user-1", **context}}
    if intent:
        body["intent"] = intent
    response = api_client.post("/api/v1/retrieve", body, format="json")
    assert response.status_code == 200, response.json()
    return {item["id"]: item for item in response.json()["items"]}


@pytest.mark.parametrize("intent", ["resume_task", ""])
def test_task_state_scoped_to_a_task_is_retrieved_in_that_task(api_client, intent):
    """Stop 57's audit of tasks found that a task_state scoped task:T-1 with no task_id, as
    docs/api.md tells agents to keep each task's state apart, was accepted but never
    retrieved in task T-1 (structured_only or hybrid): the task-state store matched only
    m.task_id and m.session_id. It is now this task's state, in the store and in task_fit."""
    state = write(
        api_client, memory_type="task_state", memory_key="", scope="task:T-1",
        content="Login page done; the settings page is next.",
    )  # fmt: skip
    query = "Where was I with the login page work?"
    items = retrieve(api_client, query, intent=intent, task_id="T-1")
    assert state in items, items
    assert items[state]["reason"] == "active state of this task"
    assert state not in retrieve(api_client, query, intent=intent, task_id="T-2")
    assert state not in retrieve(api_client, query, intent=intent)


def test_any_memory_scoped_to_a_task_is_retrieved_in_that_task_only(api_client):
    """Stop 57's audit of tasks found a task's state scoped task:T-1 out of every retrieval
    of T-1; a memory of any other type scoped to it now holds as it did: retrieved in task
    T-1, never in T-2 nor without a task (the request's scopes hold ``task:<its task_id>``)."""
    rows = {
        "preference": write(
            api_client, scope="task:T-1", content="User prefers tabs in this task's files."
        ),
        "decision": write(
            api_client, memory_type="previous_decision", memory_key="db.engine",
            scope="task:T-1", content="For this task we use SQLite as the database.",
        ),
        "incident": write(
            api_client, memory_type="incident", memory_key="", scope="task:T-1",
            content="The SQLite database file was locked during the migration.",
        ),
    }  # fmt: skip
    asks = {
        "preference": ("What indentation does the user prefer?", "load_preferences"),
        "decision": ("Which database do we use, and was the migration locked?", ""),
        "incident": ("Which database do we use, and was the migration locked?", ""),
    }
    for name, (query, intent) in asks.items():
        assert rows[name] in retrieve(api_client, query, intent=intent, task_id="T-1"), name
        for context in ({"task_id": "T-2"}, {}):
            assert rows[name] not in retrieve(api_client, query, intent=intent, **context), name


def test_the_tasks_own_state_is_not_crowded_out_by_the_sessions_newer_loose_notes(
    api_client, tenant
):
    """Stop 62's audit of tasks found that the task-state store (``build_candidate_sql``,
    CTE ``ts``) ordered the session's state and the task's own together by recency alone
    under its limit of ``max_candidates`` rows, so 40 newer task_state notes of the session
    bound to no task left the request's own task state (scoped ``task:T-1``) out of every
    store. The state of the request's task (its task_id or ``task:<id>`` scope) is now taken
    first, as the structured store takes the request's repo and task rules first."""
    state = write(
        api_client, memory_type="task_state", memory_key="", scope="task:T-1",
        session_id="S1", content="Login page done; the settings page is next.",
    )  # fmt: skip
    with connection.cursor() as cursor:  # written an hour ago
        cursor.execute(
            "UPDATE memory_core_memory SET updated_at = now() - interval '1 hour',"
            " created_at = now() - interval '1 hour',"
            " valid_from = now() - interval '1 hour' WHERE id = %s",
            [state],
        )
    me = Subject.objects.get(tenant=tenant, external_id="user-1")
    # The session's notes since, bound to no task (a store's limit is 40 by default).
    insert_memories(
        me, 45, memory_class="working", memory_type="task_state", memory_key="",
        session_id="S1", content="Loose note {n} about lunch.",
    )  # fmt: skip

    items = retrieve(
        api_client, "Where was I with the login page work?", intent="resume_task",
        session_id="S1", task_id="T-1",
    )  # fmt: skip

    assert state in items, [item["content"] for item in items.values()]


def _task_state_candidates(principal) -> set[str]:
    result = pipeline.retrieve(
        principal=principal,
        request=RetrievalRequest(
            query="Where did we leave the migration?",
            user_id="dana",
            intent="resume_task",
            session_id="s-1",
        ),
    )
    return {c["id"] for c in result.trace["candidates"] if "task_state" in c["sources"]}


def test_the_task_state_store_returns_the_same_rows_for_the_same_data(tenant, agent):
    """Stop 64's audit of retrieval: which task states the store returned among rows written
    at one moment depended on where their tuples lay in the table. Every other store breaks
    ties by id; the task-state store (``build_candidate_sql``, the ``ts`` CTE) ordered by its
    own task first, then ``m.updated_at DESC`` alone before its ``LIMIT``. A batch's rows
    share one moment, so with more of them in a session than ``max_candidates`` the rows left
    out were PostgreSQL's choice: an update that changes no value (a re-embedding, a vacuum's
    or a restore's new placement) changed the candidates, the trace and possibly the package
    of the very same request. Ties are now broken by id."""
    me = SubjectFactory(tenant=tenant, external_id="dana")
    moment = timezone.now() - timedelta(hours=1)  # one batch: one moment
    memory_store_many(
        drafts=[
            draft(
                me,
                f"Migration step {n} of the orders table is done.",
                "task_state",
                session_id="s-1",
                created_at=moment,
            )  # fmt: skip
            for n in range(41)  # one more than the policy's max_candidates (40)
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    principal = AgentPrincipal.from_agent(agent)
    before = _task_state_candidates(principal)
    assert len(before) == 40
    # Rewrite one returned row with its own values: nothing anyone reads changes.
    first = Memory.objects.filter(pk__in=before).order_by("pk").first()
    Memory.objects.filter(pk=first.pk).update(content=F("content"))
    assert _task_state_candidates(principal) == before
