"""Choosing a conflict's winner and the loser's folded copies (``conflicts._folded_copies``),
and a candidate not yet in effect: stop 56's second review of its own fixes."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.models import Memory, MemoryEvent, ReviewItem
from memory_core.services.conflicts import conflict_resolve
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

EU = "Deploy atlas to eu-west-1."
US = "Deploy atlas to us-east-1."


def _decision(subject, content, *, agent=None, memory_key="deploy.region", **fields):
    return MemoryFactory(
        subject=subject,
        agent=agent,
        memory_class="episodic",
        memory_type="previous_decision",
        memory_key=memory_key,
        scope_kind="project",
        scope_ref="atlas",
        content=content,
        **{
            "source_type": "model_inference",
            "authority": "model_inference",
            "confidence": 0.7,
            **fields,
        },
    )


def _conflict(tenant, subject, *candidates):
    return ReviewItem.objects.create(
        tenant=tenant,
        subject=subject,
        kind=ReviewItem.Kind.CONFLICT,
        memory_key="deploy.region",
        scope_kind="project",
        scope_ref="atlas",
        candidate_ids=[c.pk for c in candidates],
    )


def test_a_revoked_copys_event_names_no_memory_the_agent_may_not_see(tenant, reviewer):
    """A copy of agent A's private loser, shared, is revoked with it, its event naming the
    loser (``copy_of``). Agent B reads the copy, not A's loser, whose detail is a 404 to it:
    B's answer named A's private memory, as ``copy_of`` was no key the answers resolve. The
    winner is shared: one private to A is refused, as it reaches fewer agents than the copy
    it would revoke (stop 60's review)."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    a, b = AgentFactory(tenant=tenant), AgentFactory(tenant=tenant)
    loser = _decision(subject, EU, agent=a)
    winner = _decision(subject, US, agent=None)
    shared_copy = _decision(subject, EU, agent=None, confidence=0.6)
    item = _conflict(tenant, subject, loser, winner)

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=winner.id, reason="The team confirmed us-east-1.")  # fmt: skip
    assert Memory.objects.get(pk=shared_copy.pk).status == "revoked"

    b_client = client_for(b)
    assert b_client.get(f"/api/v1/memories/{loser.id}").status_code == 404
    answer = b_client.get(f"/api/v1/memories/{shared_copy.id}")
    assert answer.status_code == 200, answer.json()
    assert str(loser.id) not in answer.content.decode()


def test_choosing_a_winner_leaves_another_agents_private_memory_no_retrieval_folds(
    tenant, reviewer
):
    """Agent B's private memory with the words of agent A's private loser is read with it by
    no retrieval, so dedup never folds it: choosing A's winner revoked it, unseen by the
    reviewer. It stays."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    a, b = AgentFactory(tenant=tenant), AgentFactory(tenant=tenant)
    loser = _decision(subject, EU, agent=a)
    winner = _decision(subject, US, agent=a)
    b_own = _decision(subject, EU, agent=b)
    item = _conflict(tenant, subject, loser, winner)

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=winner.id, reason="The team confirmed us-east-1.")  # fmt: skip

    assert Memory.objects.get(pk=b_own.pk).status == "active"
    assert not MemoryEvent.objects.filter(memory_id=b_own.id, action="revoked").exists()


def test_choosing_a_winner_leaves_a_candidate_the_page_says_is_not_in_use_yet(tenant, reviewer):
    """The conflicts page counts a candidate whose ``valid_from`` is still to come as out of
    use and offers it as no winner, and says choosing one revokes the others still in use:
    ``conflict_resolve`` revoked it for good all the same. It stays."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    later = _decision(
        subject, EU, authority="explicit_user", source_type="user_input",
        valid_from=timezone.now() + timedelta(days=7),
    )  # fmt: skip
    now_in_use = _decision(subject, US)
    item = _conflict(tenant, subject, later, now_in_use)

    from memory_core.selectors.portal import conflict_queue

    [shown] = conflict_queue(principal=reviewer).items
    assert shown.active_count == 1  # the page: "Only one candidate is still in use"

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=now_in_use.id, reason="In effect now.")  # fmt: skip

    assert Memory.objects.get(pk=later.pk).status == "active"


def test_choosing_a_winner_leaves_the_copy_of_a_candidate_not_yet_in_effect(tenant, reviewer):
    """A keyless copy, in effect now, of a candidate not yet in effect (which stays) is folded
    into nothing revoked: it was revoked for good, its ``copy_of`` naming a candidate that
    did not lose (stop 56's third review). Only a revoked loser's copies go."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    later = _decision(
        subject,
        EU,
        authority="explicit_user",
        source_type="user_input",
        valid_from=timezone.now() + timedelta(days=7),
    )
    now_in_use = _decision(subject, US)
    keyless_copy = _decision(subject, EU, memory_key="")
    item = ReviewItem.objects.create(
        tenant=tenant,
        subject=subject,
        kind=ReviewItem.Kind.CONFLICT,
        memory_key="deploy.region",
        scope_kind="project",
        scope_ref="atlas",
        candidate_ids=[later.pk, now_in_use.pk],
    )

    conflict_resolve(
        principal=reviewer,
        item_id=item.id,
        outcome="choose_winner",
        winner_id=now_in_use.id,
        reason="In effect now.",
    )

    assert Memory.objects.get(pk=later.pk).status == "active"  # the candidate stays ...
    revoked = MemoryEvent.objects.filter(memory_id=keyless_copy.id, action="revoked")
    assert list(revoked.values_list("details", flat=True)) == []  # ... and so does its copy
    assert Memory.objects.get(pk=keyless_copy.pk).status == "active"


def test_choosing_a_keyless_winner_revokes_a_keyed_copy_of_the_loser(tenant, reviewer):
    """Stop 64's review of retrieval: stage 6 folds a keyless loser into a keyed memory with
    its words (``dedup.keeper_order``: a keyed row first), so the loser's words are given
    under the keyed copy's id. ``_folded_copies`` looked only for copies on the loser's key or
    on none, and choosing the keyless winner revoked the loser alone: the next retrieval gave
    its words again, under the keyed copy, beside the winner. The keyed copy goes with it."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    loser = _decision(subject, EU, memory_key="")
    winner = _decision(subject, US, memory_key="", authority="explicit_user")
    keyed_copy = _decision(subject, EU)
    item = ReviewItem.objects.create(
        tenant=tenant,
        subject=subject,
        kind=ReviewItem.Kind.CONFLICT,
        memory_key="",
        scope_kind="project",
        scope_ref="atlas",
        candidate_ids=[loser.pk, winner.pk],
    )

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=winner.id, reason="The team confirmed us-east-1.")  # fmt: skip

    assert Memory.objects.get(pk=loser.pk).status == "revoked"
    assert Memory.objects.get(pk=keyed_copy.pk).status == "revoked"
    revoked = MemoryEvent.objects.get(memory_id=keyed_copy.id, action="revoked")
    assert revoked.details["copy_of"] == str(loser.id)
