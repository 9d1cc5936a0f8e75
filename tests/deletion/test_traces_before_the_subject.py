"""A retrieval for a user memledger does not know yet stores a trace without a subject, named
by the digest of the user's id (``RetrievalTrace.user_id_sha256``): the user's deletion, once
they are known, removes it with their other traces, those of retrievals still open when it
runs too (``locks.unknown_users_deletion_lock``: the transactional tests below, each side
committing on its own)."""

import threading
import unicodedata
import uuid

import pytest
from django.db import connection, transaction

from memory_core.deletion.replay import replay_deletions
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.locks import unknown_users_deletion_lock
from memory_core.models import RetrievalTrace
from memory_core.principals import AgentPrincipal, SubjectPrincipal, SystemPrincipal
from memory_core.retrieval import pipeline
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.traces import user_id_digest
from memory_core.retrieval.types import RetrievalRequest
from memory_core.rls import platform_scope, tenant_scope
from memory_core.subject_tokens import subject_ensure
from tests.clients import client_for
from tests.deletion.conftest import (  # noqa: F401 (a fixture)
    held_in_another_transaction,
    journal_line,
    private_queue,
    until_waiting_or_done,
)
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory
from tests.threads import in_thread

pytestmark = pytest.mark.django_db

NEWCOMER = "newcomer-meanwhile"


def test_a_subjects_deletion_removes_the_traces_made_before_they_were_known(tenant):
    """Stop 58's audit of authentication gave such a trace the digest, by which a subject
    token for the user reads it: it names the person, so their deletion takes it."""
    client = client_for(AgentFactory(tenant=tenant))

    def trace_for(user_id):
        body = {"query": "Which database does the project use?", "context": {"user_id": user_id}}
        return client.post("/api/v1/retrieve", body, format="json").json()["trace_id"]

    # From a macOS client (NFD); the subject is known later by the same name in NFC.
    theirs = trace_for(unicodedata.normalize("NFD", "José"))
    anothers = trace_for("passer-by")
    subject = SubjectFactory(tenant=tenant, external_id="José")
    MemoryFactory(subject=subject, content="Prefers tea.")

    principal = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=principal, subject_id=subject.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not RetrievalTrace.objects.filter(pk=theirs).exists()
    assert RetrievalTrace.objects.filter(pk=anothers).exists()


def _retrieval_for_the_newcomer(tenant) -> RetrievalTrace | None:
    """Return a trace of ``tenant`` naming ``NEWCOMER`` by their id's digest, if one is left."""
    return RetrievalTrace.objects.filter(
        tenant=tenant, user_id_sha256=user_id_digest(NEWCOMER)
    ).first()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("held", ["before_its_trace", "after_its_trace"])
def test_a_retrieval_open_across_the_users_deletion_leaves_no_trace_naming_them(
    tenant,
    monkeypatch,
    held,
    private_queue,  # noqa: F811
):
    """Left open at stop 63 (its fix of the races audit found it): a retrieval for a user not
    known yet, still open while their subject was created and its whole deletion requested
    and run, committed its trace after the deletion had completed, naming the person by
    their id's digest. Its lookup found no subject to lock, and the traces step read before
    the trace committed; a trace inserted once the run had begun was not even the run's
    (``created_at`` past its start). Now the retrieval holds the lock of the user's
    retrievals from its lookup to its commit, and the traces step waits for it and deletes
    every trace naming the person so, whenever made."""
    principal = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    holding, go = threading.Event(), threading.Event()

    def hold():
        holding.set()
        assert go.wait(30)

    if held == "before_its_trace":
        document = pipeline._trace_document

        def document_then_hold(**kwargs):
            hold()
            return document(**kwargs)

        monkeypatch.setattr(pipeline, "_trace_document", document_then_hold)

    def retrieval():
        with tenant_scope(tenant.id), transaction.atomic():
            result = retrieve(
                principal=principal,
                request=RetrievalRequest(query="Which editor do I use?", user_id=NEWCOMER),
            )
            if held == "after_its_trace":
                hold()
        return result

    def run():
        with tenant_scope(tenant.id):
            return deletion_run(operation_id=operation.id)

    retriever = in_thread(retrieval, name="retrieval", released=[holding])
    try:
        assert holding.wait(30), retriever.error
        with tenant_scope(tenant.id):
            subject_ensure(tenant_id=tenant.id, user_id=NEWCOMER)
            operation = deletion_request(
                principal=SystemPrincipal(tenant_id=tenant.id), subject_external_id=NEWCOMER
            )
        runner = in_thread(run, name="run")
        until_waiting_or_done(runner)  # its traces step waits for the retrieval (unfixed: ends)
    finally:
        go.set()
    assert retriever.outcome(30).trace["gate"]["rule"].endswith("+unknown_subject")
    assert runner.outcome(30) == "completed"
    assert _retrieval_for_the_newcomer(tenant) is None


@pytest.mark.django_db(transaction=True)
def test_a_retrieval_trying_the_users_lock_after_their_deletion_took_it_names_nobody(tenant):
    """The other order of the race left open at stop 63: the deletion of a subject created
    just after the retrieval's lookup read the subjects takes the lock of the user's
    retrievals before the lookup's try of it (stood in for by a transaction that creates the
    subject and takes the lock, uncommitted while the retrieval runs). The retrieval does not
    wait: its trace names nobody (``+subject_known_meanwhile``), as the deletion it would
    come after has read the person's traces already. Unfixed, it named the person by their
    id's digest."""
    principal = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))

    def create_and_delete():
        subject_ensure(tenant_id=tenant.id, user_id=NEWCOMER)
        unknown_users_deletion_lock(tenant.id, [user_id_digest(NEWCOMER)])

    with held_in_another_transaction(tenant.id, create_and_delete) as deleter:
        with tenant_scope(tenant.id), transaction.atomic():
            result = retrieve(
                principal=principal,
                request=RetrievalRequest(query="Which editor do I use?", user_id=NEWCOMER),
            )
        assert deleter.is_alive()  # the retrieval did not wait for the deletion
    assert result.trace["gate"]["rule"].endswith("+subject_known_meanwhile")
    trace = RetrievalTrace.objects.get(pk=result.trace_id)
    assert (trace.subject_id, trace.user_id_sha256) == (None, "")
    assert _retrieval_for_the_newcomer(tenant) is None


def _newcomers_request() -> RetrievalRequest:
    return RetrievalRequest(query="Which editor do I use?", user_id=NEWCOMER, task_id="s-12")


@pytest.mark.django_db(transaction=True)
def test_a_replayed_whole_subject_deletion_waits_for_a_retrieval_for_the_person(
    tenant,
    journal,
    settings,
    tmp_path,
    monkeypatch,
    private_queue,  # noqa: F811
):
    """Stop 64's review of the unknown users' lock: a replay makes the person's row back named
    by its own id and keeps their digest on the operation (``DeletionOperation.user_id_sha256``),
    but the traces step locked and deleted by the digests of its subjects' external ids
    alone, that of the row's UUID. A retrieval for the person (unknown in the restored
    database) open across the replay was not waited for, and committed a trace naming them
    after the replayed deletion had completed: the race a07e2299 closed for a live deletion,
    open for a replayed one. The step takes the operation's digest too now."""
    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    principal = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    line = {
        **journal_line(1, tenant_id=tenant.id, target="subject", subject_id=uuid.uuid4()),
        "user_id_sha256": user_id_digest(NEWCOMER),
    }
    holding, go = threading.Event(), threading.Event()
    document = pipeline._trace_document

    def document_then_hold(**kwargs):
        holding.set()
        assert go.wait(30)
        return document(**kwargs)

    monkeypatch.setattr(pipeline, "_trace_document", document_then_hold)

    def retrieval():
        with tenant_scope(tenant.id), transaction.atomic():
            return retrieve(principal=principal, request=_newcomers_request())

    def replay():
        with platform_scope("audit"):
            return replay_deletions(entries=[line])

    retriever = in_thread(retrieval, name="retrieval", released=[holding])
    try:
        assert holding.wait(30), retriever.error
        replayer = in_thread(replay, name="replay")
        until_waiting_or_done(replayer)  # its traces step waits for the retrieval
    finally:
        go.set()
    assert retriever.outcome(30).trace["gate"]["rule"].endswith("+unknown_subject")
    assert replayer.outcome(60)["incomplete"] == {}
    assert _retrieval_for_the_newcomer(tenant) is None


# A lock the test's other transaction holds while it creates the subject: the lookup waits
# for it after its snapshot was taken, so it reads no subject, and ``_QUEUED_SQL``, a new
# statement, then finds the one committed meanwhile (an agent's first write for the person
# racing its first retrieval). Nothing about the deletion: none runs until long after.
_GATE = 8_640_064


@pytest.mark.django_db(transaction=True)
def test_a_retrieval_racing_the_persons_first_write_leaves_no_trace_their_deletion_misses(
    tenant,
    monkeypatch,
    private_queue,  # noqa: F811
):
    """Stop 64's review of the unknown users' lock: ``lookup_subject_and_policy`` answered
    ``+subject_known_meanwhile`` whenever ``_QUEUED_SQL`` found the subject, its try of the
    person's lock granted or not, and the trace then named nobody. Granted, the retrieval
    holds the lock a deletion's traces step waits for, so no deletion can have read the
    person's traces yet: the subject was only created meanwhile (an agent's first write).
    Such a trace, the person's task id in ``allowed_scopes``, went with their deletion before
    a07e2299; it named nobody and outlived it. It is named by the digest again."""
    principal = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    monkeypatch.setattr(
        pipeline,
        "_LOOKUP_SQL",
        f"SELECT q.* FROM (SELECT pg_advisory_xact_lock_shared({_GATE})) AS gate "  # noqa: S608
        f"CROSS JOIN LATERAL ({pipeline._LOOKUP_SQL}) AS q",
    )

    def first_write():
        subject_ensure(tenant_id=tenant.id, user_id=NEWCOMER)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_GATE])

    def retrieval():
        with tenant_scope(tenant.id), transaction.atomic():
            return retrieve(principal=principal, request=_newcomers_request())

    with held_in_another_transaction(tenant.id, first_write):
        retriever = in_thread(retrieval, name="retrieval")
        until_waiting_or_done(retriever)  # its lookup's snapshot is taken: no subject
    result = retriever.outcome(30)
    assert result.trace["gate"]["rule"].endswith("+unknown_subject")
    assert RetrievalTrace.objects.get(pk=result.trace_id).user_id_sha256 == user_id_digest(NEWCOMER)

    with tenant_scope(tenant.id):
        operation = deletion_request(
            principal=SystemPrincipal(tenant_id=tenant.id), subject_external_id=NEWCOMER
        )
        assert deletion_run(operation_id=operation.id) == "completed"
    assert not RetrievalTrace.objects.filter(pk=result.trace_id).exists()
