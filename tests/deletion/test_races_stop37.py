"""A pending write deleted by id while a reviewer approves it (a review's finding, stop 37).

docs/api.md: a memory's deletion deletes "the memory and the older versions it supersedes".
The request read that history before it waited for the subject's lock, which the approval
holds: the approval linked the pending write onto its key's head meanwhile, and the
deletion took the approved write alone, leaving the version it superseded, content and all.
No serial order gives that: approve-then-delete deletes both, delete-then-approve approves
nothing.
"""

import pytest
from django.contrib.auth.models import User

from memory_core.models import DeletionOperation, Memory, ReviewItem, Status
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.reviews import review_approve
from memory_core.services.writes import memory_correct
from tests.clients import client_for
from tests.deletion.conftest import requested_while_held
from tests.factories import AgentFactory, MemoryFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _approving(tenant, item_id):
    """A reviewer's approval of ``item_id``, to hold in another transaction."""
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=User.objects.create_user("r").pk)
    return lambda: review_approve(principal=reviewer, item_id=item_id, reason="ok")


def test_a_pending_write_deleted_while_approved_takes_the_version_it_superseded(
    tenant, owner, api_client
):
    head = MemoryFactory(
        subject=owner, memory_key="health.diet", content="Carol eats no gluten.",
        sensitivity="sensitive",
    )  # fmt: skip
    owner_principal = SubjectPrincipal(tenant_id=tenant.id, subject_id=owner.id, user_id=1)
    with tenant_scope(tenant.id):
        pending = memory_correct(
            principal=owner_principal, memory_id=head.pk, data={"content": "Carol eats no dairy."}
        )
    assert pending.decision == "pending_approval"

    response = requested_while_held(
        tenant.id,
        _approving(tenant, pending.review_item.id),
        lambda: api_client.delete(f"/api/v1/memories/{pending.memory.pk}"),
    )

    assert response.status_code == 202, response.content
    with tenant_scope(tenant.id):
        approved = Memory.objects.get(pk=pending.memory.pk)
        operation = DeletionOperation.objects.get(pk=response.json()["operation_id"])
        rows = list(Memory.objects.filter(subject=owner).values_list("pk", "status", "content"))
        left = Memory.objects.get(pk=head.pk)
    assert approved.supersedes_id == head.pk  # the approval linked it onto the head first
    assert sorted(operation.memory_ids, key=str) == sorted([head.pk, approved.pk], key=str)
    assert (left.status, left.content) == (Status.DELETED, ""), rows


def test_an_agent_whose_grant_misses_the_version_an_approval_linked_deletes_nothing(tenant, owner):
    """As for any history (``history_not_fully_granted``): an agent capped below the version
    the approved write supersedes may not delete that write, read before or after the
    approval. Read before, the agent's deletion took the write and left that version."""
    head = MemoryFactory(
        subject=owner, memory_key="health.diet", content="Carol has coeliac disease.",
        sensitivity="restricted",
    )  # fmt: skip
    pending = MemoryFactory(
        subject=owner, memory_key="health.diet", content="Carol eats no dairy.",
        sensitivity="sensitive", status=Status.PENDING_APPROVAL,
    )  # fmt: skip
    item = ReviewItem.objects.create(
        tenant=tenant,
        subject=owner,
        kind=ReviewItem.Kind.SENSITIVE_WRITE,
        memory=pending,
        memory_key="health.diet",
        candidate_ids=[head.pk],
    )
    capped = client_for(AgentFactory(tenant=tenant, max_sensitivity="sensitive"))

    response = requested_while_held(
        tenant.id,
        _approving(tenant, item.pk),
        lambda: capped.delete(f"/api/v1/memories/{pending.pk}"),
    )

    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "history_not_fully_granted"
    assert "older version" in error["message"]
    with tenant_scope(tenant.id):
        assert not DeletionOperation.objects.exists()
        left = Memory.objects.get(pk=head.pk)
        assert Memory.objects.get(pk=pending.pk).supersedes_id == head.pk
    assert (left.status, left.content) == (Status.SUPERSEDED, "Carol has coeliac disease.")
