"""A tenant-isolation and authorization review: holes found, each shut by its fix.

Inside one tenant an agent's grant (read types, maximum sensitivity, its subject token)
bounds what it may read, change and learn of, on every path: a write never supersedes, or
tells of, a memory its writer may not see; closing a task expires only what the agent may
see; and an agent bound to one subject cannot tell, from any answer, which other subjects
exist or are being deleted. Each test here failed before its fix.
"""

import pytest
from django.utils import timezone

from memory_core.models import Memory, ReviewItem, Status
from memory_core.subject_tokens import subject_token_issue
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, write_body

pytestmark = pytest.mark.django_db

CLOSE = "/api/v1/tasks/close"


@pytest.fixture
def user_1(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


def write_answers(client, body) -> list[dict]:
    """The decision on ``body`` written alone and, on a fresh key, in a batch."""
    single = client.post("/api/v1/memories", body, format="json")
    assert single.status_code == 201, single.json()
    batch = client.post(
        "/api/v1/memories/batch",
        {"items": [{**body, "memory_key": f"{body['memory_key']}.batch"}]},
        format="json",
    )
    assert batch.status_code == 200, batch.json()
    return [single.json(), batch.json()["results"][0]]


# Why the head is not the agent's to see: its sensitivity, or its type.
UNSEEN = ["above its maximum sensitivity", "of a type it may not read"]


def unseen(why: str, memory_type: str) -> tuple[dict, dict]:
    """Return (an agent's grant, the fields of a ``memory_type`` row it may not see)."""
    if why == UNSEEN[0]:
        return {"max_sensitivity": "personal"}, {"sensitivity": "restricted"}
    return {"read_types": [], "write_types": [memory_type]}, {}


@pytest.mark.parametrize("why", UNSEEN)
def test_a_write_never_supersedes_a_head_its_writer_may_not_see(tenant, user_1, why):
    grant, hidden = unseen(why, "user_preference")
    heads = [
        MemoryFactory(subject=user_1, memory_key=key, content="Hidden fact.", **hidden)
        for key in ("style.answers", "style.answers.batch")
    ]
    answers = write_answers(client_for(AgentFactory(tenant=tenant, **grant)), write_body())
    for answer in answers:
        assert answer["decision"] == "accepted"
        assert "supersession.supersedes" not in answer["rule_codes"]
        # A writer that may not read its type is answered without the memory (stop 56).
        assert (answer["memory"] is None) == (why == UNSEEN[1])
    # Neither changed nor told of: a chain of its own beside the head, version 1.
    written = Memory.objects.filter(subject=user_1).exclude(pk__in=[head.pk for head in heads])
    assert sorted(written.values_list("memory_key", "supersedes_id", "version")) == [
        ("style.answers", None, 1),
        ("style.answers.batch", None, 1),
    ]
    for head in heads:
        head.refresh_from_db()
        assert head.status == Status.ACTIVE


def test_a_weaker_write_opens_no_conflict_with_a_head_its_writer_may_not_see(tenant, user_1):
    MemoryFactory(
        subject=user_1,
        memory_key="style.answers",
        content="Set by an admin, restricted.",
        authority="explicit_admin",
        source_type="admin",
        sensitivity="restricted",
    )
    client = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    response = client.post("/api/v1/memories", write_body(), format="json")
    assert response.status_code == 201, response.json()
    # Before, "supersession.conflict_lower_authority" and a conflict item said that a
    # stronger memory it may not read stands on the key.
    assert not [code for code in response.json()["rule_codes"] if "conflict" in code]
    assert response.json()["conflict_review_item"] is None
    assert not ReviewItem.objects.filter(kind=ReviewItem.Kind.CONFLICT).exists()


@pytest.mark.parametrize("why", UNSEEN)
def test_closing_a_task_leaves_what_the_agent_may_not_see(tenant, user_1, why):
    task_memory = {"memory_type": "task_state", "memory_class": "working", "memory_key": ""}
    grant, hidden = unseen(why, "task_state")
    hidden_row = MemoryFactory(
        subject=user_1, task_id="T-1", content="Hidden task state.", **task_memory, **hidden
    )
    client = client_for(AgentFactory(tenant=tenant, **grant))
    response = client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert response.status_code == 200, response.json()
    # Before, it was expired and its id answered.
    assert response.json() == {"task_id": "T-1", "expired": [], "outside_grant": 0}
    hidden_row.refresh_from_db()
    assert hidden_row.status == Status.ACTIVE


def test_a_task_close_still_expires_what_the_agent_sees(tenant, user_1):
    seen = MemoryFactory(
        subject=user_1,
        memory_type="task_state",
        memory_class="working",
        memory_key="",
        task_id="T-1",
        content="Visible task state.",
    )
    client = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    response = client.post(CLOSE, {"user_id": "user-1", "task_id": "T-1"}, format="json")
    assert response.json()["expired"] == [str(seen.id)]
    assert Memory.objects.get(pk=seen.pk).status == Status.EXPIRED


def test_a_bound_agent_cannot_tell_a_subject_being_deleted_from_none(tenant, user_1):
    queued = SubjectFactory(tenant=tenant, external_id="ceo@example.com")
    queued.deletion_queued_at = timezone.now()
    queued.deletion_queued_by_agent = AgentFactory(tenant=tenant)
    queued.save(update_fields=["deletion_queued_at", "deletion_queued_by_agent"])
    bound = AgentFactory(tenant=tenant, any_subject=False)
    token = subject_token_issue(tenant_id=tenant.id, agent_id=bound.id, user_id="user-1")
    client = client_for(bound)
    answers = {}
    for subject in ("ceo@example.com", "nobody@example.com"):
        single = client.post(
            "/api/v1/memories",
            write_body(subject=subject),
            format="json",
            HTTP_X_MEMLEDGER_SUBJECT_TOKEN=token,
        )
        batch = client.post(
            "/api/v1/memories/batch",
            {"items": [write_body(subject="user-1"), write_body(subject=subject)]},
            format="json",
            HTTP_X_MEMLEDGER_SUBJECT_TOKEN=token,
        )
        # Before, the subject being deleted was a 503 subject_being_deleted, before admission.
        assert single.status_code == 422, single.json()
        assert batch.status_code == 200, batch.json()
        answers[subject] = (
            single.json()["rule_codes"],
            [item["rule_codes"] for item in batch.json()["results"]][1],
        )
    assert answers["ceo@example.com"] == answers["nobody@example.com"]
    assert answers["ceo@example.com"][0] == ["tenant.subject_not_granted"]
    assert not Memory.objects.filter(subject=queued).exists()
