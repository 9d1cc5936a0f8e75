"""A person memledger knows only from the traces of their retrievals (made while no subject
named them: ``RetrievalTrace.user_id_sha256``) is deleted as a whole subject: their subject is
made first (``deletion.services.traced_subject_ensure``), and its traces step removes those
traces. The tests beside, ``test_traces_before_the_subject.py``, delete a person known by then."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.deletion.runner import deletion_run
from memory_core.models import RetrievalTrace, Subject
from memory_core.retrieval.traces import user_id_digest
from memory_core.subject_tokens import subject_token_issue
from tests.clients import client_for
from tests.factories import AgentFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def _retrieve_for(client, user_id: str) -> str:
    body = {
        "query": "Which database does the project use?",
        "context": {"user_id": user_id, "task_id": "T-77", "project_id": "apollo"},
    }
    answer = client.post("/api/v1/retrieve", body, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()["trace_id"]


def _naming(tenant, user_id: str):
    return RetrievalTrace.objects.filter(tenant=tenant, user_id_sha256=user_id_digest(user_id))


def test_delete_subject_erases_a_person_known_only_from_their_retrievals_traces(tenant):
    """Stop 64's audit of the commands: the operator's command for a person's erasure answered
    "No subject 'user-99' in the tenant ..." (exit status 1) and deleted nothing when no
    subject named them, while the traces of retrievals for them did, by their id's digest,
    with the task and project ids the agent sent (the plan's ``preferred_scopes``, the
    context's ``allowed_scopes``): they stayed for the policy's ``trace_days``, and the
    operator was told there was nothing to delete. docs/retrieval.md said the user's deletion
    removes them "once they are known"; no path made them known."""
    client = client_for(AgentFactory(tenant=tenant))
    theirs = _retrieve_for(client, "user-99")
    anothers = _retrieve_for(client, "passer-by")
    named = _naming(tenant, "user-99")
    assert [str(pk) for pk in named.values_list("pk", flat=True)] == [theirs]

    out = StringIO()
    call_command(
        "delete_subject", tenant.slug, "user-99", "--yes", "--run", stdout=out, stderr=StringIO()
    )

    assert json.loads(out.getvalue())["status"] == "completed"
    assert not named.exists(), "a trace naming the person outlived their erasure"
    assert RetrievalTrace.objects.filter(pk=anothers).exists()


def test_delete_subject_without_yes_or_for_a_key_makes_no_subject_of_such_a_person(tenant):
    """Stop 64's audit of the commands: the dry run says what would go and makes nothing; a
    key or a memory of such a person is none (only their whole deletion takes their traces),
    and a user nobody retrieved for is no subject, as before."""
    _retrieve_for(client_for(AgentFactory(tenant=tenant)), "user-99")
    out = StringIO()
    with pytest.raises(CommandError, match="add --yes"):
        call_command("delete_subject", tenant.slug, "user-99", stdout=out)
    assert json.loads(out.getvalue())["would_delete"] == 0
    for user, more in [
        ("user-99", ["--key", "editor"]),
        ("user-99", ["--memory", "6a4f7f0e-0000-4000-8000-000000000000"]),
        ("nobody-asked", []),
    ]:
        with pytest.raises(CommandError, match="No subject"):
            call_command("delete_subject", tenant.slug, user, *more, "--yes", stdout=StringIO())
    assert not Subject.objects.filter(tenant=tenant).exists()
    assert _naming(tenant, "user-99").exists()


def test_the_apis_subject_deletion_erases_a_person_known_only_from_the_agents_traces(tenant):
    """Stop 64's audit of the commands: the API's ``{"subject"}`` deletion of such a person was
    a 404 (no subject), so the product's erasure request left the traces too."""
    client = client_for(AgentFactory(tenant=tenant))
    _retrieve_for(client, "user-99")
    anothers = _retrieve_for(client, "passer-by")

    answer = client.post("/api/v1/deletions", {"subject": "user-99"}, format="json")

    assert answer.status_code == 202, answer.content
    assert deletion_run(operation_id=answer.json()["operation_id"]) == "completed"
    assert not _naming(tenant, "user-99").exists()
    assert RetrievalTrace.objects.filter(pk=anothers).exists()


def test_an_agent_that_did_not_retrieve_for_the_person_learns_nothing_of_their_traces(tenant):
    """Stop 64's audit of the commands: the traces are found among those the caller may read,
    after its grant is checked, so the API's deletion tells no agent which user ids others
    asked about. An agent bound to another subject (or to none), or one of any subject that
    made none of the person's retrievals, is answered as for an id nobody asked about (404),
    and no subject is made; the traces stay for the operator's ``delete_subject``."""
    retriever = client_for(AgentFactory(tenant=tenant))
    _retrieve_for(retriever, "user-99")
    bound = AgentFactory(tenant=tenant, any_subject=False)
    SubjectFactory(tenant=tenant, external_id="user-1")
    token = subject_token_issue(tenant_id=tenant.id, agent_id=bound.id, user_id="user-1")
    others = [
        client_for(bound),
        client_for(bound, subject_token=token),
        client_for(AgentFactory(tenant=tenant)),
    ]
    for client in others:
        answers = [
            client.post("/api/v1/deletions", {"subject": user}, format="json")
            for user in ("user-99", "nobody-asked")
        ]
        assert [answer.status_code for answer in answers] == [404, 404]
        assert answers[0].json() == answers[1].json()
    assert not Subject.objects.filter(tenant=tenant, external_id="user-99").exists()
    assert _naming(tenant, "user-99").exists()
