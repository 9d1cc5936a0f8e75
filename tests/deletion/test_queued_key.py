"""A memory_key's deletion too large for a request is queued for a worker, as a whole
subject's is (``deletion_request_or_queue``), and a queued deletion answers its id only to a
caller whose grant reaches it: anyone else gets the refusal the request would give.
"""

import json

import pytest
from django.utils import timezone

from memory_core.deletion.ledger import memory_key_digest
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import (
    deletion_request,
    deletion_request_or_queue,
    queued_subject_deletion_run,
)
from memory_core.exceptions import SubjectBeingDeleted
from memory_core.models import DeletionOperation, Memory, Status, Subject, Tombstone
from memory_core.principals import SubjectPrincipal
from memory_core.rls import tenant_scope
from memory_core.subject_tokens import subject_token_issue
from tests.celery_worker import wait_for
from tests.clients import client_for
from tests.deletion.conftest import requested_while_held
from tests.factories import AgentFactory, MemoryFactory, write_body

NO_TIME = 1e-9
URL = "/api/v1/deletions"
KEY = "style.answers"
RETRIEVE = {
    "query": "How does the user like answers?",
    "intent": "answer_question",
    "context": {"user_id": "user-1"},
}


@pytest.fixture
def written(api_client):
    """Three versions of ``user-1``'s preference on KEY (one chain: two superseded, one
    head) and one preference on another key, written by ``api_client``'s agent."""
    for content in ("concise", "short", "very short"):
        body = write_body(content=f"User prefers {content} answers.")
        response = api_client.post("/api/v1/memories", body, format="json")
        assert response.status_code == 201, response.content
    body = write_body(memory_key="style.language", content="User prefers answers in English.")
    assert api_client.post("/api/v1/memories", body, format="json").status_code == 201
    on_key = Memory.objects.filter(subject__external_id="user-1", memory_key=KEY)
    other = Memory.objects.get(subject__external_id="user-1", memory_key="style.language")
    assert on_key.count() == 3 and on_key.filter(status="active").count() == 1
    return sorted(on_key.values_list("pk", flat=True), key=str), other


def too_large(settings, why: str) -> None:
    if why == "out of time":
        settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    else:
        settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the key holds three


def ask_key(client):
    return client.post(URL, {"subject": "user-1", "memory_key": KEY}, format="json")


def ask_subject(client):
    return client.post(URL, {"subject": "user-1"}, format="json")


def answer(response) -> tuple[int, str | None]:
    body = response.json()
    return response.status_code, body.get("error", {}).get("code") or body.get("status")


@pytest.mark.django_db
@pytest.mark.parametrize("why", ["out of time", "above the threshold"])
def test_a_key_too_large_for_a_request_is_queued_and_fenced_from_agents_at_once(
    settings, api_client, agent, written, why
):
    on_key, other = written
    head = Memory.objects.get(pk__in=on_key, status="active")
    before = api_client.post("/api/v1/retrieve", RETRIEVE, format="json").json()
    assert str(head.pk) in {item["id"] for item in before["items"]}
    too_large(settings, why)

    response = ask_key(api_client)
    # Before: 422 deletion_too_large, and the agent had to delete the key in parts.
    assert response.status_code == 202, response.content
    queued = response.json()
    assert queued["status"] == "queued"
    assert response["Location"] == f"/api/v1/deletions/{queued['operation_id']}"
    subject = Subject.objects.get(tenant=agent.tenant, external_id="user-1")
    assert (subject.deletion_queued_key, subject.deletion_queued_by_agent_id) == (KEY, agent.pk)
    assert Memory.objects.filter(pk__in=on_key).exclude(status="deleted").count() == 3
    assert not DeletionOperation.objects.exists()  # the worker makes the request

    # The key is fenced from agents from the ask on: retrieval, list, detail, writes to it.
    # The subject's other keys are not (until stop 28 the mark fenced the whole subject).
    retrieved = api_client.post("/api/v1/retrieve", RETRIEVE, format="json").json()
    assert [item["id"] for item in retrieved["items"]] == [str(other.pk)]
    assert retrieved.get("clarifications", []) == []
    listed = {item["id"] for item in api_client.get("/api/v1/memories").json()["results"]}
    assert listed.isdisjoint({str(pk) for pk in on_key}) and str(other.pk) in listed
    assert api_client.get(f"/api/v1/memories/{head.pk}").status_code == 404
    assert api_client.get(f"/api/v1/memories/{other.pk}").status_code == 200
    write = api_client.post("/api/v1/memories", write_body(), format="json")
    assert write.status_code == 503 and write.json()["error"]["code"] == "subject_being_deleted"
    batch = {"items": [write_body(memory_key="style.tone"), write_body()]}
    assert api_client.post("/api/v1/memories/batch", batch, format="json").status_code == 503
    elsewhere = write_body(memory_key="style.tone", content="User prefers a friendly tone.")
    assert api_client.post("/api/v1/memories", elsewhere, format="json").status_code == 201
    # The earlier retrieval's trace no longer names the key's memories; the other key's, yes.
    trace = api_client.get(f"/api/v1/traces/{before['trace_id']}").json()
    assert str(head.pk) not in trace["selected_ids"] and str(other.pk) in trace["selected_ids"]
    assert trace["hidden_count"] >= 1
    # The retrieval made meanwhile says why the key is missing, without naming it.
    during = api_client.get(f"/api/v1/traces/{retrieved['trace_id']}").json()
    assert during["stages"]["gate"]["rule"].endswith("+key_deletion_queued")
    assert KEY not in json.dumps(during)
    followed = api_client.get(response["Location"]).json()
    assert (followed["operation_id"], followed["status"]) == (queued["operation_id"], "queued")
    assert (followed["target"], followed["memory_count"], followed["steps"]) == (
        "memory_key",
        0,
        [],
    )
    assert followed in api_client.get(URL).json()["results"]
    # Asked again while queued: the same one, not a second mark.
    assert ask_key(api_client).json() == queued

    operation = queued_subject_deletion_run(subject.pk)  # the worker's task
    assert str(operation.pk) == queued["operation_id"]
    assert (operation.target, operation.requested_by_type) == ("memory_key", "agent")
    assert operation.requested_by_id == str(agent.pk)
    assert operation.requested_at == subject.deletion_queued_at
    assert sorted(operation.memory_ids, key=str) == on_key
    assert set(Memory.objects.filter(pk__in=on_key).values_list("status", flat=True)) == {"deleted"}
    assert Memory.objects.get(pk=other.pk).status == "active"  # another key stays
    subject.refresh_from_db()
    assert (subject.deletion_queued_at, subject.deletion_queued_key) == (None, "")
    after = write_body(content="User prefers bullet points.")  # the key takes writes again
    assert api_client.post("/api/v1/memories", after, format="json").status_code == 201


@pytest.mark.django_db
def test_a_task_closed_while_a_key_is_queued_expires_the_rest_and_leaves_the_key_be(
    settings, api_client, written
):
    on_task = {"task_id": "T-1", "session_id": "s-1"}
    on_key = api_client.post(
        "/api/v1/memories",
        write_body(content="User prefers terse answers for this task.", **on_task),
        format="json",
    ).json()["memory"]["id"]
    state = write_body(
        memory_type="task_state", memory_key="", content="Login page done.", **on_task
    )
    elsewhere = api_client.post("/api/v1/memories", state, format="json").json()["memory"]["id"]
    too_large(settings, "above the threshold")
    assert ask_key(api_client).status_code == 202

    closed = api_client.post(
        "/api/v1/tasks/close", {"user_id": "user-1", "task_id": "T-1"}, format="json"
    )
    # Before: 503 subject_being_deleted, for a key's deletion as for the whole subject's.
    assert closed.status_code == 200, closed.content
    assert closed.json()["expired"] == [elsewhere]
    assert Memory.objects.get(pk=on_key).status == "active"  # the worker deletes it


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_makes_the_queued_key_deletion_and_verifies_it(
    settings, celery_worker, api_client, written
):
    on_key, other = written
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    response = ask_key(api_client)
    assert response.status_code == 202, response.content
    operation_id = response.json()["operation_id"]

    def completed():
        operation = DeletionOperation.objects.filter(pk=operation_id).first()
        return operation is not None and operation.status == "completed"

    wait_for(completed, timeout=90, interval=0.1, message="the queued key deletion to complete")
    followed = api_client.get(response["Location"]).json()
    assert (followed["status"], followed["target"], followed["memory_count"]) == (
        "completed",
        "memory_key",
        3,
    )
    assert followed["steps"] and {step["status"] for step in followed["steps"]} == {"verified"}
    rows = Memory.objects.filter(pk__in=on_key).values_list("status", "content", "memory_key")
    assert set(rows) == {("deleted", "", "")}
    assert Memory.objects.get(pk=other.pk).status == "active"
    assert Subject.objects.get(external_id="user-1").deletion_queued_at is None


@pytest.mark.django_db
def test_an_agent_that_does_not_reach_every_memory_on_the_key_is_refused_not_queued(
    settings, tenant, api_client, written
):
    """The worker deletes the key whole for whoever asked, so the queue checks that they
    reach all of it: here a version written for another agent alone."""
    on_key, _ = written
    Memory.objects.filter(pk=on_key[0]).update(agent=AgentFactory(tenant=tenant))
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    response = ask_key(api_client)
    assert answer(response) == (403, "key_not_fully_granted"), response.content
    assert Subject.objects.get(external_id="user-1").deletion_queued_at is None
    assert Memory.objects.filter(pk__in=on_key).exclude(status="deleted").count() == 3


def narrow_agents(tenant) -> dict:
    """Agents whose grant does not reach what the whole subject or the key holds."""
    bound = AgentFactory(
        tenant=tenant, any_subject=False, read_types=["task_state"], write_types=["task_state"]
    )
    bound_token = subject_token_issue(tenant_id=tenant.id, agent_id=bound.id, user_id="user-1")
    elsewhere = AgentFactory(tenant=tenant, any_subject=False)
    other_token = subject_token_issue(tenant_id=tenant.id, agent_id=elsewhere.id, user_id="user-2")
    return {
        "reads nothing of it": client_for(
            AgentFactory(tenant=tenant, read_types=["task_state"], write_types=["task_state"])
        ),
        "reads it, writes none": client_for(
            AgentFactory(tenant=tenant, write_types=["task_state"])
        ),
        "bound to user-1, narrow": client_for(bound, bound_token),
        "bound to user-2": client_for(elsewhere, other_token),
        "bound, no token": client_for(AgentFactory(tenant=tenant, any_subject=False)),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("target", ["subject", "key"])
def test_asked_while_queued_an_agent_out_of_reach_gets_the_refusal_it_would_otherwise(
    settings, tenant, api_client, written, target
):
    """Before, a queued deletion's id and status came back to any agent that named the
    subject, whatever its grant (a queued whole subject answered before any check)."""
    ask = ask_subject if target == "subject" else ask_key
    clients = narrow_agents(tenant)
    otherwise = {name: answer(ask(client)) for name, client in clients.items()}
    assert all(status in (403, 404) for status, _ in otherwise.values()), otherwise

    too_large(settings, "above the threshold")
    response = ask(api_client)
    assert response.status_code == 202, response.content
    queued = response.json()
    assert queued["status"] == "queued"

    while_queued = {name: ask(client) for name, client in clients.items()}
    assert {name: answer(r) for name, r in while_queued.items()} == otherwise
    for refused in while_queued.values():
        assert queued["operation_id"] not in refused.content.decode()
    assert ask(api_client).json() == queued  # the one who reaches it: the queued one


@pytest.mark.django_db
def test_one_queued_deletion_a_subject_at_a_time(settings, owner, owner_principal):
    """A second deletion of the subject that must be queued too waits for the first (503,
    retry); a small one is made at once."""
    from memory_core.deletion.services import deletion_request_or_queue

    for key in ("style.answers", "style.language"):
        for _ in range(3):
            MemoryFactory(subject=owner, memory_key=key)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    first = deletion_request_or_queue(
        principal=owner_principal, subject_id=owner.pk, memory_key="style.answers"
    )
    assert (first.status, first.target) == ("queued", "memory_key")
    for key in ("style.language", ""):
        with pytest.raises(SubjectBeingDeleted):
            deletion_request_or_queue(
                principal=owner_principal, subject_id=owner.pk, memory_key=key
            )
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 50_000
    made = deletion_request_or_queue(
        principal=owner_principal, subject_id=owner.pk, memory_key="style.language"
    )
    assert made.status == "pending" and len(made.memory_ids) == 3  # the user is not fenced
    owner.refresh_from_db()
    assert owner.deletion_queued_key == "style.answers"


@pytest.mark.django_db
def test_a_queued_key_deletion_emptied_meanwhile_still_becomes_its_operation(
    settings, owner, owner_principal
):
    """The id handed out names an operation once the worker has run, even with nothing left
    on the key (the user deleted them meanwhile, say)."""
    from memory_core.deletion.services import deletion_request_or_queue

    memories = [MemoryFactory(subject=owner, memory_key=KEY) for _ in range(3)]
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    queued = deletion_request_or_queue(
        principal=owner_principal, subject_id=owner.pk, memory_key=KEY
    )
    Memory.objects.filter(pk__in=[m.pk for m in memories]).update(
        status="deleted", memory_key="", content=""
    )
    made = queued_subject_deletion_run(owner.pk)
    assert (made.pk, made.target, made.memory_ids) == (queued.pk, "memory_key", [])


def the_person(subject: Subject) -> SubjectPrincipal:
    return SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)


def _queued_key_then_taken(settings, api_client, on_key):
    """An agent's deletion of the key queued for a worker (three memories, above the queue's
    two), then the person's deletion of the key's head on the portal (and its history: every
    memory on the key), still pending: the queued answer, the subject and that deletion."""
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    queued = ask_key(api_client).json()
    assert queued["status"] == "queued"
    subject = Subject.objects.get(external_id="user-1")
    head = Memory.objects.get(pk__in=on_key, status="active")
    theirs = deletion_request(principal=the_person(subject), memory_id=head.id)
    assert sorted(theirs.memory_ids, key=str) == on_key
    return queued, subject, theirs


@pytest.mark.django_db
def test_a_queued_key_whose_memories_were_taken_meanwhile_waits_for_that_deletion(
    settings, api_client, written
):
    """Stop 57's audit of deletion found a key's deletion queued for a worker, whose memories
    the person deleted meanwhile (on the portal: a deletion still pending), made at once by
    the worker as an empty operation under the id the agent holds, which answered
    "completed" while that deletion had not verified their stores clean. Now the worker
    answers that deletion, as a request made at once does, and leaves the mark: the id
    answers "queued" until that deletion has completed, and the request is then made under
    it."""
    on_key, _ = written
    queued, subject, theirs = _queued_key_then_taken(settings, api_client, on_key)

    answered = queued_subject_deletion_run(subject.pk)  # the worker's task
    assert (answered.pk, answered.already_requested) == (theirs.pk, True)
    theirs.refresh_from_db()
    assert theirs.status == DeletionOperation.State.PENDING  # its stores are not clean yet
    answer = api_client.get(f"/api/v1/deletions/{queued['operation_id']}").json()
    assert answer["status"] != "completed", (
        "the agent's key deletion answers 'completed' (memory_count "
        f"{answer['memory_count']}) while the deletion that took the key's memories is "
        f"{theirs.status}: their derived stores are not verified clean"
    )
    assert answer["status"] == "queued"
    assert Subject.objects.get(pk=subject.pk).deletion_queued_key == KEY  # still fenced

    assert deletion_run(operation_id=theirs.pk) == "completed"
    made = queued_subject_deletion_run(subject.pk)  # the sweep sends the task again
    assert (str(made.pk), made.memory_ids) == (queued["operation_id"], [])
    assert deletion_run(operation_id=made.pk) == "completed"
    answer = api_client.get(f"/api/v1/deletions/{queued['operation_id']}").json()
    assert (answer["status"], answer["target"]) == ("completed", "memory_key")
    assert Subject.objects.get(pk=subject.pk).deletion_queued_at is None


@pytest.mark.django_db
def test_a_queued_subject_whose_memories_were_taken_meanwhile_waits_for_those_deletions(
    settings, api_client, written
):
    """Stop 57's audit of deletion found the whole subject's queued deletion made so too:
    every memory deleted meanwhile by the person's deletions, still pending, it held none and
    answered "completed" before them. Now the worker waits for each of them, the id answers
    "queued" meanwhile, and the request is made under it once they have all completed."""
    on_key, other = written
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the subject holds four
    queued = ask_subject(api_client).json()
    assert queued["status"] == "queued"
    subject = Subject.objects.get(external_id="user-1")
    head = Memory.objects.get(pk__in=on_key, status="active")
    theirs = [
        deletion_request(principal=the_person(subject), memory_id=memory_id)
        for memory_id in (head.pk, other.pk)
    ]

    def follow() -> str:
        return api_client.get(f"/api/v1/deletions/{queued['operation_id']}").json()["status"]

    assert queued_subject_deletion_run(subject.pk).pk == theirs[1].pk
    assert follow() == "queued"
    assert deletion_run(operation_id=theirs[1].pk) == "completed"
    assert queued_subject_deletion_run(subject.pk).pk == theirs[0].pk  # still one pending
    assert follow() == "queued"
    assert deletion_run(operation_id=theirs[0].pk) == "completed"

    made = queued_subject_deletion_run(subject.pk)
    assert (str(made.pk), made.target, made.memory_ids) == (queued["operation_id"], "subject", [])
    assert deletion_run(operation_id=made.pk) == "completed"
    assert follow() == "completed"
    assert Subject.objects.get(pk=subject.pk).deletion_queued_at is None


@pytest.mark.django_db(transaction=True)
def test_a_queued_key_run_waiting_behind_a_memorys_deletion_of_its_rows_answers_that_one(
    settings, owner, owner_principal, private_queue, journal
):
    """Stop 58's audit of deletion found the stop-57 fix beaten by timing: the worker's run
    of a queued key deletion looked for a deletion that took the key's memories before it
    took the subject's lock, so the person's deletion of the key's head, not committed yet,
    was not seen; the run then waited for the lock in the request and, once that deletion
    had taken every memory on the key, made an empty operation under the queued id, which
    ran to completed while that deletion was pending. Now the run takes the subject's lock
    first, and answers that deletion."""
    older = MemoryFactory(subject=owner, memory_key=KEY, status=Status.SUPERSEDED)
    head = MemoryFactory(subject=owner, memory_key=KEY, supersedes=older, version=2)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 1
    with tenant_scope(owner.tenant_id):
        queued = deletion_request_or_queue(
            principal=owner_principal, subject_id=owner.pk, memory_key=KEY
        )
    assert queued.status == "queued"

    def memorys_deletion():  # the person's deletion of the head and its history
        deletion_request(principal=owner_principal, memory_id=head.pk)

    def worker():
        with tenant_scope(owner.tenant_id):
            return queued_subject_deletion_run(owner.pk)

    made = requested_while_held(owner.tenant_id, memorys_deletion, worker)

    theirs = DeletionOperation.objects.get(target="memory", subject=owner)
    assert theirs.status == "pending"
    assert (made.pk, made.already_requested) == (theirs.pk, True)
    assert Subject.objects.get(pk=owner.pk).deletion_queued_key == KEY  # still queued


@pytest.mark.django_db
@pytest.mark.parametrize("unrelated_state", ["pending", "dead_lettered"])
def test_a_queued_key_does_not_wait_for_a_deletion_of_another_key(
    settings, api_client, written, unrelated_state
):
    """Stop 57's review of its own fixes found the worker's wait for the deletion that took a
    queued key's memories waiting for the subject's newest unfinished deletion since the
    mark, whatever it deleted: a deletion of another key's memory (pending, or
    dead-lettered) kept the key's request queued, the key fenced and the agent's writes to
    it refused, though the deletion that took the key's memories had completed. Now it
    waits only for the unfinished deletions whose tombstones name the key (by its digest,
    ``Tombstone.memory_key_sha256``): the request is made under the id the agent holds."""
    on_key, other = written
    queued, subject, theirs = _queued_key_then_taken(settings, api_client, on_key)
    # ... and, separately, their memory on another key (style.language).
    unrelated = deletion_request(principal=the_person(subject), memory_id=other.pk)
    assert [str(i) for i in unrelated.memory_ids] == [str(other.pk)]
    digests = dict(Tombstone.objects.values_list("memory_id", "memory_key_sha256"))
    assert {digests[pk] for pk in on_key} == {memory_key_digest(KEY)}
    assert digests[other.pk] == memory_key_digest("style.language")

    # The deletion that took the key's memories completes.
    assert deletion_run(operation_id=theirs.pk) == "completed"
    if unrelated_state == "dead_lettered":
        # e.g. its evaluation step failed every retry (a folder that is missing)
        DeletionOperation.objects.filter(pk=unrelated.pk).update(
            status=DeletionOperation.State.FAILED, dead_lettered_at=timezone.now()
        )

    made = queued_subject_deletion_run(subject.pk)  # the worker's task
    assert made.pk != unrelated.pk, (
        "the queued key deletion waits for a deletion of another key's memory "
        f"({unrelated_state}) although the deletion that took the key's memories completed"
    )
    assert (str(made.pk), made.memory_ids) == (queued["operation_id"], [])
    assert Subject.objects.get(pk=subject.pk).deletion_queued_at is None  # the key unfenced
    after = write_body(content="User prefers bullet points.")
    assert api_client.post("/api/v1/memories", after, format="json").status_code == 201


@pytest.mark.django_db
def test_the_ledger_keeps_a_deleted_memorys_key_by_its_digest(owner, owner_principal):
    """The tombstones a request writes name each memory's key by its SHA-256 as the journal
    names a queued key (``memory_key_digest``), "" for a memory without one: the rows lose
    their key at the request, and a queued key's request reads which deletions took it."""
    keyed = MemoryFactory(subject=owner, memory_key="santé.notes")
    keyless = MemoryFactory(subject=owner, incident=True)
    operation = deletion_request(principal=owner_principal, subject_id=owner.pk)
    assert Memory.objects.get(pk=keyed.pk).memory_key == ""
    digests = dict(
        Tombstone.objects.filter(operation=operation).values_list("memory_id", "memory_key_sha256")
    )
    assert digests == {keyed.pk: memory_key_digest("santé.notes"), keyless.pk: ""}


@pytest.mark.django_db
def test_a_tenant_deletion_settles_a_queued_key(tenant, owner):
    from memory_core.deletion.services import tenant_deletion_request

    MemoryFactory(subject=owner, memory_key=KEY)
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=1, deletion_queued_key=KEY
    )
    tenant_deletion_request(tenant_id=tenant.pk)
    owner.refresh_from_db()
    assert (owner.deletion_queued_at, owner.deletion_queued_key) == (None, "")


@pytest.mark.django_db(transaction=True)
def test_the_journal_names_a_queued_key_by_its_digest_and_a_replay_deletes_it(owner):
    """The journal keeps ids and hashes only: a queued key's line holds the key's SHA-256,
    and a replay after a restore deletes the subject's memories on that key alone."""
    import json
    from datetime import UTC, datetime

    from memory_core.deletion.ledger import queued_entry
    from memory_core.deletion.replay import replay_deletions

    keyed = [MemoryFactory(subject=owner, memory_key=KEY) for _ in range(2)]
    kept = MemoryFactory(subject=owner, memory_key="style.language")
    queued_at = datetime(2026, 12, 1, 10, tzinfo=UTC)
    entry = queued_entry(
        tenant_id=owner.tenant_id, subject_id=owner.id, queued_at=queued_at, memory_key=KEY
    )
    assert KEY not in json.dumps(entry) and entry["target"] == "memory_key"

    assert replay_deletions(entries=[entry])["replayed"] == 1
    assert {Memory.objects.get(pk=m.pk).status for m in keyed} == {"deleted"}
    assert Memory.objects.get(pk=kept.pk).status == "active"
    operation = DeletionOperation.objects.get(pk=entry["operation_id"])
    assert (operation.target, operation.status) == ("memory_key", "completed")
    # Its tombstones name the key by its digest, as a request's do (read from restored rows).
    digests = Tombstone.objects.filter(operation=operation).values_list("memory_key_sha256")
    assert set(digests) == {(memory_key_digest(KEY),)}


@pytest.mark.django_db
def test_the_users_deletions_page_says_a_keys_deletion_is_queued_not_everything(
    settings, client, agent, owner
):
    from django.urls import reverse

    from memory_core.deletion.services import deletion_request_or_queue
    from memory_core.principals import AgentPrincipal
    from tests.portal.conftest import make_login

    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    queued = deletion_request_or_queue(
        principal=AgentPrincipal.from_agent(agent), subject_id=owner.pk, memory_key=KEY
    )
    client.force_login(make_login("keyed", tenant=owner.tenant, role="end_user", subject=owner))
    body = client.get(reverse("portal:deletions")).content.decode()
    said = f"An agent's deletion of the memories about you on the key <code>{KEY}</code>"
    assert said in body and str(queued.pk) in body
    assert "The deletion of everything" not in body
    page = client.get(reverse("portal:deletion", args=[queued.pk]))
    assert page.status_code == 200
    heading = page.content.decode().split('<h1 id="op-heading">', 1)[1].split("</h1>", 1)[0]
    assert heading == f'Deleting the memories on the key <code class="key">{KEY}</code>'


@pytest.mark.django_db(transaction=True)
def test_delete_subject_of_a_queued_key_a_replay_made_answers_the_operation(
    settings, tenant, owner, owner_principal
):
    """After a restore the backup's queued mark is still on the subject while the replay has
    made the queued line's operation (under the id the queue handed out). The operator then
    makes the queued request as docs/operations.md says, ``delete_subject ... --key KEY``:
    the command ended in a traceback (``already_requested`` missing on the operation
    returned when nothing was left on the key), its JSON report unprinted and its exit status
    1 (stop 55's audit of the commands)."""
    import io

    from django.core.management import call_command

    from memory_core.deletion.ledger import queued_entry
    from memory_core.deletion.replay import replay_deletions
    from memory_core.deletion.services import deletion_request_or_queue

    keyed = [MemoryFactory(subject=owner, memory_key=KEY) for _ in range(3)]
    kept = MemoryFactory(subject=owner, memory_key="style.language")
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    queued = deletion_request_or_queue(
        principal=owner_principal, subject_id=owner.pk, memory_key=KEY
    )
    assert queued.status == "queued"
    owner.refresh_from_db()
    entry = queued_entry(
        tenant_id=owner.tenant_id,
        subject_id=owner.pk,
        queued_at=owner.deletion_queued_at,
        memory_key=KEY,
    )
    assert replay_deletions(entries=[entry])["replayed"] == 1
    assert {Memory.objects.get(pk=m.pk).status for m in keyed} == {"deleted"}

    out = io.StringIO()
    call_command(
        "delete_subject", tenant.slug, owner.external_id, "--key", KEY, "--yes",
        stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    assert json.loads(out.getvalue())["operation_id"] == str(queued.pk)
    assert DeletionOperation.objects.get(pk=queued.pk).status == "completed"
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None
    assert Memory.objects.get(pk=kept.pk).status == "active"


@pytest.mark.django_db
@pytest.mark.parametrize("asked", ["the key", "the whole subject"])
def test_delete_subject_makes_a_queued_key_request_and_then_the_operators_own(
    settings, api_client, agent, written, asked
):
    """The operator's command makes the queued key request (the agent's, under the id it was
    given) whatever it was asked: then its own, when that is another (the whole subject), not
    the queued one reported in its place."""
    import io
    import json

    from django.core.management import call_command

    on_key, other = written
    too_large(settings, "out of time")
    queued = ask_key(api_client).json()
    assert queued["status"] == "queued"
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 20

    out = io.StringIO()
    extra = ["--key", KEY] if asked == "the key" else []
    call_command("delete_subject", agent.tenant.slug, "user-1", *extra, "--yes", stdout=out)
    report = json.loads(out.getvalue())
    made = DeletionOperation.objects.get(pk=queued["operation_id"])
    assert (made.target, made.requested_by_type) == ("memory_key", "agent")
    assert set(Memory.objects.filter(pk__in=on_key).values_list("status", flat=True)) == {"deleted"}
    assert Subject.objects.get(external_id="user-1").deletion_queued_at is None
    if asked == "the key":
        assert report["operation_id"] == queued["operation_id"]
        assert Memory.objects.get(pk=other.pk).status == "active"
    else:
        assert report["operation_id"] != queued["operation_id"]
        operation = DeletionOperation.objects.get(pk=report["operation_id"])
        assert (operation.target, operation.requested_by_id) == ("subject", "delete_subject")
        assert Memory.objects.get(pk=other.pk).status == "deleted"


@pytest.mark.django_db
def test_delete_subject_whole_while_a_queued_key_was_taken_meanwhile_names_what_it_waits_for(
    settings, api_client, agent, written
):
    """Stop 59's audit of the commands found ``delete_subject SLUG USER --yes`` refused with
    ``subject_being_deleted`` ("Retry in a few seconds") when an agent's queued deletion of a
    key was taken meanwhile by the person's deletion, still pending: the queued run leaves
    the mark until that one has completed, and a whole subject's request is refused while a
    key's waits, which no retry within seconds changes. Now the refusal names that deletion
    and says the queued request waits for its worker; nothing is deleted and the mark stays."""
    import io

    from django.core.management import CommandError, call_command

    on_key, other = written
    queued, subject, theirs = _queued_key_then_taken(settings, api_client, on_key)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 50_000

    with pytest.raises(CommandError) as refused:
        call_command(
            "delete_subject", agent.tenant.slug, "user-1", "--yes",
            stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip
    message = str(refused.value)
    assert f"waits for deletion {theirs.pk}" in message and "worker" in message, message
    assert "Retry in a few seconds" not in message
    assert Memory.objects.get(pk=other.pk).status == "active"
    assert Subject.objects.get(pk=subject.pk).deletion_queued_key == KEY  # still waits
