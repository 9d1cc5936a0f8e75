"""What a trace answered to its agent still told of memories the agent no longer sees (stop
68's audit of traces, closed at stop 69).

A selected item's ``score`` and ``components.redundancy_penalty`` were measured against the
candidates ranked above it: once one of them is hidden from the agent (or deleted), the
penalty told its cosine to the item. And the 50 usage reports a trace takes counted those
hidden from the agent, so a ``409 too_many_reports`` told an agent shown fewer that they
exist. Each test failed before its fix.
"""

import copy
import json

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import RetrievalTrace
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from memory_core.services.policy import policy_publish
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def retrieve(client, query):
    response = client.post(
        "/api/v1/retrieve", {"query": query, "context": {"user_id": "user-1"}}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["trace_id"]


def report(client, trace_id, memory_ids, kind="answer"):
    return client.post(
        f"/api/v1/traces/{trace_id}/usage",
        {"kind": kind, "memory_ids": [str(i) for i in memory_ids]},
        format="json",
    )


@pytest.fixture
def two_teas(tenant):
    """Two preferences of one type on their own keys, close enough to each other that the
    lower one is penalized for the better one (the policy's ``redundancy_cosine`` lowered)."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    drafts = [
        MemoryDraft(subject=subject, memory_type="user_preference", memory_key=key,
                    content=content, authority="explicit_user", source_type="user_input",
                    sensitivity="personal")
        for key, content in (
            ("drink.morning", "User drinks green tea in the morning."),
            ("drink.afternoon", "User drinks green tea in the afternoon."),
        )
    ]  # fmt: skip
    memories = memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retrieval"] = {"redundancy_cosine": 0.5}
    policy_publish(tenant=tenant, document=document)
    return memories


def test_an_items_redundancy_penalty_and_score_go_once_a_memory_of_the_trace_is_hidden_or_deleted(
    tenant, two_teas
):
    client = client_for(AgentFactory(tenant=tenant))
    trace_id = retrieve(client, "What does the user drink?")
    before = client.get(f"/api/v1/traces/{trace_id}").json()
    by_id = {item["id"]: item for item in before["stages"]["selected"]}
    assert set(by_id) == {str(m.id) for m in two_teas}
    [penalized] = [i for i, item in by_id.items() if item["components"]["redundancy_penalty"]]
    [better] = [m for m in two_teas if str(m.id) != penalized]
    assert by_id[penalized]["score"] < by_id[str(better.id)]["score"]

    # The person deletes the better one: hidden from the agent from the request on.
    owner = SystemPrincipal(tenant_id=tenant.id)
    operation = deletion_request(principal=owner, memory_id=better.id)
    hidden = client.get(f"/api/v1/traces/{trace_id}").json()
    assert hidden["hidden_count"] == 1
    [item] = hidden["stages"]["selected"]
    assert item["id"] == penalized
    # Its penalty was the hidden memory's cosine to it, and the score is taken from it.
    assert item["score"] is None and item["components"]["redundancy_penalty"] is None
    own = {k: v for k, v in item["components"].items() if k != "redundancy_penalty"}
    assert own == {
        k: v for k, v in by_id[penalized]["components"].items() if k != "redundancy_penalty"
    }
    assert item["reason"] == by_id[penalized]["reason"]
    # The stored row keeps them (the Django admin's view).
    stored = RetrievalTrace.objects.get(pk=trace_id).stages["selected"]
    assert [s["components"]["redundancy_penalty"] for s in stored if s["id"] == penalized][0] > 0

    # Deleted and scrubbed out of the stored row: nothing is hidden any more, but the
    # penalty still measured the deleted memory.
    assert deletion_run(operation_id=operation.id) == "completed"
    scrubbed = client.get(f"/api/v1/traces/{trace_id}").json()
    assert scrubbed["hidden_count"] == 0 and scrubbed["stages"]["deleted_since"] == 1
    [item] = scrubbed["stages"]["selected"]
    assert item["score"] is None and item["components"]["redundancy_penalty"] is None
    assert str(better.id) not in json.dumps(scrubbed)


def test_an_agent_that_sees_every_memory_of_its_trace_is_answered_every_score(tenant, two_teas):
    client = client_for(AgentFactory(tenant=tenant))
    trace_id = retrieve(client, "What does the user drink?")
    trace = client.get(f"/api/v1/traces/{trace_id}").json()
    stored = RetrievalTrace.objects.get(pk=trace_id).stages["selected"]
    assert trace["stages"]["selected"] == stored
    assert all(isinstance(item["score"], float) for item in stored)


def green_tea(tenant):
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    preference = MemoryFactory(subject=subject, content="User prefers green tea in the morning.")
    incident = MemoryFactory(
        subject=subject, incident=True, content="User spilled green tea on the laptop."
    )
    return preference, incident


def test_too_many_reports_counts_only_the_reports_the_agent_sees(tenant):
    preference, incident = green_tea(tenant)
    agent = AgentFactory(tenant=tenant)
    client = client_for(agent)
    trace_id = retrieve(client, "green tea")
    for _ in range(50):
        assert report(client, trace_id, [incident.id]).status_code == 200
    full = report(client, trace_id, [preference.id])
    assert full.status_code == 409 and full.json()["error"]["code"] == "too_many_reports"

    # The admin narrows the agent's grant: the 50 reports cite only what it no longer reads.
    agent.read_types = [t for t in agent.read_types if t != "incident"]
    agent.save(update_fields=["read_types"])
    seen = client.get(f"/api/v1/traces/{trace_id}").json()
    assert seen["usage"] == [] and seen["hidden_count"] == 1
    # It sees none, and may report: a 409 here told it that reports it cannot see exist.
    accepted = report(client, trace_id, [preference.id])
    assert accepted.status_code == 200, accepted.content
    assert len(accepted.json()["usage"]) == 1
    for _ in range(48):
        assert report(client, trace_id, [preference.id]).status_code == 200
    assert report(client, trace_id, [], kind="tool_call").status_code == 200
    # 50 it sees: the 409 says what it is shown.
    shown = client.get(f"/api/v1/traces/{trace_id}").json()["usage"]
    assert len(shown) == 50
    refused = report(client, trace_id, [preference.id])
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "too_many_reports"

    # Its grant widened again, it sees all 100; none more is taken, of either memory.
    agent.read_types = [*agent.read_types, "incident"]
    agent.save(update_fields=["read_types"])
    assert len(client.get(f"/api/v1/traces/{trace_id}").json()["usage"]) == 100
    for memory_ids in ([incident.id], [preference.id], []):
        assert report(client, trace_id, memory_ids).status_code == 409
    # The row's bound: at most 50 reports name any one memory, at most 50 name none.
    usage = RetrievalTrace.objects.get(pk=trace_id).usage
    assert len(usage) == 100
    naming = {
        name: sum(r["memory_ids"] == ids for r in usage)
        for name, ids in (("incident", [str(incident.id)]), ("preference", [str(preference.id)]),
                          ("none", []))
    }  # fmt: skip
    assert naming == {"incident": 50, "preference": 49, "none": 1}
