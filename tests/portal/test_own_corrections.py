"""A person's later correction of a memory withdraws their own earlier one still waiting.

A sensitive correction waits for a reviewer; its approval follows the chain to its newest
version (``approval_head``). Once the person had corrected the memory again, an approval of
the earlier one replaced their newer statement with the one they took back. A correction
(or a confirmation, "This is right") saved or sent to a reviewer now revokes the person's
own writes still waiting whose approval would replace a version of the chain
(``writes._withdraw_own_waiting``, reason ``replaced_by_later_correction``) and closes their
review items: one statement of theirs stands.
"""

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from memory_core.exceptions import Conflict
from memory_core.models import Memory, MemoryEvent, ReviewItem
from memory_core.models.events import REPLACED_BY_LATER_CORRECTION
from memory_core.principals import ReviewerPrincipal
from memory_core.services.reviews import review_approve
from tests.factories import MemoryFactory, pending_write_on

pytestmark = pytest.mark.django_db

RETRACTED = "Alice takes insulin for diabetes and prefers tabs."
LATEST = "Alice prefers tabs."


def correct(client, memory, content: str):
    return client.post(
        reverse("portal:memory-correct", args=[memory.pk]),
        {"content": content, "reason": ""},
        follow=True,
    )


def withdrawn(item: ReviewItem) -> bool:
    item.refresh_from_db()
    item.memory.refresh_from_db()
    return (item.state, item.resolution, item.memory.status) == (
        "resolved",
        REPLACED_BY_LATER_CORRECTION,
        "revoked",
    )


def test_approving_a_persons_older_correction_does_not_replace_their_newer_one(
    alice_client, alice_memory, reviewer
):
    """Stop 64's audit of the portal: the person corrected a memory with a health fact,
    which waited for a reviewer, then corrected it again without it (saved at once as
    version 2). The reviewer's queue offered the first as "the next version of" version 2,
    and approved, it superseded the person's latest statement: agents were given the health
    fact the person had taken back."""
    correct(alice_client, alice_memory, RETRACTED)
    first = Memory.objects.get(content=RETRACTED)
    assert first.status == "pending_approval"
    correct(alice_client, alice_memory, LATEST)
    latest = Memory.objects.get(content=LATEST)
    assert latest.status == "active" and latest.supersedes_id == alice_memory.pk

    reviewer_client = Client()
    reviewer_client.force_login(reviewer)
    item = ReviewItem.objects.get(memory=first, kind="sensitive_write")
    queue = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert f'id="item-{item.pk}"' not in queue
    # Approved anyway, as the queue offered it (a tab left open): the next version of the
    # person's latest statement.
    reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]),
        {"reason": "looks fine", "seen_head_id": str(latest.pk)},
    )
    item.refresh_from_db()
    assert item.resolution == REPLACED_BY_LATER_CORRECTION

    in_use = Memory.objects.get(
        subject=alice_memory.subject, memory_key=alice_memory.memory_key, status="active"
    )
    # The person's latest statement stands: their retracted correction is not given to agents.
    assert in_use.content == LATEST


def test_a_withdrawn_correction_is_closed_wherever_it_is_shown(
    alice_client, alice_memory, reviewer
):
    """Stop 64's audit of the portal: the retracted correction stayed in the reviewers'
    queue, open in the reviewer API, and on the person's memory page as "A newer version of
    this memory ... waiting for a reviewer". Withdrawn, it is none of those: the reviewer
    API shows its item resolved with the reason, an approval is refused, and the person's
    pages list it as no longer in use, saying why."""
    correct(alice_client, alice_memory, RETRACTED)
    item = ReviewItem.objects.get(memory__content=RETRACTED, kind="sensitive_write")
    saved = correct(alice_client, alice_memory, LATEST).content.decode()
    latest = Memory.objects.get(content=LATEST)

    assert withdrawn(item)
    assert "Your earlier correction that was waiting for a reviewer is withdrawn" in saved
    reviewers = Client()
    reviewers.force_login(reviewer)
    assert (
        f'id="item-{item.pk}"' not in reviewers.get(reverse("portal:review:queue")).content.decode()
    )
    answer = reviewers.get(f"/api/v1/review/items/{item.pk}").json()
    assert (answer["state"], answer["resolution"]) == ("resolved", REPLACED_BY_LATER_CORRECTION)
    principal = ReviewerPrincipal(tenant_id=alice_memory.tenant_id, user_id=reviewer.pk)
    with pytest.raises(Conflict) as refused:
        review_approve(principal=principal, item_id=item.pk, reason="looks fine")
    assert refused.value.code == "review_closed"

    page = alice_client.get(reverse("portal:memory", args=[latest.pk])).content.decode()
    assert "Waiting for a reviewer" not in page
    listed = alice_client.get(reverse("portal:home")).content.decode()
    assert RETRACTED in listed.split("Not in use", 1)[1]
    own = alice_client.get(reverse("portal:memory", args=[item.memory_id])).content.decode()
    assert "replaced by a later correction of yours" in own
    event = MemoryEvent.objects.get(memory_id=item.memory_id, action="revoked")
    assert (event.actor_type, event.reason_code) == ("user", REPLACED_BY_LATER_CORRECTION)


def test_a_correction_sent_to_a_reviewer_withdraws_the_one_waiting_before_it(
    alice_client, alice_memory
):
    """Stop 64's audit of the portal: two sensitive corrections of one memory both waited,
    and a reviewer could approve the older after the newer, the older standing last."""
    correct(alice_client, alice_memory, RETRACTED)
    older = ReviewItem.objects.get(memory__content=RETRACTED, kind="sensitive_write")
    correct(alice_client, alice_memory, "Alice takes insulin for diabetes.")

    newer = Memory.objects.get(content="Alice takes insulin for diabetes.")
    assert newer.status == "pending_approval"
    assert withdrawn(older)
    assert ReviewItem.objects.get(memory=newer).state == "open"


def test_this_is_right_withdraws_a_correction_waiting_before_it(alice_client, alice_subject):
    """Stop 64's audit of the portal: "This is right" pressed after a sensitive correction
    of the same memory, which waited, saved the confirmation as version 2, and an approval
    of the waiting correction then replaced it."""
    inferred = MemoryFactory(
        subject=alice_subject, memory_key="style.editor", content="Alice uses vim.",
        authority="model_inference", source_type="model_inference", confidence=0.6,
    )  # fmt: skip
    correct(alice_client, inferred, "Alice uses vim for her therapy notes on depression.")
    item = ReviewItem.objects.get(kind="sensitive_write", candidate_ids__contains=[inferred.pk])

    alice_client.post(reverse("portal:memory-confirm", args=[inferred.pk]))

    confirmed = Memory.objects.get(supersedes=inferred)
    assert (confirmed.status, confirmed.authority) == ("active", "explicit_user")
    assert withdrawn(item)


def test_a_keyless_correction_withdraws_the_one_waiting_before_it(alice_client, alice_subject):
    """Stop 64's audit of the portal: the same, of a memory without a key (an incident),
    whose approval lands on the chain its item cites."""
    incident = MemoryFactory(
        subject=alice_subject, incident=True, content="Alice missed the deploy on Monday."
    )
    correct(alice_client, incident, "Alice missed the deploy on Monday: her diabetes flared up.")
    item = ReviewItem.objects.get(kind="sensitive_write", candidate_ids__contains=[incident.pk])

    correct(alice_client, incident, "Alice missed the deploy on Tuesday.")

    assert Memory.objects.get(supersedes=incident).content == "Alice missed the deploy on Tuesday."
    assert withdrawn(item)


def test_an_agents_write_waiting_on_the_chain_is_not_the_persons_to_withdraw(
    alice_client, alice_memory
):
    """An agent's sensitive write waiting on the memory stays for a reviewer: only the
    person's own earlier corrections are withdrawn by theirs."""
    item = pending_write_on(alice_memory, "Alice's doctor says tabs ease her RSI.")
    MemoryEvent.objects.create(
        tenant=alice_memory.tenant, memory_id=item.memory_id, action="pending_approval",
        actor_type="agent", actor_id="an-agent", reason_code="sensitivity.review_required",
    )  # fmt: skip

    correct(alice_client, alice_memory, LATEST)

    item.refresh_from_db()
    assert item.state == "open"
    assert Memory.objects.get(pk=item.memory_id).status == "pending_approval"


def test_a_correction_kept_beside_an_administrators_memory_withdraws_the_one_waiting(
    alice_client, alice_memory
):
    """Stop 64's audit of the portal: beside a memory of higher authority one statement of
    the person's stands (stop 56), yet their sensitive correction waiting for a reviewer,
    approved after a later one was kept beside it, stood beside it too, or replaced the
    later one. Withdrawn, whether it waits on the administrator's memory or on their own
    correction kept beside it."""
    Memory.objects.filter(pk=alice_memory.pk).update(authority="explicit_admin")
    correct(alice_client, alice_memory, RETRACTED)
    on_admins = ReviewItem.objects.get(memory__content=RETRACTED, kind="sensitive_write")
    correct(alice_client, alice_memory, "Alice prefers four spaces.")
    beside = Memory.objects.get(content="Alice prefers four spaces.")
    assert beside.status == "active" and beside.supersedes_id is None
    assert withdrawn(on_admins)

    correct(alice_client, alice_memory, "Alice takes insulin for diabetes.")
    on_own = ReviewItem.objects.get(memory__content="Alice takes insulin for diabetes.")
    assert on_own.candidate_ids == [beside.pk]
    correct(alice_client, alice_memory, "Alice prefers two spaces.")

    assert Memory.objects.get(supersedes=beside).content == "Alice prefers two spaces."
    assert withdrawn(on_own)


def test_a_correction_withdraws_the_persons_waiting_write_whose_approval_lands_on_it(
    alice_client, alice_memory, reviewer
):
    """Stop 64's review of the portal fix: a later correction withdrew only the person's
    waiting writes whose review item cites a version of the chain it corrects. One whose head
    was revoked since lands, approved, on the key's memory in use now (``approval_head`` ->
    ``current_head``), as the person's page of that memory says (``memory_pending_replacements``):
    correcting that memory left it waiting, and its approval replaced what the person said
    last with what they had taken back. Withdrawn now by the same rule the page lists them
    by (``selectors.portal.waiting_to_replace``)."""
    # 1. A sensitive correction of the key's memory waits for a reviewer.
    correct(alice_client, alice_memory, RETRACTED)
    item = ReviewItem.objects.get(memory__content=RETRACTED, kind="sensitive_write")
    assert item.candidate_ids == [alice_memory.pk]
    # 2. The person revokes that memory (the correction keeps waiting: docs/portal.md).
    alice_client.post(reverse("portal:memory-revoke", args=[alice_memory.pk]), {"reason": ""})
    alice_memory.refresh_from_db()
    assert alice_memory.status == "revoked"
    # 3. Later an agent writes the key again: a new chain, the key's memory in use.
    inferred = MemoryFactory(
        subject=alice_memory.subject, memory_key=alice_memory.memory_key,
        content="Alice prefers four spaces.", authority="model_inference",
        source_type="model_inference", confidence=0.6,
    )  # fmt: skip
    # The person's page of it names the waiting correction as one that would replace it.
    page = alice_client.get(reverse("portal:memory", args=[inferred.pk])).content.decode()
    assert RETRACTED in page
    # 4. The person corrects it: saved at once, their latest statement on the key.
    correct(alice_client, inferred, "Alice prefers two spaces.")
    latest = Memory.objects.get(content="Alice prefers two spaces.")
    assert latest.status == "active"

    # The earlier correction, whose approval lands on the latest, is withdrawn: an approval
    # is refused, and what the person said last stands, not what they took back.
    assert withdrawn(item)
    principal = ReviewerPrincipal(tenant_id=alice_memory.tenant_id, user_id=reviewer.pk)
    with pytest.raises(Conflict) as refused:
        review_approve(principal=principal, item_id=item.pk, reason="looks fine")
    assert refused.value.code == "review_closed"
    in_use = Memory.objects.get(
        subject=alice_memory.subject, memory_key=alice_memory.memory_key, status="active"
    )
    assert in_use.content == "Alice prefers two spaces."


def test_a_reviewer_deciding_a_withdrawn_correction_is_told_it_was_replaced_not_revoked(
    alice_client, alice_memory, reviewer
):
    """Stop 68's audit of the portal: a reviewer's Approve of a person's correction that
    their later one withdrew while the queue was open said "its person revoked it while it
    waited", as of a person who took the memory back, when what they said last stands (and,
    sensitive, waits in the same queue). It says that a later correction replaced it."""
    correct(alice_client, alice_memory, RETRACTED)
    item = ReviewItem.objects.get(memory__content=RETRACTED, kind="sensitive_write")
    correct(alice_client, alice_memory, LATEST)
    assert withdrawn(item)

    reviewers = Client()
    reviewers.force_login(reviewer)
    response = reviewers.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "looks fine"}, follow=True
    )
    said = " ".join(str(message) for message in get_messages(response.wsgi_request))
    short = str(item.pk)[:8]
    assert f"Nothing was decided on write {short}: its person replaced it" in said, said
    assert "revoked" not in said
