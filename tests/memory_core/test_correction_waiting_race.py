"""A correction sent again while a reviewer decides the one waiting: ``_same_correction_waiting``
reads the waiting write, then its open review item, neither locked; a rejection committing
between the two reads raised DoesNotExist (a 500; a review's finding)."""

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from memory_core.models import AdmissionDecision, ReviewItem
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import writes
from memory_core.services.reviews import review_reject
from memory_core.services.writes import memory_correct
from tests.factories import MemoryFactory, SubjectFactory
from tests.threads import InThread, in_thread


def _rejected_in_another_transaction(tenant_id, principal, item_id) -> InThread:
    """Reject the item in a transaction of another thread; return that thread, ended."""

    def run():
        with tenant_scope(tenant_id), transaction.atomic():
            review_reject(principal=principal, item_id=item_id, reason="no")

    thread = in_thread(run)
    thread.wait(30)
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_correction_sent_again_while_the_waiting_one_is_rejected_is_another_request(
    monkeypatch, tenant
):
    subject = SubjectFactory(tenant=tenant, external_id="carol")
    owner = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    target = MemoryFactory(
        subject=subject, memory_key="health.diet", content="Carol eats no gluten.",
        sensitivity="sensitive",
    )  # fmt: skip
    data = {"content": "Carol eats no gluten or dairy."}
    with tenant_scope(tenant.id):
        first = memory_correct(principal=owner, memory_id=target.pk, data=data)
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=User.objects.create_user("r").pk)

    class RejectedOnFirstRead:
        """``writes.AdmissionDecision`` whose first read lets the reviewer's rejection of the
        waiting write commit, between the read of the waiting write and of its item."""

        done: InThread | None = None

        def __call__(self, *args, **kwargs):
            return AdmissionDecision(*args, **kwargs)

        @property
        def objects(self):
            if RejectedOnFirstRead.done is None:
                RejectedOnFirstRead.done = _rejected_in_another_transaction(
                    tenant.id, reviewer, first.review_item.id
                )
            return AdmissionDecision.objects

    monkeypatch.setattr(writes, "AdmissionDecision", RejectedOnFirstRead())
    with tenant_scope(tenant.id), transaction.atomic():
        again = memory_correct(principal=owner, memory_id=target.pk, data=data)

    assert RejectedOnFirstRead.done.error is None, RejectedOnFirstRead.done.error
    assert ReviewItem.objects.get(pk=first.review_item.pk).state == "rejected"
    # No longer waiting: a new request, with its own review item.
    assert again.decision == "pending_approval" and not again.already_waiting
    assert again.review_item.pk != first.review_item.pk
