"""A deletion closes the conflicts it leaves with fewer than two candidates in use, "the same
way" a revoke does (docs/retrieval.md, after conflict_resolve's table). The events step
counted the ids left, not those in use: a conflict left citing a revoked (or ended) row beside
one in use stayed open, with one memory to "choose" (stop 55's audit of conflicts)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import Memory, ReviewItem
from memory_core.principals import SubjectPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.services.writes import memory_revoke
from tests.memory_core.retrieval.test_conflict_service import REQUEST, tied_regions

pytestmark = pytest.mark.django_db


def _three(tenant):
    rows = tied_regions(tenant, "eu-west-1", "us-east-1", "ap-south-1")
    return rows[0].subject, rows


def test_deleting_a_candidate_closes_a_conflict_left_with_one_in_use_after_a_revoke(
    agent_principal, tenant
):
    subject, (a, b, c) = _three(tenant)
    [clarification] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    item_id = clarification.review_item_id
    assert len(ReviewItem.objects.get(pk=item_id).candidate_ids) == 3
    person = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    memory_revoke(principal=person, memory_id=c.id)
    assert ReviewItem.objects.get(pk=item_id).state == "open"  # a and b still in use
    operation = deletion_request(principal=person, memory_id=a.id)
    deletion_run(operation_id=operation.id)
    item = ReviewItem.objects.get(pk=item_id)
    # Only b is in use: nothing is left for a reviewer to choose, as after a revoke.
    assert Memory.objects.get(pk=c.id).status == "revoked"
    assert item.state == "resolved", (item.state, item.candidate_ids)
    assert item.resolution == "deleted"


def test_deleting_a_candidate_closes_a_conflict_left_with_one_in_use_beside_an_ended_one(
    agent_principal, tenant
):
    subject, (a, b, c) = _three(tenant)
    [clarification] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    item_id = clarification.review_item_id
    # c passes its valid_until: still "active" until the sweep, no longer in use.
    Memory.objects.filter(pk=c.id).update(
        valid_from=timezone.now() - timedelta(days=2),
        valid_until=timezone.now() - timedelta(minutes=1),
    )
    person = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=person, memory_id=a.id)
    deletion_run(operation_id=operation.id)
    item = ReviewItem.objects.get(pk=item_id)
    assert item.state == "resolved", (item.state, item.candidate_ids)
