"""A memory's page names the conflicts it stands in that are not settled ("Not settled").

A conflict open for a reviewer, or resolved "Ask the user" (nothing changes: retrieval keeps
to its rules until a new memory settles it, services/conflicts.py), is shown on the page of
each candidate in use: the other candidates the person may see, linked; which one agents are
given meanwhile, by the tenant's rules and retrieval's own steps
(``selectors.portal.given_now``); and how the person settles it (``memory_unsettled``).
"""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory_core.models import Memory, ReviewItem
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import AgentFactory, MemoryFactory

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


def meanwhile(section: str) -> str:
    """The sentence of a "Not settled" section saying what agents are given meanwhile, its
    spacing as a browser shows it."""
    return " ".join(section.split("Meanwhile", 1)[1].split("</p>", 1)[0].split())


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
    given = meanwhile(section)
    assert "is given" in given and "Alice prefers tabs over spaces." in given
    assert "not over what an administrator set" in section
    assert "delete the one that is wrong" in section
    theirs = not_settled(alice_client, alice_memory)
    assert reverse("portal:memory", args=[mine.pk]) in theirs
    assert "an agent asking without other limits is given this memory" in meanwhile(theirs)


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
    assert "is given none of them: it asks which one holds" in section
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
    given = meanwhile(section)
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


ADMINS = "The Atlas outage started when the admin rotated the database password."
ALICES = "The Atlas outage started when Alice's migration locked the orders table."


def store(subject, content, **fields) -> Memory:
    fields.setdefault("authority", "explicit_user")
    fields.setdefault("source_type", "user_input")
    return memory_store_many(
        drafts=[MemoryDraft(subject=subject, memory_type="incident", content=content, **fields)],
        principal=SystemPrincipal(tenant_id=subject.tenant_id),
    )[0]


def given_to_an_agent(subject) -> set:
    """The ids retrieval gives an agent whose grant reads every sensitivity."""
    agent = AgentFactory(tenant=subject.tenant, max_sensitivity="restricted")
    result = retrieve(
        principal=AgentPrincipal.from_agent(agent),
        request=RetrievalRequest(
            query="What caused the Atlas outage?", user_id=subject.external_id
        ),
    )
    return {str(item.id) for item in result.items}


def test_a_memory_a_reviewer_kept_beside_the_administrators_is_said_to_be_given(
    alice_client, alice_subject
):
    """Stop 64's review of the portal fix: a reviewer kept the person's account beside the
    administrator's (``keep_both_scoped``); a model's inference, corrected beside them later,
    opens a conflict holding all three. Retrieval gives the administrator's and the
    person's (``pipeline.keyless_measured`` keeps what a reviewer kept), yet the page, by a
    rule of its own that knew nothing of the kept sets, said agents were given the
    administrator's alone, "not the others"."""
    admins = store(alice_subject, ADMINS, authority="explicit_admin")
    alices = store(alice_subject, ALICES)
    models = store(
        alice_subject, "The Atlas outage started with a network partition.",
        authority="model_inference", source_type="model_inference", confidence=0.9,
    )  # fmt: skip
    conflict(
        admins, alices, state="resolved", resolution="keep_both_scoped",
        resolved_at=timezone.now(),
    )  # fmt: skip
    conflict(admins, alices, models)

    given = given_to_an_agent(alice_subject)
    assert {str(admins.pk), str(alices.pk)} <= given and str(models.pk) not in given

    said = meanwhile(not_settled(alice_client, alices))
    assert "this memory" in said and ADMINS in said, said
    assert "not the other." in said and "not the others" not in said, said


def test_a_memory_no_prompt_may_hold_is_not_said_to_be_given(alice_client, alice_subject):
    """Stop 64's review of the portal fix: the administrator's account is restricted, above
    the policy's prompt limit (``max_prompt_sensitivity``, "sensitive"): no agent is given
    it, and it outranks nothing (``filters.policy_reason``, applied before stage 8), so
    agents are given the person's. The page said they were given the administrator's, "not
    the other"."""
    admins = store(alice_subject, ADMINS, authority="explicit_admin", sensitivity="restricted")
    alices = store(alice_subject, ALICES)
    conflict(admins, alices)

    given = given_to_an_agent(alice_subject)
    assert str(alices.pk) in given and str(admins.pk) not in given

    said = meanwhile(not_settled(alice_client, alices))
    assert "is given this memory, not the other." in said, said
