"""A memory's page names the conflicts it stands in that are not settled ("Not settled").

A conflict open for a reviewer, or resolved "Ask the user" (nothing changes: retrieval keeps
to its rules until a new memory settles it, services/conflicts.py), is shown on the page of
each candidate in use: the other candidates the person may see, linked; which one agents are
given meanwhile, by retrieval's rules (``selectors.portal.given_now``); and how the person
settles it (``memory_unsettled``).
"""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory_core.models import Memory, ReviewItem
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def conflict(*memories, **fields) -> ReviewItem:
    first = memories[0]
    return ReviewItem.objects.create(
        tenant=first.tenant,
        subject=first.subject,
        kind="conflict",
        memory_key=first.memory_key,
        candidate_ids=sorted((m.pk for m in memories), key=str),
        **fields,
    )


def asked(*memories) -> ReviewItem:
    return conflict(*memories, state="resolved", resolution="ask_user", resolved_at=timezone.now())


def not_settled(client, memory) -> str:
    """The "Not settled" section of ``memory``'s page, or "" without one."""
    page = client.get(reverse("portal:memory", args=[memory.pk])).content.decode()
    if 'id="unsettled-title"' not in page:
        return ""
    return page.split('id="unsettled-title"', 1)[1].split("</section>", 1)[0]


def test_a_person_asked_which_memory_is_right_is_shown_the_other_one(
    alice_client, alice_memory, reviewer
):
    """Stop 64's audit of the portal: a person's correction of an administrator's memory is
    kept beside it in a conflict, which a reviewer resolved "Ask the user". Both memories'
    events then read "a reviewer is asking you which one is right", yet neither page named or
    linked the other memory, said which one agents are given meanwhile, or how to answer:
    the question the page said was put to the person was nowhere on it."""
    Memory.objects.filter(pk=alice_memory.pk).update(authority="explicit_admin")
    alice_client.post(
        reverse("portal:memory-correct", args=[alice_memory.pk]),
        {"content": "Alice prefers four spaces.", "reason": ""},
    )
    mine = Memory.objects.get(content="Alice prefers four spaces.")
    item = ReviewItem.objects.get(kind="conflict", candidate_ids__contains=[mine.pk])
    reviewer_client = Client()
    reviewer_client.force_login(reviewer)
    reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "ask_user",
            "reason": "Ask Alice which one holds",
            "candidate_ids": ",".join(str(pk) for pk in item.candidate_ids),
        },
    )
    item.refresh_from_db()
    assert item.resolution == "ask_user"

    page = alice_client.get(reverse("portal:memory", args=[mine.pk])).content.decode()
    assert "a reviewer is asking you which one is right" in page
    # "Which one": the page must show the other candidate the person is asked about.
    assert reverse("portal:memory", args=[alice_memory.pk]) in page
    section = not_settled(alice_client, mine)
    assert "A reviewer is asking you which one is right" in section
    # Retrieval gives the administrator's (higher authority), and a correction of it stands
    # beside it: deleting the wrong one settles it.
    given = section.split("Meanwhile", 1)[1].split("</p>", 1)[0]
    assert "agents are given" in given and "Alice prefers tabs over spaces." in given
    assert "not over what an administrator set" in section
    assert "delete the one that is wrong" in section
    theirs = not_settled(alice_client, alice_memory)
    assert reverse("portal:memory", args=[mine.pk]) in theirs
    assert "agents are given this memory" in theirs


def test_an_open_conflict_no_rule_decides_says_agents_ask_which_holds(alice_client, alice_subject):
    """Two inferences on a key that matters: no rule decides between them, so agents are
    asked which one holds and given neither, as the page now says."""
    one, other = (
        MemoryFactory(
            subject=alice_subject,
            memory_key="deploy.region",
            content=content,
            authority="model_inference",
            source_type="model_inference",
            confidence=0.6,
        )  # fmt: skip
        for content in ("Alice deploys to eu-west-1.", "Alice deploys to us-east-1.")
    )
    conflict(one, other)

    section = not_settled(alice_client, one)

    assert "This memory contradicts another one" in section
    assert reverse("portal:memory", args=[other.pk]) in section
    assert "agents are given none of them: they ask which one holds" in section
    assert "not over what an administrator set" not in section


def test_a_keyless_rival_is_linked_and_only_what_the_person_may_see(
    alice_client, alice_subject, bob_subject
):
    """Stop 64's audit of the portal: of memories without a key the person could not find
    the rival they were asked about. It is linked now; a row the person may not see (another
    subject's) is never named."""
    inferred = MemoryFactory(
        subject=alice_subject, incident=True, content="Alice broke the build on Monday.",
        authority="model_inference", source_type="model_inference", confidence=0.6,
    )  # fmt: skip
    stated = MemoryFactory(
        subject=alice_subject, incident=True, content="The build broke before Alice's push."
    )
    bobs = MemoryFactory(subject=bob_subject, incident=True, content="Bob broke the build.")
    item = asked(inferred, stated)
    item.candidate_ids = [*item.candidate_ids, bobs.pk]
    item.save(update_fields=["candidate_ids"])

    section = not_settled(alice_client, inferred)

    assert reverse("portal:memory", args=[stated.pk]) in section
    assert "Bob broke the build." not in section
    assert reverse("portal:memory", args=[bobs.pk]) not in section
    # Of memories without a key, the person's statement outranks the model's inference.
    given = section.split("Meanwhile", 1)[1].split("</p>", 1)[0]
    assert "The build broke before Alice&#x27;s push." in given


def test_a_settled_or_taken_over_conflict_is_not_shown(alice_client, alice_subject):
    """Only a question still asked: not one a later conflict on the rows has taken over
    (that one is shown), not one settled, and not on a memory out of use."""
    one, other, third = (
        MemoryFactory(subject=alice_subject, memory_key="style.indent", content=content)
        for content in ("Tabs.", "Two spaces.", "Four spaces.")
    )
    asked(one, other)
    later = conflict(one, other, third)
    conflict(one, third, state="resolved", resolution="keep_both_scoped")

    section = not_settled(alice_client, one)

    assert section.count("This memory contradicts others") == 1
    assert "A reviewer is asking you" not in section
    assert reverse("portal:memory", args=[third.pk]) in section
    ReviewItem.objects.filter(pk=later.pk).update(state="resolved", resolution="choose_winner")
    assert not_settled(alice_client, one) == ""
    asked(one, other)
    Memory.objects.filter(pk=one.pk).update(status="revoked")
    assert not_settled(alice_client, one) == ""
