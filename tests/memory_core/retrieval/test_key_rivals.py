"""A conflict is never hidden by the stores' limits (DESIGN.md, read path step 8).

The stores rank rows one by one, at most ``max_candidates`` each: with more rows of the
planned types than that, a key's second chain, worded far from the query, missed every store
while the first came in, and the first was returned as settled. The statement now brings in
every eligible row on a key a candidate holds (``key_rivals``)."""

import pytest

from memory_core.principals import SystemPrincipal
from memory_core.services.memories import memory_store_many
from tests.factories import SubjectFactory

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
