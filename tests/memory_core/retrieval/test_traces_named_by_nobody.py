"""A retrieval that meets a deletion of the person running keeps nothing of them in its trace.

Past ``MEMLEDGER_SUBJECT_LOCK_WAIT`` (``+subject_being_deleted``), or while a deletion holds
the lock of the user's retrievals before a subject named them (``+subject_known_meanwhile``),
the trace names nobody: neither the subject nor the digest of the user's id, so that
deletion never finds it and it stays for the tenant's ``trace_days``. Stop 64's review called
such a trace, holding the person's task id in ``allowed_scopes``, a defect; the user's own
scopes were left out of it, their task, project and repository ids were not (stop 68's audit
of traces).
"""

import json

import pytest

from memory_core.locks import subject_deletion_lock, unknown_users_deletion_lock
from memory_core.models import RetrievalTrace
from memory_core.retrieval.traces import user_id_digest
from memory_core.rls import tenant_scope
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db(transaction=True)

# What the request says of the person's work: each id would be kept and answered again.
CONTEXT_IDS = {
    "task_id": "ticket-4411-payroll",
    "project_id": "atlas-hr",
    "repository_id": "atlas-payroll",
}


def _retrieve(api_client, tenant_id, user_id) -> tuple[dict, RetrievalTrace]:
    body = {
        "query": "How does the user like answers?",
        "intent": "answer_question",
        "context": {"user_id": user_id, **CONTEXT_IDS},
    }
    response = api_client.post("/api/v1/retrieve", body, format="json")
    assert response.status_code == 200, response.content
    with tenant_scope(tenant_id):
        return response.json(), RetrievalTrace.objects.get(pk=response.json()["trace_id"])


def _assert_keeps_nothing_of_the_request(trace: RetrievalTrace, rule: str, user_id: str):
    assert trace.stages["gate"]["rule"].endswith(rule), trace.stages["gate"]
    # Named by nobody: the deletion running neither finds nor deletes it.
    assert trace.subject_id is None and trace.user_id_sha256 == ""
    assert trace.stages["context"]["allowed_scopes"] == ["global"]
    assert set(trace.stages["plan"]["preferred_scopes"]) <= {"global"}
    document = json.dumps(trace.stages)
    for value in (user_id, *CONTEXT_IDS.values()):
        assert value not in document, value


def test_a_retrieval_past_the_wait_for_the_persons_deletion_keeps_no_id_of_theirs(
    settings, tenant, api_client
):
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 0.3
    person = SubjectFactory(tenant=tenant, external_id="user-1")
    MemoryFactory(subject=person, memory_key="style.answers", content="Concise answers.")

    def deletion():
        subject_deletion_lock(person.pk)

    with held_in_another_transaction(tenant.id, deletion):
        data, trace = _retrieve(api_client, tenant.id, "user-1")
    assert data["items"] == []
    _assert_keeps_nothing_of_the_request(trace, "+subject_being_deleted", "user-1")
    # As a retrieval for someone nobody is deleting keeps them (the deletion finds it).
    _, kept = _retrieve(api_client, tenant.id, "user-1")
    assert "task:ticket-4411-payroll" in kept.stages["context"]["allowed_scopes"]


def test_a_retrieval_meeting_the_deletion_of_a_person_known_meanwhile_keeps_no_id_of_theirs(
    tenant, api_client
):
    def deletion():
        unknown_users_deletion_lock(tenant.id, [user_id_digest("newcomer")])

    with held_in_another_transaction(tenant.id, deletion):
        _, trace = _retrieve(api_client, tenant.id, "newcomer")
    _assert_keeps_nothing_of_the_request(trace, "+subject_known_meanwhile", "newcomer")
    # Named by the digest, the trace of a retrieval for them keeps them: their deletion finds it.
    _, kept = _retrieve(api_client, tenant.id, "newcomer")
    assert kept.user_id_sha256 == user_id_digest("newcomer")
    assert "project:atlas-hr" in kept.stages["context"]["allowed_scopes"]


def test_a_trace_naming_nobody_keeps_no_query_hash_locale_or_environment(
    settings, tenant, api_client
):
    """The trace kept the SHA-256 of the query, the locale and the environment of the
    request, which the project counts as the person's (docs/security.md: "the other
    person's task, project and repository ids, environment, locale and query hash"): for
    ``trace_days`` after their deletion, read by every agent of the tenant with
    ``any_subject`` (stop 68's review of the audit of traces)."""
    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 0.3
    person = SubjectFactory(tenant=tenant, external_id="user-1")
    where = {"locale": "gsw-CH", "environment": "laptop-of-user-1"}

    def retrieve() -> RetrievalTrace:
        body = {
            "query": "Which clinic did the user book last spring?",
            "intent": "answer_question",
            "context": {"user_id": "user-1", **where},
        }
        response = api_client.post("/api/v1/retrieve", body, format="json")
        assert response.status_code == 200, response.content
        with tenant_scope(tenant.id):
            return RetrievalTrace.objects.get(pk=response.json()["trace_id"])

    with held_in_another_transaction(tenant.id, lambda: subject_deletion_lock(person.pk)):
        trace = retrieve()
    assert trace.stages["gate"]["rule"].endswith("+subject_being_deleted")
    assert trace.query_hash == ""
    assert (trace.stages["context"]["locale"], trace.stages["context"]["environment"]) == ("", "")
    # A trace naming the person keeps them: their deletion finds it.
    kept = retrieve()
    assert len(kept.query_hash) == 64
    assert kept.stages["context"]["locale"] == "gsw-CH"
    assert kept.stages["context"]["environment"] == "laptop-of-user-1"
