"""Reviewer-only reads and actions answer anyone else alike: as if there were nothing there."""

import uuid

import pytest

from memory_core.deletion.selectors import deletion_dead_letters
from memory_core.deletion.services import deletion_retry
from memory_core.exceptions import NotFound
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

pytestmark = pytest.mark.django_db


def test_require_reviewer_lets_a_reviewer_and_with_or_system_memledger_through(tenant):
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=1)
    system = SystemPrincipal(tenant_id=tenant.id)
    require_reviewer(reviewer, message="x")
    require_reviewer(system, message="x", or_system=True)
    with pytest.raises(NotFound, match="Nothing here."):
        require_reviewer(system, message="Nothing here.")


ANY_ID = uuid.uuid4()
REVIEWER_ONLY = {
    "review_list": lambda p: review_list(principal=p),
    "review_get": lambda p: review_get(principal=p, item_id=ANY_ID),
    "review_approve": lambda p: review_approve(principal=p, item_id=ANY_ID, reason="r"),
    "review_reject": lambda p: review_reject(principal=p, item_id=ANY_ID, reason="r"),
    "review_queue": lambda p: review_queue(principal=p),
    "rejected_by_rule": lambda p: rejected_by_rule(principal=p),
    "health_overview": lambda p: health_overview(principal=p),
    "deletion_dead_letters": lambda p: deletion_dead_letters(principal=p),
    "deletion_retry": lambda p: deletion_retry(principal=p, operation_id=ANY_ID),
}


@pytest.mark.parametrize("call", REVIEWER_ONLY.values(), ids=REVIEWER_ONLY.keys())
def test_what_only_reviewers_reach_is_not_found_for_anyone_else(tenant, agent, subject, call):
    """Three of them answered PermissionDenied (the dead letters, their retry), the rest
    NotFound: an end user or an agent learnt from the 403 that the page or the id existed."""
    for principal in (
        SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1),
        AgentPrincipal.from_agent(agent),
    ):
        with pytest.raises(NotFound):
            call(principal)
