"""The events an approval records when it keeps a write beside the key's head in a conflict
(stop 52's audit of the reviewer's side)."""

import pytest

from memory_core.models import MemoryEvent, ReviewItem
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.selectors.health import health_overview
from memory_core.services.reviews import review_approve
from memory_core.services.writes import memory_correct
from tests.factories import MemoryFactory, pending_write_on

pytestmark = pytest.mark.django_db


def test_an_approved_sensitive_correction_of_an_admins_memory_counts_as_the_users_correction(
    tenant, reviewer, alice, alice_subject
):
    """docs/portal.md, the health page's user corrections: `corrected` by a user (a sensitive
    correction too, once a reviewer approved it), or `conflict` by a user, a correction of an
    administrator's memory kept beside it. Approved, it was neither: counted 0."""
    admins = MemoryFactory(
        subject=alice_subject,
        memory_key="commute.mode",
        content="Alice walks to work.",
        authority="explicit_admin",
        source_type="admin",
        sensitivity="sensitive",
    )
    user = SubjectPrincipal(tenant_id=tenant.id, subject_id=alice_subject.pk, user_id=alice.pk)
    result = memory_correct(
        principal=user, memory_id=admins.id, data={"content": "Alice has asthma; takes the bus."}
    )
    assert result.decision == "pending_approval"
    principal = ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk)
    review_approve(principal=principal, item_id=result.review_item.id, reason="ok")
    assert ReviewItem.objects.filter(
        kind="conflict", state="open", candidate_ids__contains=[result.memory.id]
    ).exists()  # kept beside the administrator's memory, for a reviewer
    charts = {chart.key: chart for chart in health_overview(principal=principal, days=7).charts}
    assert charts["corrections"].series[0].values[-1] == 1


def test_the_conflict_events_name_the_part_that_saw_it_and_carry_the_policy_version(
    tenant, reviewer, alice_subject
):
    """architecture.md: an event is "action, actor, reason code, policy version". An
    approval of lower authority than the head recorded the candidates' `conflict` events with
    no policy version, as by `system:retrieval`, which had not run."""
    head = MemoryFactory(
        subject=alice_subject, memory_key="diet.notes", content="Eats all.", policy_version=1
    )
    item = pending_write_on(
        head,
        "The model thinks she is diabetic.",
        authority="model_inference",
        source_type="model_inference",
        confidence=0.6,
        policy_version=1,
    )
    review_approve(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk),
        item_id=item.pk,
        reason="ok",
    )
    events = MemoryEvent.objects.filter(
        memory_id__in=[head.pk, item.memory_id], action="conflict", actor_type="system"
    )
    assert sorted(events.values_list("actor_id", "policy_version")) == [("review", 1)] * 2
