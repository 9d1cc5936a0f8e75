"""A sensitive correction sent again while the first waits for a reviewer stores nothing new:
``memory_correct`` answers with the one waiting (``WriteResult.already_waiting``)."""

import pytest

from memory_core.models import AdmissionDecision, Memory, ReviewItem, Status
from memory_core.principals import SubjectPrincipal
from memory_core.services.writes import memory_confirm, memory_correct
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(tenant):
    subject = SubjectFactory(tenant=tenant, external_id="carol")
    return SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)


def sensitive(owner, **fields):
    return MemoryFactory(
        subject_id=owner.subject_id, tenant_id=owner.tenant_id, memory_key="health.diet",
        content="Carol eats no gluten.", sensitivity="sensitive", **fields,
    )  # fmt: skip


def test_the_same_sensitive_correction_twice_waits_once(owner):
    target = sensitive(owner)
    first = memory_correct(
        principal=owner, memory_id=target.pk, data={"content": "Carol eats no  gluten or dairy."}
    )
    assert first.decision == "pending_approval" and not first.already_waiting
    # The same text (its spacing aside: content_hash normalizes it), sent again.
    second = memory_correct(
        principal=owner, memory_id=target.pk, data={"content": "Carol eats no gluten or dairy."}
    )
    assert second.decision == "pending_approval" and second.already_waiting
    assert second.memory.pk == first.memory.pk
    assert second.review_item.pk == first.review_item.pk
    assert second.admission_decision.pk == first.admission_decision.pk
    assert "already waits for a reviewer" in second.message
    assert Memory.objects.filter(status=Status.PENDING_APPROVAL).count() == 1
    assert ReviewItem.objects.filter(kind="sensitive_write").count() == 1
    assert AdmissionDecision.objects.count() == 1
    # Other content is another correction: it waits in the first's place, which it withdraws
    # (stop 64's audit of the portal: approved after it, the first replaced it).
    other = memory_correct(
        principal=owner, memory_id=target.pk, data={"content": "Carol eats no dairy."}
    )
    assert other.decision == "pending_approval" and not other.already_waiting
    assert other.withdrawn == [first.memory]
    assert ReviewItem.objects.get(kind="sensitive_write", state="open") == other.review_item


def test_confirming_a_sensitive_inference_twice_waits_once(owner):
    target = sensitive(owner, authority="model_inference", source_type="model_inference")
    first = memory_confirm(principal=owner, memory_id=target.pk)
    second = memory_confirm(principal=owner, memory_id=target.pk)
    assert first.decision == second.decision == "pending_approval"
    assert second.already_waiting and second.memory.pk == first.memory.pk
    assert ReviewItem.objects.filter(kind="sensitive_write").count() == 1


def test_a_waiting_correction_decided_since_is_not_answered_again(owner):
    target = sensitive(owner)
    data = {"content": "Carol eats no gluten or dairy."}
    first = memory_correct(principal=owner, memory_id=target.pk, data=data)
    ReviewItem.objects.filter(pk=first.review_item.pk).update(state="resolved")
    Memory.objects.filter(pk=first.memory.pk).update(status=Status.REJECTED)
    again = memory_correct(principal=owner, memory_id=target.pk, data=data)
    assert not again.already_waiting and again.memory.pk != first.memory.pk


def test_the_same_correction_asked_more_sensitive_is_another_request(tenant):
    """Sent again asking to be kept restricted, a correction waiting as sensitive was answered
    'already waiting', and the higher sensitivity asked for was dropped."""
    from memory_core.principals import SystemPrincipal

    subject = SubjectFactory(tenant=tenant, external_id="dave")
    target = MemoryFactory(
        subject=subject, memory_key="health.diet", content="Dave eats no gluten.",
        sensitivity="sensitive",
    )  # fmt: skip
    system = SystemPrincipal(tenant_id=tenant.id)
    data = {"content": "Dave eats no gluten or dairy.", "source": {
        "type": "user_input", "conversation_id": "c", "message_id": "m"}}  # fmt: skip
    first = memory_correct(principal=system, memory_id=target.pk, data=data)
    assert first.decision == "pending_approval" and first.memory.sensitivity == "sensitive"
    again = memory_correct(principal=system, memory_id=target.pk, data=data)
    assert again.already_waiting and again.memory.pk == first.memory.pk

    restricted = memory_correct(
        principal=system, memory_id=target.pk, data={**data, "sensitivity": "restricted"}
    )

    assert not restricted.already_waiting
    assert restricted.memory.pk != first.memory.pk
    assert restricted.memory.sensitivity == "restricted"


def test_the_same_correction_asked_to_end_at_another_time_is_another_request(owner):
    """Sent again with another ``valid_until``, a waiting correction was answered 'already
    waiting', and the end asked the second time was dropped."""
    target = sensitive(owner)
    data = {"content": "Carol eats no gluten or dairy.", "valid_until": "2031-01-01T00:00:00Z"}
    first = memory_correct(principal=owner, memory_id=target.pk, data=data)
    again = memory_correct(principal=owner, memory_id=target.pk, data=data)
    assert again.already_waiting and again.memory.pk == first.memory.pk

    later = memory_correct(
        principal=owner, memory_id=target.pk, data={**data, "valid_until": "2032-06-01T00:00:00Z"}
    )

    assert not later.already_waiting and later.memory.pk != first.memory.pk
    assert later.memory.valid_until.year == 2032
    assert later.withdrawn == [first.memory]  # another request of the person's, in its place


@pytest.mark.parametrize("days", [None, 200])
def test_an_end_set_by_admission_does_not_make_a_retry_another_request(owner, days):
    """An episode with no end of its own, or one past the policy's 90 days: admission stores
    the correction's end defaulted or capped, and the same correction sent again was told
    apart by that end (two pending writes, two review items; a review's finding)."""
    from datetime import timedelta

    from django.utils import timezone

    target = sensitive(
        owner, memory_class="episodic", memory_type="previous_decision",
        valid_until=None if days is None else timezone.now() + timedelta(days=days),
    )  # fmt: skip
    data = {"content": "Carol skipped the offsite for a cardiology appointment."}
    first = memory_correct(principal=owner, memory_id=target.pk, data=data)
    again = memory_correct(principal=owner, memory_id=target.pk, data=data)
    assert again.already_waiting and again.memory.pk == first.memory.pk
    # Asked for an end past the period, twice: capped the first time, the same request after.
    far = {**data, "content": "Carol skipped it for a heart check.", "valid_until": "2099-01-01"}
    capped = memory_correct(principal=owner, memory_id=target.pk, data=far)
    assert "ttl.capped" in capped.rule_codes and not capped.already_waiting
    assert memory_correct(principal=owner, memory_id=target.pk, data=far).already_waiting
    assert ReviewItem.objects.filter(kind="sensitive_write", state="open").count() == 1


def test_the_same_correction_with_a_large_whole_number_in_its_value_is_not_stored_twice(owner):
    """Stop 59's audit of writes found the same sensitive correction with ``"value":
    {"dose_mg": 1e23}`` stored twice, two pending writes and two review items: the waiting
    one's value, read back from jsonb, is the whole number its JSON wrote, which the parsed
    float (99999999999999991611392) is not. The value is compared as jsonb stores it, so
    the second should be answered with the one waiting."""
    target = sensitive(owner)
    data = {"content": "Carol takes a large dose.", "value": {"dose_mg": 1e23}}
    first = memory_correct(principal=owner, memory_id=target.pk, data=data)
    assert first.decision == "pending_approval" and not first.already_waiting

    again = memory_correct(principal=owner, memory_id=target.pk, data=data)

    assert again.already_waiting and again.memory.pk == first.memory.pk
    assert ReviewItem.objects.filter(kind="sensitive_write", state="open").count() == 1
    # Another number is another correction.
    other = memory_correct(
        principal=owner, memory_id=target.pk, data={**data, "value": {"dose_mg": 1e22}}
    )
    assert not other.already_waiting and other.memory.pk != first.memory.pk
