"""A request of a subject waits for a deletion of that subject a bounded time
(``MEMLEDGER_SUBJECT_LOCK_WAIT``), never as long as the deletion takes.

A whole subject of hundreds of thousands of memories holds its lock for a minute: a
retrieval or a write of the subject waiting that long outlived gunicorn's 30 s timeout and
took its worker down. Past the wait a retrieval answers without the subject's memories (and
writes no trace naming the subject), and a write, a correction, a task's close, an export or
an approval answers 503 ``subject_being_deleted`` with nothing changed. A subject whose
"delete everything" is queued for a worker is not retrieved from either.
"""

import json
import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from memory_core.deletion.services import queued_subject_deletion_run
from memory_core.exceptions import SubjectBeingDeleted
from memory_core.exports import export_create
from memory_core.locks import subject_deletion_lock
from memory_core.models import (
    DeletionOperation,
    Export,
    Memory,
    RetrievalTrace,
    ReviewItem,
    Subject,
)
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.reviews import review_approve, review_reject
from memory_core.services.writes import memory_write
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import MemoryFactory, SubjectFactory, write_body
from tests.threads import in_thread

RETRIEVE = {
    "query": "How does the user like answers?",
    "intent": "answer_question",
    "context": {"user_id": "user-1"},
}


@pytest.fixture
def user_1(tenant):
    """Subject ``user-1`` (``write_body``'s) with an active preference about answers."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    MemoryFactory(
        subject=subject,
        memory_type="user_preference",
        memory_key="style.answers",
        content="User prefers concise answers.",
    )
    return subject


def being_deleted(subject):
    """Hold ``subject``'s deletion lock in another transaction, as a deletion request does."""
    return held_in_another_transaction(subject.tenant_id, lambda: subject_deletion_lock(subject.pk))


def retrieve(api_client, tenant_id) -> tuple[dict, RetrievalTrace]:
    response = api_client.post("/api/v1/retrieve", RETRIEVE, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    with tenant_scope(tenant_id):
        return data, RetrievalTrace.objects.get(pk=data["trace_id"])


@pytest.mark.django_db(transaction=True)
def test_a_retrieval_reads_nothing_of_a_subject_a_deletion_holds_past_the_wait(
    settings, api_client, user_1
):
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 0.3
    data, trace = retrieve(api_client, user_1.tenant_id)
    assert len(data["items"]) == 1  # readable when no deletion holds it

    with being_deleted(user_1):
        started = time.monotonic()
        data, trace = retrieve(api_client, user_1.tenant_id)
        waited = time.monotonic() - started
    assert data["items"] == [] and data["prompt_tokens"] >= 0
    assert 0.3 <= waited < 5, waited  # waited the setting, not the deletion
    assert trace.subject_id is None and trace.cited_ids == []  # nothing the deletion misses
    scopes = trace.stages["context"]["allowed_scopes"]
    assert scopes == ["global"], scopes
    assert "user-1" not in json.dumps(trace.stages)  # nor the person's id
    assert trace.stages["gate"]["rule"].endswith("+subject_being_deleted")
    assert trace.stages["counts"]["candidates"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_deletion_shorter_than_the_wait_is_waited_for(settings, api_client, user_1):
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 10
    holding, released = threading.Event(), threading.Event()

    def short_deletion():
        with tenant_scope(user_1.tenant_id), transaction.atomic():
            subject_deletion_lock(user_1.pk)
            holding.set()
            time.sleep(0.4)
        released.set()

    deleter = in_thread(short_deletion, released=[holding])
    assert holding.wait(10)
    data, trace = retrieve(api_client, user_1.tenant_id)
    deleter.outcome(10)
    assert released.is_set()
    assert len(data["items"]) == 1 and trace.subject_id == user_1.pk
    assert "subject_being_deleted" not in trace.stages["gate"]["rule"]


@pytest.mark.django_db(transaction=True)
def test_writes_of_a_subject_being_deleted_answer_503_and_store_nothing(
    settings, api_client, user_1
):
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 0.3
    memory = Memory.objects.get(subject=user_1)
    correction = {
        "content": "User prefers very short answers.",
        "source": {"type": "user_input", "conversation_id": "c-2", "message_id": "m-2"},
    }
    requests = {
        "write": ("/api/v1/memories", write_body(memory_key="style.tone", content="Warm tone.")),
        "batch": ("/api/v1/memories/batch", {"items": [write_body(memory_key="style.len")]}),
        "correction": (f"/api/v1/memories/{memory.pk}/supersede", correction),
        "task close": ("/api/v1/tasks/close", {"user_id": "user-1", "task_id": "T-1"}),
        "revoke": (f"/api/v1/memories/{memory.pk}/revoke", {"reason": "wrong"}),
    }
    with being_deleted(user_1):
        for name, (url, body) in requests.items():
            response = api_client.post(url, body, format="json")
            assert response.status_code == 503, (name, response.content)
            assert response["Retry-After"] == "5"
            assert response.json()["error"]["code"] == "subject_being_deleted", name
    with tenant_scope(user_1.tenant_id):
        assert list(Memory.objects.filter(subject=user_1)) == [memory]
        assert Memory.objects.get(pk=memory.pk).status == "active"
    response = api_client.post(*requests["write"], format="json")
    assert response.status_code == 201, response.content  # once the deletion is over


@pytest.mark.django_db(transaction=True)
def test_an_export_and_a_review_of_a_subject_being_deleted_are_refused(
    settings, tenant, agent_principal, user_1
):
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 0.3
    sensitive = write_body(memory_key="health.notes", content="User has asthma.")
    with tenant_scope(tenant.id):
        written = memory_write(principal=agent_principal, data=sensitive)
        rivals = Memory.objects.filter(subject=user_1).values_list("pk", flat=True)
        rivals = [*rivals, MemoryFactory(subject=user_1, memory_key="style.answers").pk]
        conflict = ReviewItem.objects.create(
            tenant=tenant, subject=user_1, kind="conflict", memory_key="style.answers",
            candidate_ids=rivals, rule_codes=["conflict.same_key"],
        )  # fmt: skip
    assert written.decision == "pending_approval"
    pending, item = written.memory, written.review_item
    user = SubjectPrincipal(tenant_id=tenant.id, subject_id=user_1.pk, user_id=1)
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=User.objects.create_user("r").pk)
    refused = {
        "export": lambda: export_create(principal=user),
        "approval": lambda: review_approve(principal=reviewer, item_id=item.id, reason="ok"),
        "rejection": lambda: review_reject(principal=reviewer, item_id=item.id, reason="no"),
        "conflict": lambda: conflict_resolve(
            principal=reviewer,
            item_id=conflict.pk,
            outcome="choose_winner",
            winner_id=rivals[0],
            reason="the newer one",
        ),  # fmt: skip
    }
    with being_deleted(user_1), tenant_scope(tenant.id):
        for act in refused.values():
            with pytest.raises(SubjectBeingDeleted), transaction.atomic():
                act()
        assert not Export.objects.exists()
        assert Memory.objects.get(pk=pending.pk).status == "pending_approval"
        assert ReviewItem.objects.get(pk=conflict.pk).state == "open"
        assert Memory.objects.filter(pk__in=rivals, status="active").count() == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", ["", "style.answers"])
def test_a_deletion_queued_while_a_retrieval_waits_for_the_lock_is_seen(
    settings, api_client, user_1, key
):
    """A deletion request queues a subject's (or a key's) deletion while holding the subject's
    lock. A retrieval that waited for the lock read the queue before the wait, and handed out
    the memories the person had just asked to delete."""
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 10

    def queue_while_holding():
        subject_deletion_lock(user_1.pk)
        Subject.objects.filter(pk=user_1.pk).update(
            deletion_queued_at=timezone.now(), deletion_queued_key=key, deletion_queued_by=1
        )

    with held_in_another_transaction(user_1.tenant_id, queue_while_holding):
        waiting = in_thread(lambda: retrieve(api_client, user_1.tenant_id))
        time.sleep(0.5)
        assert waiting.is_alive()  # for the lock; the queue mark commits with its release
    data, trace = waiting.outcome(10)
    assert data["items"] == [] and trace.stages["counts"]["candidates"] == 0
    if not key:
        assert trace.stages["gate"]["rule"].endswith("+subject_deletion_queued")


@pytest.mark.django_db
def test_a_subject_whose_deletion_is_queued_is_not_retrieved_from(api_client, tenant, user_1):
    queue_deletion(user_1)
    response = api_client.post("/api/v1/retrieve", RETRIEVE, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["items"] == []
    with tenant_scope(tenant.id):
        trace = RetrievalTrace.objects.get(pk=response.json()["trace_id"])
    # Named: the queued request removes it with everything else of the subject.
    assert trace.subject_id == user_1.pk
    assert trace.stages["gate"]["rule"].endswith("+subject_deletion_queued")
    assert trace.stages["counts"]["candidates"] == 0


def queue_deletion(subject, user_id=1):
    """Mark ``subject``'s "delete everything" as queued, as ``subject_deletion_queue`` does."""
    Subject.objects.filter(pk=subject.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=user_id
    )


@pytest.mark.django_db
def test_agents_read_and_write_nothing_of_a_subject_whose_deletion_is_queued(
    api_client, tenant, user_1
):
    memory = Memory.objects.get(subject=user_1)
    other = MemoryFactory(subject=SubjectFactory(tenant=tenant, external_id="user-2"))
    queue_deletion(user_1)
    listed = api_client.get("/api/v1/memories").json()["results"]
    assert [item["id"] for item in listed] == [str(other.pk)]
    assert api_client.get(f"/api/v1/memories/{memory.pk}").status_code == 404
    assert api_client.get(f"/api/v1/memories/{memory.pk}/chain").status_code == 404
    response = api_client.post("/api/v1/memories", write_body(memory_key="k"), format="json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "subject_being_deleted"
    # Asked to delete the whole subject meanwhile: the queued request, under its coming id.
    response = api_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert response.status_code == 202, response.content
    queued = response.json()
    assert queued["status"] == "queued"
    followed = api_client.get(response["Location"]).json()
    assert (followed["operation_id"], followed["status"]) == (queued["operation_id"], "queued")
    assert (followed["memory_count"], followed["steps"]) == (0, [])
    assert api_client.get("/api/v1/deletions").json()["results"] == [followed]
    with tenant_scope(tenant.id):
        assert Memory.objects.filter(subject=user_1).count() == 1
        assert not DeletionOperation.objects.exists()

    operation = queued_subject_deletion_run(user_1.pk)  # the worker's task
    assert str(operation.pk) == queued["operation_id"] and operation.memory_ids == [memory.pk]
    followed = api_client.get(response["Location"]).json()
    assert followed["status"] == "pending" and followed["memory_count"] == 1
    response = api_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert response.json()["operation_id"] == queued["operation_id"]  # asked for already
    response = api_client.post("/api/v1/memories", write_body(memory_key="k"), format="json")
    assert response.status_code == 201, response.content  # after it, a new memory is kept
