"""The write and review services with real rows: approval, rejection, portal corrections."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory_core.exceptions import Conflict, NotFound
from memory_core.models import Memory, MemoryEvent, PortalMembership, ReviewItem, Status
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.services.reviews import review_approve, review_reject
from memory_core.services.writes import consent_withdraw, memory_correct, memory_write
from tests.factories import MemoryFactory, approve_workflow_consent

pytestmark = pytest.mark.django_db


def data(content, key="health.notes", **extra):
    return {
        "subject": "user-5",
        "memory_type": "user_preference",
        "memory_key": key,
        "scope": "global",
        "content": content,
        "source": {"type": "user_input", "conversation_id": "c", "message_id": "m"},
        **extra,
    }


@pytest.fixture
def reviewer(tenant):
    user = get_user_model().objects.create_user("reviewer-1")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    return ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)


def test_two_approved_corrections_of_a_keyless_memory_make_one_chain(agent_principal, reviewer):
    head = memory_write(principal=agent_principal, data=data("User likes walking.", key="")).memory
    source = {"type": "user_input", "conversation_id": "c", "message_id": "m"}
    first = memory_correct(
        principal=agent_principal,
        memory_id=head.id,
        data={"content": "User has asthma; walks only.", "source": source},
    )
    second = memory_correct(
        principal=agent_principal,
        memory_id=head.id,
        data={"content": "User has asthma; swims now.", "source": source},
    )
    assert first.decision == second.decision == "pending_approval"
    review_approve(principal=reviewer, item_id=first.review_item.id, reason="ok")
    review_approve(principal=reviewer, item_id=second.review_item.id, reason="ok")
    rows = Memory.objects.filter(pk__in=[head.id, first.memory.id, second.memory.id])
    by_id = {m.id: m for m in rows}
    assert [by_id[i].status for i in (head.id, first.memory.id, second.memory.id)] == [
        Status.SUPERSEDED,
        Status.SUPERSEDED,
        Status.ACTIVE,
    ]
    assert by_id[second.memory.id].supersedes_id == first.memory.id
    assert by_id[second.memory.id].version == 3


def test_approval_links_the_pending_write_into_its_chain(agent_principal, reviewer):
    head = memory_write(principal=agent_principal, data=data("User likes walking.")).memory
    pending = memory_write(principal=agent_principal, data=data("User has asthma; avoid runs."))
    assert pending.decision == "pending_approval"
    assert Memory.objects.get(pk=head.pk).status == Status.ACTIVE  # untouched while pending
    item = review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")
    assert item.state == "approved" and item.reason == "ok"
    new = Memory.objects.get(pk=pending.memory.pk)
    assert (new.status, new.version, new.supersedes_id) == (Status.ACTIVE, 2, head.id)
    assert Memory.objects.get(pk=head.pk).status == Status.SUPERSEDED
    assert MemoryEvent.objects.filter(memory_id=new.id, action="approved").exists()


def test_a_write_whose_validity_ended_while_it_waited_cannot_be_approved(agent_principal, reviewer):
    """Approved, it would supersede the key's live head and be expired by the next sweep,
    leaving the key without a usable value."""
    head = memory_write(principal=agent_principal, data=data("User likes walking.")).memory
    pending = memory_write(principal=agent_principal, data=data("User has asthma; avoid runs."))
    assert pending.decision == "pending_approval"
    hour = timedelta(hours=1)
    Memory.objects.filter(pk=pending.memory.pk).update(
        valid_from=timezone.now() - 2 * hour, valid_until=timezone.now() - hour
    )
    with pytest.raises(Conflict) as refused:
        review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")
    assert refused.value.code == "review_expired"
    assert Memory.objects.get(pk=head.pk).status == Status.ACTIVE
    assert Memory.objects.get(pk=pending.memory.pk).status == Status.PENDING_APPROVAL
    assert ReviewItem.objects.get(pk=pending.review_item.id).state == "open"
    # Rejecting it still closes the item.
    review_reject(principal=reviewer, item_id=pending.review_item.id, reason="expired")
    assert Memory.objects.get(pk=pending.memory.pk).status == Status.REJECTED


def test_the_retention_sweep_expires_a_write_that_waited_past_its_validity(
    agent_principal, reviewer
):
    """It left the reviewer's queue only when a reviewer rejected it."""
    from memory_core.deletion.retention import retention_apply

    head = memory_write(principal=agent_principal, data=data("User likes walking.")).memory
    pending = memory_write(principal=agent_principal, data=data("User has asthma; avoid runs."))
    hour = timedelta(hours=1)
    Memory.objects.filter(pk=pending.memory.pk).update(
        valid_from=timezone.now() - 2 * hour, valid_until=timezone.now() - hour
    )
    assert retention_apply()["expired"] == 1
    assert Memory.objects.get(pk=pending.memory.pk).status == Status.EXPIRED
    item = ReviewItem.objects.get(pk=pending.review_item.id)
    assert (item.state, item.resolution) == ("resolved", "valid_until_passed")
    assert MemoryEvent.objects.filter(memory_id=pending.memory.pk, action="expired").exists()
    assert Memory.objects.get(pk=head.pk).status == Status.ACTIVE
    with pytest.raises(Conflict):  # no longer pending
        review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")


def test_approval_links_a_pending_write_only_into_its_own_environments_chain(
    agent_principal, reviewer
):
    staging = memory_write(
        principal=agent_principal, data=data("User walks on staging days.", environment="staging")
    ).memory
    pending = memory_write(
        principal=agent_principal,
        data=data("User has asthma; avoid runs in production.", environment="production"),
    )
    assert pending.decision == "pending_approval"
    review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")
    new = Memory.objects.get(pk=pending.memory.pk)
    assert (new.status, new.version, new.supersedes_id) == (Status.ACTIVE, 1, None)
    assert Memory.objects.get(pk=staging.pk).status == Status.ACTIVE


def test_rejection_keeps_it_unusable_and_other_tenants_cannot_review(
    agent_principal, reviewer, other_tenant
):
    pending = memory_write(principal=agent_principal, data=data("User's SSN is 123-45-6789."))
    outsider = ReviewerPrincipal(tenant_id=other_tenant.id, user_id=reviewer.user_id)
    with pytest.raises(NotFound):
        review_approve(principal=outsider, item_id=pending.review_item.id, reason="x")
    review_reject(principal=reviewer, item_id=pending.review_item.id, reason="no SSNs")
    assert Memory.objects.get(pk=pending.memory.pk).status == Status.REJECTED
    assert ReviewItem.objects.get(pk=pending.review_item.id).state == "rejected"
    assert not Memory.objects.active().filter(pk=pending.memory.pk).exists()


def test_portal_correction_is_explicit_user_and_withdrawal_revokes(agent_principal, tenant):
    approve_workflow_consent(tenant, "user_preference")
    inferred = memory_write(
        principal=agent_principal,
        data=data(
            "User seems to like short answers.",
            key="style",
            source={"type": "model_inference", "conversation_id": "c", "message_id": "m"},
        ),
    ).memory
    owner = SubjectPrincipal(tenant_id=tenant.id, subject_id=inferred.subject_id, user_id=1)
    result = memory_correct(
        principal=owner,
        memory_id=inferred.id,
        data={
            "content": "I prefer short answers.",
            "reason": "it was a guess",
            "authority": "model_inference",
        },
    )
    assert result.decision == "accepted"
    assert result.memory.authority == "explicit_user" and result.memory.supersedes_id == inferred.id
    event = MemoryEvent.objects.get(memory_id=result.memory.id, action="admitted")
    assert event.details["reason"] == "it was a guess"
    other = memory_write(principal=owner, data=data("About someone else.") | {"subject": "user-6"})
    assert other.decision == "rejected" and other.rule_codes == ["tenant.subject_mismatch"]
    # The correction carries the person's own consent: there is no workflow's to withdraw.
    assert result.memory.consent == "explicit"
    with pytest.raises(Conflict) as refused:
        consent_withdraw(principal=owner, memory_id=result.memory.id)
    assert refused.value.code == "not_workflow_consent"
    still = memory_write(
        principal=agent_principal,
        data=data(
            "User seems to like dark mode.",
            key="theme",
            source={"type": "model_inference", "conversation_id": "c", "message_id": "m2"},
        ),
    ).memory
    assert still.consent == "workflow"
    withdrawn = consent_withdraw(principal=owner, memory_id=still.id)
    assert withdrawn.status == Status.REVOKED
    assert MemoryEvent.objects.filter(memory_id=withdrawn.id, action="consent_withdrawn").exists()


@pytest.mark.parametrize(
    ("consent", "status", "code"),
    [
        ("explicit", "active", "not_workflow_consent"),
        ("workflow", "pending_approval", "not_active"),
        ("explicit", "pending_approval", "not_active"),
    ],
)
def test_consent_is_withdrawn_only_from_a_memory_in_use_under_a_workflows_consent(
    tenant, consent, status, code
):
    """Only the portal's view checked this: the service revoked a memory kept with the
    person's own consent, or a write waiting for a reviewer, as a "consent withdrawal"."""
    memory = MemoryFactory(subject__tenant=tenant, consent=consent, status=status)
    events = MemoryEvent.objects.filter(memory_id=memory.id).count()
    owner = SubjectPrincipal(tenant_id=tenant.id, subject_id=memory.subject_id, user_id=1)
    with pytest.raises(Conflict) as refused:
        consent_withdraw(principal=owner, memory_id=memory.id)
    assert refused.value.code == code
    assert "no consent to withdraw" in str(refused.value) or "no workflow consent" in str(
        refused.value
    )
    memory.refresh_from_db()
    assert memory.status == status
    assert MemoryEvent.objects.filter(memory_id=memory.id).count() == events


def test_a_write_is_measured_against_the_strongest_parallel_chain(agent_principal, tenant):
    approve_workflow_consent(tenant, "user_preference")
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    explicit = memory_write(principal=agent_principal, data=data("User likes tea.", key="drink"))
    conflict = memory_write(
        principal=agent_principal,
        data=data("User seems to like coffee.", key="drink", source=inferred),
    )
    assert "supersession.conflict_lower_authority" in conflict.rule_codes
    # The next inferred write meets the explicit head again: another conflict, never a winner.
    again = memory_write(
        principal=agent_principal,
        data=data("User seems to like cocoa.", key="drink", source=inferred),
    )
    assert "supersession.conflict_lower_authority" in again.rule_codes
    item = ReviewItem.objects.get(kind="conflict", memory_key="drink", state="open")
    assert {str(i) for i in item.candidate_ids} == {
        str(explicit.memory.id),
        str(conflict.memory.id),
        str(again.memory.id),
    }
    assert Memory.objects.get(pk=explicit.memory.pk).status == Status.ACTIVE
    # An explicit correction supersedes the explicit head, not the inferred chain.
    fixed = memory_write(principal=agent_principal, data=data("User likes green tea.", key="drink"))
    assert fixed.memory.supersedes_id == explicit.memory.id


def test_a_batch_joins_its_conflicts_in_key_order_as_retrievals_lock_them(
    agent_principal, tenant, monkeypatch
):
    """A retrieval locks a subject's conflict items in (memory_key, place) order: a batch that
    joined them in its own order could hold one a retrieval waits for, and wait for the other."""
    from memory_core.services import writes
    from memory_core.services.writes import memory_write_batch

    approve_workflow_consent(tenant, "user_preference")
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    for key in ("b.drink", "a.food"):
        memory_write(principal=agent_principal, data=data("User said so.", key=key))
    joined = []
    real_open = writes.conflict_open

    def recording(**kwargs):
        joined.append(kwargs["memory_key"])
        return real_open(**kwargs)

    monkeypatch.setattr(writes, "conflict_open", recording)
    items = [
        data(f"User seems to like {thing}.", key=key, source=inferred)
        for key, thing in (("b.drink", "coffee"), ("a.food", "pasta"))
    ]
    results = memory_write_batch(principal=agent_principal, items=items)
    assert all("supersession.conflict_lower_authority" in r.rule_codes for r in results)
    assert joined == ["a.food", "b.drink"]
