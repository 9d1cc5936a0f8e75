"""A conflict is never hidden by the stores' limits (DESIGN.md, read path step 8).

The stores rank rows one by one, at most ``max_candidates`` each: with more rows of the
planned types than that, a key's second chain, worded far from the query, missed every store
while the first came in, and the first was returned as settled. The statement now brings in
every eligible row on a key a candidate holds (``key_rivals``)."""

import pytest
from django.db.models import F

from memory_core.models import Memory
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.memories import memory_store_many
from tests.factories import SubjectFactory, insert_memories

from .conftest import atlas_rule

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("fillers", [5, 45])
def test_a_rival_worded_far_from_the_query_still_makes_the_conflict(api_client, tenant, fillers):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    near, far, *_ = memory_store_many(
        drafts=[
            atlas_rule(
                me, "Deploy atlas to eu-west-1.", memory_key="deploy.region", confidence=0.7
            ),
            atlas_rule(
                me,
                "Billing exports are written in CSV with us-east-1 timestamps.",
                memory_key="deploy.region",
                confidence=0.7,
            ),
            *[
                atlas_rule(
                    me,
                    f"Deploy atlas service {n} only after the region check passes.",
                    memory_key=f"atlas.rule{n}",
                )
                for n in range(fillers)
            ],
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    body = {
        "query": "Which region do we deploy atlas to?",
        "intent": "apply_project_rules",
        "context": {"user_id": "dana", "project_id": "atlas"},
        "budget": {"max_items": 100, "max_items_per_type": 100, "max_tokens": 32000},
    }

    answer = api_client.post("/api/v1/retrieve", body, format="json").json()

    assert [c["memory_key"] for c in answer["clarifications"]] == ["deploy.region"]
    assert str(near.id) not in {item["id"] for item in answer["items"]}
    trace = api_client.get(f"/api/v1/traces/{answer['trace_id']}").json()
    assert {str(near.id), str(far.id)} <= set(trace["cited_ids"])


def _key_rivals(principal) -> set[str]:
    result = retrieve(
        principal=principal,
        request=RetrievalRequest(query="What caused the Atlas outage?", user_id="dana"),
    )
    return {c["id"] for c in result.trace["candidates"] if "key_rivals" in c["sources"]}


def test_the_key_rivals_are_the_same_rows_for_the_same_data(tenant, agent):
    """Stop 64's audit of retrieval: the key's rivals (``build_candidate_sql``, the ``rivals``
    CTE) had a ``LIMIT`` and no ``ORDER BY``, so with more of them than ``max_candidates``
    the rows left out were where their tuples lay: an update that changes no value changed
    the candidates of the very same request. They are taken closest first, then by id."""
    me = SubjectFactory(tenant=tenant, external_id="dana")
    insert_memories(
        me, 61, memory_class="episodic", memory_type="incident", memory_key="atlas.outage",
        content="Entry {n} of the log.",
    )  # fmt: skip
    found = Memory.objects.filter(subject=me).order_by("pk").first()  # the one the query finds
    Memory.objects.filter(pk=found.pk).update(content="The Atlas outage: the disk was full.")
    principal = AgentPrincipal.from_agent(agent)
    before = _key_rivals(principal)
    assert len(before) == 40  # the policy's max_candidates, of the key's 60 other rows
    # Rewrite one returned row with its own values: nothing anyone reads changes.
    first = Memory.objects.filter(pk__in=before).order_by("pk").first()
    Memory.objects.filter(pk=first.pk).update(content=F("content"))
    assert _key_rivals(principal) == before
