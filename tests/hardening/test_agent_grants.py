"""An agent's grant holds on every endpoint, not only on retrieval.

Inside one tenant an agent reaches only memories shared with it or its own, of its read types,
up to its maximum sensitivity, and changes (supersedes, deletes) only types it may write. A
chain holds one type and one owner. Each test here failed before its fix.
"""

import json

import pytest
from django.utils import timezone

from memory_core.deletion.runner import deletion_run
from memory_core.models import DeletionOperation, Memory, RetrievalTrace, Status
from memory_core.retrieval.traces import user_id_digest
from memory_core.services.api_keys import agent_grant_set
from memory_core.subject_tokens import subject_token_create, subject_token_issue
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, write_body

pytestmark = pytest.mark.django_db

SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"}
TOKEN = "HTTP_X_MEMLEDGER_SUBJECT_TOKEN"


def retrieve(client, user_id="user-1", query="What does the user like to drink?", **headers):
    return client.post(
        "/api/v1/retrieve",
        {"query": query, "context": {"user_id": user_id}},
        format="json",
        **headers,
    )


@pytest.fixture
def user_1(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


def test_a_write_never_supersedes_a_memory_of_another_type(tenant, user_1):
    incident = MemoryFactory(
        subject=user_1,
        memory_type="incident",
        memory_class="episodic",
        memory_key="k.shared",
        content="Incident: the user was hospitalised.",
        authority="tool_observation",
        source_type="verified_tool_output",
    )
    agent = AgentFactory(
        tenant=tenant, read_types=["user_preference"], write_types=["user_preference"]
    )
    client = client_for(agent)
    response = client.post("/api/v1/memories", write_body(memory_key="k.shared"), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["memory"]["supersedes"] is None
    incident.refresh_from_db()
    assert incident.status == Status.ACTIVE
    detail = client.get(f"/api/v1/memories/{response.json()['memory']['id']}").json()
    assert [m["content"] for m in detail["chain"]] == ["User prefers concise answers."]


def test_a_write_never_supersedes_another_agents_private_memory(tenant, user_1):
    owner = AgentFactory(tenant=tenant)
    private = MemoryFactory(
        subject=user_1,
        agent=owner,
        memory_key="k.shared",
        content="Private to the owner agent.",
        authority="model_inference",
        source_type="model_inference",
    )
    response = client_for(AgentFactory(tenant=tenant)).post(
        "/api/v1/memories", write_body(memory_key="k.shared"), format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["memory"]["supersedes"] is None
    assert "supersession.supersedes" not in response.json()["rule_codes"]
    private.refresh_from_db()
    assert private.status == Status.ACTIVE


def test_a_correction_keeps_a_private_memory_private(tenant, user_1):
    owner = AgentFactory(tenant=tenant)
    private = MemoryFactory(
        subject=user_1, agent=owner, memory_key="k.priv", content="Private v1 of the owner."
    )
    response = client_for(owner).post(
        f"/api/v1/memories/{private.id}/supersede",
        {"content": "Private v2 of the owner.", "source": SOURCE},
        format="json",
    )
    assert response.status_code == 201, response.json()
    successor = Memory.objects.get(pk=response.json()["memory"]["id"])
    assert successor.supersedes_id == private.id
    assert successor.agent_id == owner.id
    other = client_for(AgentFactory(tenant=tenant))
    assert other.get(f"/api/v1/memories/{successor.id}").status_code == 404
    assert other.get("/api/v1/memories?subject=user-1").json()["count"] == 0


def test_the_detail_chain_leaves_out_versions_the_agent_may_not_see(tenant, user_1):
    older = MemoryFactory(
        subject=user_1,
        memory_key="k.chain",
        content="Restricted older version.",
        sensitivity="restricted",
        status=Status.SUPERSEDED,
    )
    head = MemoryFactory(
        subject=user_1,
        memory_key="k.chain",
        content="Current version.",
        supersedes=older,
        version=2,
    )
    client = client_for(AgentFactory(tenant=tenant, max_sensitivity="sensitive"))
    detail = client.get(f"/api/v1/memories/{head.id}")
    assert detail.status_code == 200
    assert [m["content"] for m in detail.json()["chain"]] == ["Current version."]
    assert {e["memory_id"] for e in detail.json()["events"]} <= {str(head.id)}


def test_an_empty_read_grant_reads_nothing_through_retrieval(tenant, user_1):
    MemoryFactory(subject=user_1, content="User prefers green tea in the morning.")
    client = client_for(AgentFactory(tenant=tenant, read_types=[]))
    response = retrieve(client)
    assert response.status_code == 200
    assert response.json()["items"] == []
    assert "green tea" not in response.json()["prompt"]
    assert client.get("/api/v1/memories?subject=user-1").json()["count"] == 0


def test_the_maximum_sensitivity_holds_on_list_and_detail_as_on_retrieval(tenant, user_1):
    restricted = MemoryFactory(
        subject=user_1, sensitivity="restricted", content="Passport number 123."
    )
    personal = MemoryFactory(subject=user_1, sensitivity="personal", content="Likes tea.")
    client = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    listed = client.get("/api/v1/memories?subject=user-1").json()["results"]
    assert [m["id"] for m in listed] == [str(personal.id)]
    assert client.get(f"/api/v1/memories/{restricted.id}").status_code == 404
    assert client.delete(f"/api/v1/memories/{restricted.id}").status_code == 404
    restricted.refresh_from_db()
    assert restricted.status == Status.ACTIVE


def test_delete_needs_the_write_grant_like_revoke(tenant, user_1):
    memory = MemoryFactory(subject=user_1, memory_key="k.pref", content="User likes tea.")
    client = client_for(AgentFactory(tenant=tenant, read_types=["user_preference"], write_types=[]))
    assert client.post(f"/api/v1/memories/{memory.id}/revoke", {}, format="json").status_code == 403
    response = client.delete(f"/api/v1/memories/{memory.id}")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    by_key = client.post(
        "/api/v1/deletions", {"subject": "user-1", "memory_key": "k.pref"}, format="json"
    )
    assert by_key.status_code == 403
    memory.refresh_from_db()
    assert memory.status == Status.ACTIVE
    assert not DeletionOperation.objects.exists()


def test_a_subject_deletion_needs_a_grant_that_reaches_the_whole_subject(tenant, user_1):
    preference = MemoryFactory(subject=user_1, content="User prefers green tea.")
    full = client_for(AgentFactory(tenant=tenant))
    trace_id = retrieve(full).json()["trace_id"]
    narrow = client_for(
        AgentFactory(tenant=tenant, read_types=["task_state"], write_types=["task_state"])
    )
    response = narrow.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "subject_not_fully_granted"
    preference.refresh_from_db()
    assert preference.status == Status.ACTIVE
    assert RetrievalTrace.objects.filter(pk=trace_id).exists()
    # An agent whose grant reaches every memory of the subject deletes it, traces included.
    response = full.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert response.status_code == 202, response.json()
    assert deletion_run(operation_id=response.json()["operation_id"]) == "completed"
    assert not RetrievalTrace.objects.filter(pk=trace_id).exists()


def test_an_agent_bound_to_one_subject_sees_only_its_deletions_and_traces(tenant, user_1):
    two = SubjectFactory(tenant=tenant, external_id="user-2")
    MemoryFactory(subject=two, content="User two likes coffee.")
    MemoryFactory(subject=two, content="User two likes tea.")
    trusted = client_for(AgentFactory(tenant=tenant))
    trace_id = retrieve(trusted, "user-2").json()["trace_id"]
    first = Memory.objects.filter(subject=two).first()
    operation_id = trusted.delete(f"/api/v1/memories/{first.id}").json()["operation_id"]
    bound = AgentFactory(tenant=tenant, any_subject=False)
    token = subject_token_issue(tenant_id=tenant.id, agent_id=bound.id, user_id="user-1")
    client = client_for(bound)
    for headers in ({}, {"HTTP_X_MEMLEDGER_SUBJECT_TOKEN": token}):
        assert client.get("/api/v1/deletions", **headers).json()["results"] == []
        assert client.get(f"/api/v1/deletions/{operation_id}", **headers).status_code == 404
        assert client.get(f"/api/v1/traces/{trace_id}", **headers).status_code == 404
    # Its own subject's are still its to read.
    own_trace = retrieve(client, **{"HTTP_X_MEMLEDGER_SUBJECT_TOKEN": token}).json()["trace_id"]
    headers = {"HTTP_X_MEMLEDGER_SUBJECT_TOKEN": token}
    assert client.get(f"/api/v1/traces/{own_trace}", **headers).status_code == 200


def test_a_bound_agent_cannot_tell_which_subjects_exist(tenant):
    SubjectFactory(tenant=tenant, external_id="ceo@example.com")
    client = client_for(AgentFactory(tenant=tenant, any_subject=False))
    existing = client.post(
        "/api/v1/memories",
        write_body(memory_key="k.shared", subject="ceo@example.com"),
        format="json",
    )
    missing = client.post(
        "/api/v1/memories",
        write_body(memory_key="k.shared", subject="nobody@example.com"),
        format="json",
    )
    assert existing.status_code == missing.status_code == 422
    assert existing.json()["rule_codes"] == missing.json()["rule_codes"]
    assert existing.json()["rule_codes"] == ["tenant.subject_not_granted"]


def test_a_memory_above_the_agent_s_sensitivity_is_in_no_trace(tenant, user_1):
    secret = MemoryFactory(
        subject=user_1,
        memory_type="incident",
        memory_class="episodic",
        memory_key="",
        content="Dana was diagnosed with diabetes in 2021.",
        sensitivity="sensitive",
    )
    client = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    response = retrieve(client, query="diabetes diagnosis")
    assert response.status_code == 200
    trace = client.get(f"/api/v1/traces/{response.json()['trace_id']}").json()
    assert str(secret.id) not in json.dumps(trace)
    assert secret.content_hash not in json.dumps(trace)


def test_an_agent_reads_only_the_traces_of_its_own_retrievals(tenant, user_1):
    MemoryFactory(subject=user_1, content="User prefers green tea.")
    owner, other = client_for(AgentFactory(tenant=tenant)), client_for(AgentFactory(tenant=tenant))
    trace_id = retrieve(owner).json()["trace_id"]
    assert owner.get(f"/api/v1/traces/{trace_id}").status_code == 200
    assert other.get(f"/api/v1/traces/{trace_id}").status_code == 404


def test_a_bound_agent_reads_its_trace_for_a_subject_not_yet_known(tenant):
    agent = AgentFactory(tenant=tenant, any_subject=False)
    client = client_for(agent)
    token = subject_token_issue(tenant_id=tenant.id, agent_id=agent.id, user_id="newcomer")
    headers = {"HTTP_X_MEMLEDGER_SUBJECT_TOKEN": token}
    response = retrieve(client, "newcomer", **headers)
    assert response.status_code == 200 and response.json()["items"] == []
    answer = client.get(f"/api/v1/traces/{response.json()['trace_id']}", **headers)
    assert answer.status_code == 200
    # The digest that names the user is for matching only, never answered.
    assert user_id_digest("newcomer") not in json.dumps(answer.json())


def retrieve_in_task(client, user_id, **headers):
    """Retrieve for ``user_id`` in task T-77 of project apollo: ids the trace keeps."""
    context = {"user_id": user_id, "project_id": "apollo", "task_id": "T-77"}
    body = {"query": "Which database does the project use?", "context": context}
    return client.post("/api/v1/retrieve", body, format="json", **headers)


def test_a_bound_agent_without_a_token_reads_no_trace(tenant):
    """An agent without any_subject and without a subject token is refused every trace: one
    of a retrieval for a user not known yet (no subject) was answered 200, with that user's
    task and project ids, to any bound agent of its own (stop 58's audit of authentication)."""
    agent = AgentFactory(tenant=tenant)  # any_subject, as created by default
    client = client_for(agent)
    trace_id = retrieve_in_task(client, "walk-in").json()["trace_id"]  # a user not known yet
    agent_grant_set(agent=agent, any_subject=False)  # the admin narrows it to its tokens
    assert client.get(f"/api/v1/traces/{trace_id}").status_code == 404
    report = {"kind": "answer", "memory_ids": []}
    assert client.post(f"/api/v1/traces/{trace_id}/usage", report, format="json").status_code == 404


def test_a_token_for_one_subject_reads_no_trace_made_for_another(tenant):
    """A subject token for alice does not read the trace of the agent's retrieval for bob, a
    user not known yet: every trace without a subject was read with any token, and told bob's
    task and project ids (stop 58's audit of authentication)."""
    agent = AgentFactory(tenant=tenant, any_subject=False)
    client = client_for(agent)
    for_bob = {TOKEN: subject_token_issue(tenant_id=tenant.id, agent_id=agent.id, user_id="bob")}
    trace_id = retrieve_in_task(client, "bob", **for_bob).json()["trace_id"]
    for_alice = {
        TOKEN: subject_token_create(tenant_id=tenant.id, agent_id=agent.id, user_id="alice")
    }
    answer = client.get(f"/api/v1/traces/{trace_id}", **for_alice)
    assert answer.status_code == 404, answer.json()["stages"]["context"]["allowed_scopes"]
    assert client.get(f"/api/v1/traces/{trace_id}", **for_bob).status_code == 200


def green_tea_memories(user_1):
    """A preference and an incident that a query about green tea finds both of."""
    preference = MemoryFactory(subject=user_1, content="User prefers green tea in the morning.")
    incident = MemoryFactory(
        subject=user_1, incident=True, content="User spilled green tea on the laptop."
    )
    return preference, incident


def test_an_agent_s_trace_leaves_out_what_its_grant_no_longer_reaches(tenant, user_1):
    preference, incident = green_tea_memories(user_1)
    agent = AgentFactory(tenant=tenant)
    client = client_for(agent)
    trace_id = retrieve(client, query="green tea").json()["trace_id"]
    before = client.get(f"/api/v1/traces/{trace_id}").json()
    assert {str(preference.id), str(incident.id)} <= set(before["selected_ids"])
    assert before["hidden_count"] == 0
    assert before["prompt_tokens"] > 0 and before["stages"]["counts"]["selected"] >= 2
    report = {"kind": "answer", "memory_ids": [str(incident.id), str(preference.id)]}
    assert client.post(f"/api/v1/traces/{trace_id}/usage", report, format="json").status_code == 200

    agent.read_types = [t for t in agent.read_types if t != "incident"]
    agent.save(update_fields=["read_types"])
    after = client.get(f"/api/v1/traces/{trace_id}")
    assert after.status_code == 200
    shown = json.dumps(after.json())
    assert str(incident.id) not in shown and incident.content_hash not in shown
    assert after.json()["hidden_count"] == 1
    assert str(preference.id) in after.json()["selected_ids"]
    # Nor the figures that count it: the prompt's tokens told its length to a token.
    assert after.json()["prompt_tokens"] is None
    assert after.json()["stages"]["tokens"]["prompt_tokens"] is None
    assert not {"counts", "candidates_by_store"} & set(after.json()["stages"])
    assert (
        after.json()["used_ids"] == after.json()["usage"][0]["memory_ids"] == [str(preference.id)]
    )
    # A report cannot confirm the id either: it is not in the package the agent may see.
    refused = client.post(
        f"/api/v1/traces/{trace_id}/usage",
        {"kind": "answer", "memory_ids": [str(incident.id)]},
        format="json",
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["memory_ids"][0]["code"] == "not_selected"
    accepted = client.post(
        f"/api/v1/traces/{trace_id}/usage",
        {"kind": "tool_call", "memory_ids": [str(preference.id)]},
        format="json",
    )
    assert accepted.status_code == 200 and str(incident.id) not in json.dumps(accepted.json())
    assert accepted.json()["prompt_tokens"] is None
    # The stored trace keeps every id: deletion purges by them, reviewers read them.
    stored = RetrievalTrace.objects.get(pk=trace_id)
    assert incident.id in stored.cited_ids and incident.id in stored.used_ids
    assert stored.prompt_tokens == before["prompt_tokens"] and "counts" in stored.stages
    assert len(stored.usage) == 2


def test_an_agent_s_trace_names_no_memory_of_a_subject_whose_deletion_is_queued(tenant, user_1):
    preference, incident = green_tea_memories(user_1)
    agent = AgentFactory(tenant=tenant)
    client = client_for(agent)
    trace_id = retrieve(client, query="green tea").json()["trace_id"]
    user_1.deletion_queued_at, user_1.deletion_queued_by_agent = timezone.now(), agent
    user_1.save(update_fields=["deletion_queued_at", "deletion_queued_by_agent"])
    trace = client.get(f"/api/v1/traces/{trace_id}").json()
    shown = json.dumps(trace)
    for memory in (preference, incident):
        assert str(memory.id) not in shown and memory.content_hash not in shown
    assert trace["selected_ids"] == trace["cited_ids"] == []
    assert trace["stages"]["candidates"] == trace["stages"]["selected"] == []
    assert trace["hidden_count"] == len(RetrievalTrace.objects.get(pk=trace_id).cited_ids) >= 2
