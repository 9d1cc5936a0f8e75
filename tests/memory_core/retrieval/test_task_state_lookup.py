"""The task-state lookup: the state of the request's task, and of its session unless that
state is bound to another task (DESIGN.md: an exact active-state lookup). A request of task T2
in session S1 was given T1's state, scored as "active state of this task"."""

import pytest

from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory

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
