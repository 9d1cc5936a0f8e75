"""Reviewer-only reads and actions answer anyone else alike: as if there were nothing there."""

import pytest
from django.utils import timezone

from memory_core.deletion.selectors import deletion_dead_letters
from memory_core.deletion.services import deletion_retry
from memory_core.exceptions import NotFound
from memory_core.models import DeletionOperation, ReviewItem
from memory_core.principals import (
    AgentPrincipal,
    ReviewerPrincipal,
    SubjectPrincipal,
    SystemPrincipal,
    require_reviewer,
)
from memory_core.selectors.health import health_overview
from memory_core.selectors.portal import rejected_by_rule, review_queue
from memory_core.selectors.reviews import review_get, review_list
from memory_core.services.reviews import review_approve, review_reject
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_require_reviewer_lets_a_reviewer_and_with_or_system_memledger_through(tenant):
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=1)
    system = SystemPrincipal(tenant_id=tenant.id)
    require_reviewer(reviewer, message="x")
    require_reviewer(system, message="x", or_system=True)
    with pytest.raises(NotFound, match="Nothing here."):
        require_reviewer(system, message="Nothing here.")


REVIEWER_ONLY = {
    "review_list": lambda p, ids: review_list(principal=p),
    "review_get": lambda p, ids: review_get(principal=p, item_id=ids["item"]),
    "review_approve": lambda p, ids: review_approve(principal=p, item_id=ids["item"], reason="r"),
    "review_reject": lambda p, ids: review_reject(principal=p, item_id=ids["item"], reason="r"),
    "review_queue": lambda p, ids: review_queue(principal=p),
    "rejected_by_rule": lambda p, ids: rejected_by_rule(principal=p),
    "health_overview": lambda p, ids: health_overview(principal=p),
    "deletion_dead_letters": lambda p, ids: deletion_dead_letters(principal=p),
    "deletion_retry": lambda p, ids: deletion_retry(principal=p, operation_id=ids["operation"]),
}


@pytest.fixture
def waiting(tenant, subject):
    """A write waiting for a reviewer and a dead-lettered deletion, both of ``subject``'s
    tenant: a guard that let anyone else through would find them (an unknown id is NotFound
    with or without it)."""
    memory = MemoryFactory(subject=subject, status="pending_approval")
    item = ReviewItem.objects.create(
        tenant=tenant, subject=subject, kind=ReviewItem.Kind.SENSITIVE_WRITE, memory=memory
    )
    operation = DeletionOperation.objects.create(
        tenant=tenant,
        subject=subject,
        target="memory",
        status="failed",
        dead_lettered_at=timezone.now(),
    )
    return {"item": item.id, "operation": operation.id}


@pytest.mark.parametrize("call", REVIEWER_ONLY.values(), ids=REVIEWER_ONLY.keys())
def test_what_only_reviewers_reach_is_not_found_for_anyone_else(
    tenant, agent, subject, waiting, call
):
    """Three of them answered PermissionDenied (the dead letters, their retry), the rest
    NotFound: an end user or an agent learnt from the 403 that the page or the id existed."""
    for principal in (
        SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1),
        AgentPrincipal.from_agent(agent),
    ):
        with pytest.raises(NotFound):
            call(principal, waiting)
    assert ReviewItem.objects.get(pk=waiting["item"]).state == "open"
    assert DeletionOperation.objects.get(pk=waiting["operation"]).status == "failed"
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=1)
    assert REVIEWER_ONLY["review_get"](reviewer, waiting).pk == waiting["item"]
