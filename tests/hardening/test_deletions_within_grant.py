"""An agent sees the deletion operations its grant reaches, as it sees the memories.

``GET /api/v1/deletions`` and ``/{id}`` showed an agent that may act for any subject every
operation of the tenant: another agent's deletion of a private, restricted incident, its
target, count, times and steps, where the memory itself answers 404; and a queued deletion's
id that the same request would have refused it (403). Found by an isolation audit of stop 29.
"""

import pytest
from django.utils import timezone

from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


def test_another_agents_deletion_of_a_memory_outside_the_grant_is_not_found(tenant, user):
    owner = AgentFactory(tenant=tenant, max_sensitivity="restricted")
    narrow = AgentFactory(
        tenant=tenant, max_sensitivity="public", read_types=["episode"], write_types=["episode"]
    )
    private = MemoryFactory(subject=user, agent=owner, sensitivity="restricted", incident=True)
    seen = MemoryFactory(
        subject=user, memory_type="episode", memory_class="episodic", sensitivity="public"
    )
    hidden_op = client_for(owner).delete(f"/api/v1/memories/{private.id}").json()["operation_id"]
    shared_op = client_for(owner).delete(f"/api/v1/memories/{seen.id}").json()["operation_id"]

    reader = client_for(narrow)
    listed = {op["operation_id"] for op in reader.get("/api/v1/deletions").json()["results"]}

    assert reader.get(f"/api/v1/memories/{private.id}").status_code == 404
    assert reader.get(f"/api/v1/deletions/{hidden_op}").status_code == 404
    assert hidden_op not in listed
    # One whose memories it may read it still sees, and the owner sees both.
    assert shared_op in listed
    assert reader.get(f"/api/v1/deletions/{shared_op}").status_code == 200
    assert client_for(owner).get(f"/api/v1/deletions/{hidden_op}").status_code == 200


def test_a_queued_deletion_the_grant_does_not_reach_is_not_listed(tenant, user):
    MemoryFactory(subject=user, sensitivity="restricted", content="A restricted fact.")
    broad = AgentFactory(tenant=tenant, max_sensitivity="restricted")
    user.deletion_queued_at = timezone.now()
    user.deletion_queued_by_agent = broad
    user.save(update_fields=["deletion_queued_at", "deletion_queued_by_agent"])
    narrow = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))

    asked = narrow.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    listed = narrow.get("/api/v1/deletions").json()["results"]

    assert asked.status_code == 403
    assert listed == []
    queued = client_for(broad).get("/api/v1/deletions").json()["results"]
    assert [op["status"] for op in queued] == ["queued"]
    assert narrow.get(f"/api/v1/deletions/{queued[0]['operation_id']}").status_code == 404
