"""An unkeyed copy of a keyed fact folds into the keyed row, whichever is the stronger.

Kept as the survivor when it was the stronger, the copy of a disputed fact stood in the
package beside the clarification asking the user about its key (and with a settled key, the
keyed row was folded into the copy, which then came back without its key)."""

import pytest

from memory_core.principals import SystemPrincipal
from memory_core.services.memories import memory_store_many
from tests.factories import SubjectFactory

from .conftest import atlas_rule

pytestmark = pytest.mark.django_db

QUERY = {
    "query": "Which region do we deploy atlas to?",
    "intent": "apply_project_rules",
    "context": {"user_id": "dana", "project_id": "atlas"},
}


@pytest.mark.parametrize("copy_confidence", [0.75, 0.65], ids=["copy stronger", "copy weaker"])
def test_a_copy_of_a_disputed_fact_leaves_with_its_key(api_client, tenant, copy_confidence):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    first, _, copy = memory_store_many(
        drafts=[
            atlas_rule(
                me, "Deploy atlas to eu-west-1.", memory_key="deploy.region", confidence=0.7
            ),
            atlas_rule(
                me, "Deploy atlas to us-east-1.", memory_key="deploy.region", confidence=0.7
            ),
            atlas_rule(me, "Deploy atlas to eu-west-1.", confidence=copy_confidence),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )

    answer = api_client.post("/api/v1/retrieve", QUERY, format="json").json()

    assert [c["memory_key"] for c in answer["clarifications"]] == ["deploy.region"]
    assert str(copy.id) not in {item["id"] for item in answer["items"]}


def test_a_copy_of_a_settled_fact_comes_back_with_its_key(api_client, tenant):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    keyed, copy = memory_store_many(
        drafts=[
            atlas_rule(
                me, "Deploy atlas to eu-west-1.", memory_key="deploy.region", confidence=0.7
            ),
            atlas_rule(me, "Deploy atlas to eu-west-1.", confidence=0.9),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )

    items = api_client.post("/api/v1/retrieve", QUERY, format="json").json()["items"]

    same = [item for item in items if item["content"] == "Deploy atlas to eu-west-1."]
    assert [(item["id"], item["memory_key"]) for item in same] == [(str(keyed.id), "deploy.region")]
