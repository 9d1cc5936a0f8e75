"""What the order of a trace's items, and the budget's reasons, still told an agent of a
memory it no longer sees once the items' scores were null (stop 69's review of stop 68's
audit of traces).

Each item keeps its own components, and the weights are the policy's (the defaults are
public): in score order, two items of one section told which of them the redundancy penalty
lowered the more, and by how much at least, the penalty that may be a hidden memory's cosine
to it. A budget rejection ``redundant_with_selected`` told that an item chosen above it, the
hidden one perhaps, was within ``diversity_cosine`` of it. Each test failed before its fix.
"""

import copy
import uuid

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.embeddings import get_embedder
from memory_core.models import RetrievalTrace
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.principals import SystemPrincipal
from memory_core.services.policy import policy_publish
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

# Ids chosen so that, of the two items left, the one ranked first has the larger id.
HIDDEN = uuid.UUID("00000000-0000-4000-8000-00000000000a")
NEAR = uuid.UUID("00000000-0000-4000-8000-00000000000b")
OTHER = uuid.UUID("00000000-0000-4000-8000-00000000000c")


def drinks(tenant, **retrieval):
    """Three preferences of the user's drinks (ids above), embedded; ``retrieval``: the
    policy's retrieval section. NEAR is close to HIDDEN, OTHER less so."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    embedder = get_embedder()
    rows = (
        (HIDDEN, "drink.morning", "User drinks green tea in the morning.", 1.0),
        (NEAR, "drink.afternoon", "User drinks green tea in the afternoon.", 1.0),
        (OTHER, "drink.evening", "User drinks warm milk before bed.", 0.9),
    )
    vectors = embedder.embed([content for _, _, content, _ in rows])
    for (memory_id, key, content, confidence), vector in zip(rows, vectors, strict=True):
        MemoryFactory(id=memory_id, subject=subject, memory_key=key, content=content,
                      confidence=confidence, embedding=vector,
                      embedding_model=embedder.model_name)  # fmt: skip
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retrieval"] = retrieval
    policy_publish(tenant=tenant, document=document)


def retrieve_and_hide(tenant):
    """The agent's trace of "What does the user drink?": as stored, as answered while it sees
    every memory, and as answered once the person's deletion of HIDDEN is queued."""
    client = client_for(AgentFactory(tenant=tenant))
    response = client.post(
        "/api/v1/retrieve",
        {"query": "What does the user drink?", "context": {"user_id": "user-1"}},
        format="json",
    )
    assert response.status_code == 200, response.content
    trace_id = response.json()["trace_id"]
    seen = client.get(f"/api/v1/traces/{trace_id}").json()
    deletion_request(principal=SystemPrincipal(tenant_id=tenant.id), memory_id=HIDDEN)
    hidden = client.get(f"/api/v1/traces/{trace_id}").json()
    assert hidden["hidden_count"] == 1
    return RetrievalTrace.objects.get(pk=trace_id), seen, hidden


def test_the_items_left_are_answered_by_id_not_by_their_scores(tenant):
    drinks(tenant, redundancy_cosine=0.5)
    stored, seen, hidden = retrieve_and_hide(tenant)
    ranked = [item["id"] for item in stored.stages["selected"]]
    assert ranked == [str(HIDDEN), str(OTHER), str(NEAR)]
    # Seeing every memory, the agent is answered the package's order, every score.
    assert seen["stages"]["selected"] == stored.stages["selected"]
    assert seen["selected_ids"] == ranked
    by_id = {item["id"]: item for item in stored.stages["selected"]}
    weights = DEFAULT_POLICY["ranking_weights"]

    def unpenalized(memory_id):
        components = by_id[str(memory_id)]["components"]
        names = ("semantic", "task_fit", "scope", "authority", "freshness", "confidence")
        return sum(weights[name] * components[name] for name in names)

    # The score each would have had without its penalty: NEAR's is the higher, yet it ranked
    # below OTHER, so answered in that order the trace told that NEAR's penalty (its cosine
    # to the hidden memory) outweighed OTHER's by the difference at least.
    assert unpenalized(NEAR) > unpenalized(OTHER)

    items = hidden["stages"]["selected"]
    assert [item["id"] for item in items] == [str(NEAR), str(OTHER)]
    assert all(item["score"] is None for item in items)
    assert hidden["selected_ids"] == [str(NEAR), str(OTHER)]


def test_the_budgets_rejections_are_answered_without_their_reason(tenant):
    drinks(tenant, diversity_cosine=0.85)
    stored, seen, hidden = retrieve_and_hide(tenant)
    assert [item["id"] for item in stored.stages["selected"]] == [str(HIDDEN), str(OTHER)]
    rejected = {"id": str(NEAR), "stage": "budget", "reason": "redundant_with_selected"}
    assert stored.stages["rejections"] == [rejected]
    assert seen["stages"]["rejections"] == [rejected]
    # OTHER is not within diversity_cosine of NEAR (the agent may embed both): the reason
    # said the hidden memory, chosen above NEAR, was.
    assert [item["id"] for item in hidden["stages"]["selected"]] == [str(OTHER)]
    assert hidden["stages"]["rejections"] == [{**rejected, "reason": None}]


def test_no_sequence_of_reports_hides_and_deletions_grows_the_usage_past_its_bound(tenant):
    """The row's bound (``trace_usage_record``): at most 50 reports name any one memory of
    ``selected_ids``, at most 50 name none. Reports while each memory in turn is hidden, then
    none readable, reach 50 x (2 + 1) and no more; a deletion only lowers the bound."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    preference = MemoryFactory(subject=subject, content="User prefers green tea in the morning.")
    incident = MemoryFactory(
        subject=subject, incident=True, content="User spilled green tea on the laptop."
    )
    agent = AgentFactory(tenant=tenant)
    client = client_for(agent)
    response = client.post(
        "/api/v1/retrieve", {"query": "green tea", "context": {"user_id": "user-1"}}, format="json"
    )
    trace_id = response.json()["trace_id"]
    url = f"/api/v1/traces/{trace_id}/usage"
    read_types = list(agent.read_types)

    def grant(*hidden_types):
        agent.read_types = [t for t in read_types if t not in hidden_types]
        agent.save(update_fields=["read_types"])

    def report(memory_ids, times=1):
        body = {"kind": "answer", "memory_ids": [str(i) for i in memory_ids]}
        return [client.post(url, body, format="json").status_code for _ in range(times)]

    both = [preference.id, incident.id]
    assert report(both, 25) == [200] * 25
    grant("incident")
    assert report([preference.id], 25) == [200] * 25
    assert report([preference.id]) == [409]
    grant("user_preference")
    assert report([incident.id], 25) == [200] * 25
    assert report([incident.id]) == [409]
    grant("user_preference", "incident")
    assert report([], 50) == [200] * 50
    grant()
    for memory_ids in ([preference.id], [incident.id], both, []):
        assert report(memory_ids) == [409]
    usage = RetrievalTrace.objects.get(pk=trace_id).usage
    assert len(usage) == 125 <= 50 * (2 + 1)
    assert sum(str(preference.id) in r["memory_ids"] for r in usage) == 50
    assert sum(str(incident.id) in r["memory_ids"] for r in usage) == 50
    assert sum(not r["memory_ids"] for r in usage) == 50

    # Deleted, the preference leaves the reports (the 25 citing only it go): 100 stay, the
    # bound of the one memory left, 50 x (1 + 1), and none more is taken.
    owner = SystemPrincipal(tenant_id=tenant.id)
    operation = deletion_request(principal=owner, memory_id=preference.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    usage = RetrievalTrace.objects.get(pk=trace_id).usage
    assert len(usage) == 100 <= 50 * (1 + 1)
    for memory_ids in ([incident.id], []):
        assert report(memory_ids) == [409]
