"""Reviewer pages: one tenant's queues only; an item of another tenant is a 404."""

import re
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import (
    AdmissionDecision,
    DeletionOperation,
    Memory,
    MemoryEvent,
    ReviewItem,
    Subject,
)
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.services.api_keys import agent_grant_set
from memory_core.services.reviews import review_reject
from portal.access import BEING_DELETED_FOR_REVIEWER
from tests.factories import (
    AgentFactory,
    MemoryFactory,
    approve_workflow_consent,
    pending_write_on,
    write_body,
)

pytestmark = pytest.mark.django_db


def pending_write(subject, content):
    memory = MemoryFactory(
        subject=subject, content=content, status="pending_approval", sensitivity="sensitive"
    )
    return ReviewItem.objects.create(
        tenant=subject.tenant,
        subject=subject,
        kind="sensitive_write",
        memory=memory,
        memory_key=memory.memory_key,
        rule_codes=["sensitive.health"],
    )


def conflict_candidate(subject, key, content):
    """An inferred decision on ``key``, of the kind a conflict holds."""
    return MemoryFactory(
        subject=subject,
        memory_type="previous_decision",
        memory_class="episodic",
        memory_key=key,
        content=content,
        authority="model_inference",
        source_type="model_inference",
        confidence=0.7,
    )


def conflict(subject, key, *contents):
    memories = [conflict_candidate(subject, key, content) for content in contents]
    return ReviewItem.objects.create(
        tenant=subject.tenant,
        subject=subject,
        kind="conflict",
        memory_key=key,
        candidate_ids=[memory.pk for memory in memories],
    )


@pytest.fixture
def queues(alice_subject, stranger_subject):
    return {
        "own_write": pending_write(alice_subject, "Alice takes insulin daily."),
        "foreign_write": pending_write(stranger_subject, "Stranger has a pacemaker."),
        "own_conflict": conflict(
            alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1."
        ),
        "foreign_conflict": conflict(stranger_subject, "deploy.zone", "Zone A.", "Zone B."),
    }


def test_queue_lists_own_tenant_only(reviewer_client, queues, agent):
    AdmissionDecision.objects.create(
        tenant=agent.tenant,
        agent=agent,
        memory_id=queues["own_write"].memory_id,
        outcome="pending_approval",
    )
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert f"written by agent <strong>{agent.name}</strong>" in body
    assert "Alice takes insulin daily." in body
    assert "sensitive.health" in body
    assert "Stranger has a pacemaker." not in body
    assert 'name="csrfmiddlewaretoken"' in body


def test_the_review_queue_shows_the_structured_value_a_reviewer_approves(
    reviewer_client, alice_subject
):
    """The queue showed a write's content, rule codes, sensitivity, authority and scope, never
    its structured ``value``, which an approval gives agents too (up to 8 KiB of JSON): a
    write whose sensitive data sat there ("diagnosis") was approved blind (stop 56's audit of
    the portal)."""
    item = pending_write(alice_subject, "Alice mentioned a health condition.")
    Memory.objects.filter(pk=item.memory_id).update(value={"diagnosis": "type-1-diabetes"})
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert "Alice mentioned a health condition." in body
    assert "<figcaption>Structured value, approved with the text</figcaption>" in body
    assert "&quot;diagnosis&quot;: &quot;type-1-diabetes&quot;" in body


def test_a_conflicts_candidates_show_their_structured_values(reviewer_client, queues):
    """A conflict's candidates showed their content alone, and choosing a winner keeps its
    value in use (stop 56's audit of the portal)."""
    item = queues["own_conflict"]
    Memory.objects.filter(pk=item.candidate_ids[0]).update(value={"region": "eu-west-1"})
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert body.count('<span class="value-caption">Structured value</span>') == 1
    assert "&quot;region&quot;: &quot;eu-west-1&quot;" in body


def test_a_pending_write_shows_the_memory_it_would_replace(reviewer_client, alice_subject):
    """A person's sensitive correction of a language preference was approved as its next
    version by a reviewer who saw the new text alone."""
    head = MemoryFactory(subject=alice_subject, content="User writes data scripts in Python.")
    item = pending_write(alice_subject, "I take insulin for diabetes.")
    item.candidate_ids = [head.pk]
    item.save(update_fields=["candidate_ids"])
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert "becomes the next version of <q>User writes data scripts in Python.</q>" in body
    assert "version 1)" in body
    head.status = "superseded"
    head.save(update_fields=["status"])
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert "superseded since this was written" in body


def test_a_pending_write_of_lower_authority_is_said_to_stand_in_a_conflict(
    reviewer_client, alice_subject
):
    """Approved, an inferred write beside an explicit head opens a conflict (as a write
    would); the queue said it would become the head's next version."""
    head = MemoryFactory(subject=alice_subject, content="User writes data scripts in Python.")
    item = pending_write(alice_subject, "User seems to have diabetes.")
    item.memory.authority = "model_inference"
    item.memory.source_type = "model_inference"
    item.memory.save(update_fields=["authority", "source_type"])
    item.candidate_ids = [head.pk]
    item.save(update_fields=["candidate_ids"])
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert "stands in a conflict, for a reviewer, beside" in body
    assert "becomes the next version" not in body


def test_a_write_deleted_while_it_waited_leaves_the_queue(reviewer_client, queues):
    """Its deletion's worker closes the item; until then there was a "(no text)" entry
    whose Approve and Reject could only answer that it is deleted."""
    from memory_core.deletion.services import deletion_request
    from memory_core.principals import SubjectPrincipal

    item = queues["own_write"]
    owner = SubjectPrincipal(tenant_id=item.tenant_id, subject_id=item.subject_id, user_id=1)
    deletion_request(principal=owner, memory_id=item.memory_id)  # the worker has not run

    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()

    assert str(item.pk) not in body and "(no text)" not in body
    assert ReviewItem.objects.get(pk=item.pk).state == "open"


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_deciding_a_write_its_person_deleted_meanwhile_says_so_in_a_reviewers_words(
    reviewer_client, queues, decision
):
    """Stop 59's audit of the portal in a browser found that a reviewer's Approve or Reject
    of a write its person deleted while the queue was open answered with the service's "The
    memory is deleted, not pending.", which named no write. It should say, in a reviewer's
    words, that nothing was decided on that write and that its person deleted it."""
    from memory_core.deletion.services import deletion_request
    from memory_core.principals import SubjectPrincipal

    item = queues["own_write"]
    owner = SubjectPrincipal(tenant_id=item.tenant_id, subject_id=item.subject_id, user_id=1)
    deletion_request(principal=owner, memory_id=item.memory_id)  # the worker has not run

    response = reviewer_client.post(
        reverse(f"portal:review:{decision}", args=[item.pk]), {"reason": "ok"}, follow=True
    )

    said = f"Nothing was decided on write {str(item.pk)[:8]}: its person deleted it while it"
    assert said in response.content.decode()
    assert b"not pending" not in response.content
    assert ReviewItem.objects.get(pk=item.pk).state == "open"


def test_deciding_a_write_that_stopped_waiting_says_what_ended_its_wait(reviewer_client, queues):
    """Decided by another reviewer, revoked, or expired while the queue was open: said in a
    reviewer's words, as a deletion is; a second click on the same decision, as made once."""
    from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
    from memory_core.services.memories import memories_mark_expired
    from memory_core.services.reviews import review_approve
    from memory_core.services.writes import memory_revoke
    from tests.portal.conftest import make_login

    def decided(item) -> str:
        url = reverse("portal:review:reject", args=[item.pk])
        body = reviewer_client.post(url, {"reason": "ok"}, follow=True).content.decode()
        return body.split('class="messages"', 1)[1].split("</ul>", 1)[0]

    alice_subject = queues["own_write"].subject
    tenant = alice_subject.tenant
    other = make_login("second-reviewer", tenant=tenant, role="reviewer")
    other = ReviewerPrincipal(tenant_id=tenant.pk, user_id=other.pk)
    item = queues["own_write"]
    review_approve(principal=other, item_id=item.pk, reason="ok")
    assert "another reviewer approved it meanwhile" in decided(item)

    item = pending_write(alice_subject, "Alice takes insulin daily.")
    assert f"Write {str(item.pk)[:8]} rejected" in decided(item)
    said = decided(item)  # a second click
    assert f"Nothing more was decided on write {str(item.pk)[:8]}: you rejected it" in said

    item = pending_write(alice_subject, "Alice takes insulin daily.")
    owner = SubjectPrincipal(tenant_id=tenant.pk, subject_id=alice_subject.pk, user_id=1)
    memory_revoke(principal=owner, memory_id=item.memory_id)
    assert "its person revoked it while it waited" in decided(item)

    item = pending_write(alice_subject, "Alice takes insulin daily.")
    rows = [(item.memory_id, item.tenant_id, None)]
    memories_mark_expired(rows, reason_code="task_closed", actor=("agent", "a"), now=timezone.now())
    assert "it expired while it waited (its task was closed)" in decided(item)


def test_a_write_memledger_rejected_after_a_restore_is_not_said_rejected_by_another_reviewer(
    reviewer_client, alice_subject
):
    """Stop 59's audit of the review queue found that a Reject or Approve of a write that
    ``replay_deletions`` had rejected again after a restore (``memory_reject_replayed``:
    memledger itself, ``resolved_by`` None) said "another reviewer rejected it meanwhile",
    of a reviewer who does not exist. It should say that nothing was decided and that
    memledger rejected it again after a restore."""
    from memory_core.principals import SystemPrincipal
    from memory_core.services.reviews import memory_reject_replayed

    item = pending_write(alice_subject, "Alice takes insulin daily.")
    memory_reject_replayed(
        principal=SystemPrincipal(tenant_id=alice_subject.tenant_id, name="replay"),
        memory_id=item.memory_id,
        operation_id="op-1",
    )
    item.refresh_from_db()
    assert (item.state, item.resolved_by_id) == ("rejected", None)

    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "ok"}, follow=True
    )
    body = response.content.decode()
    messages = re.sub(r"\s+", " ", body.split('class="messages"', 1)[1].split("</ul>", 1)[0])
    said = f"Nothing was decided on write {str(item.pk)[:8]}: memledger rejected it again"
    assert said in messages
    assert "another reviewer" not in messages, messages


def test_conflicts_list_own_tenant_only(reviewer_client, queues):
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert (
        "deploy.region" in body
        and "Deploy to eu-west-1." in body
        and "Deploy to us-east-1." in body
    )
    assert "deploy.zone" not in body and "Zone A." not in body


def test_a_conflict_says_which_environment_each_candidate_holds_in(reviewer_client, queues):
    # Rivals of two environments are not always one fact twice: the reviewer must see it
    # before choosing a winner, which revokes the other everywhere.
    item = queues["own_conflict"]
    Memory.objects.filter(pk=item.candidate_ids[0]).update(environment="staging")
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert "only in <code>staging</code>" in body and "every environment" in body


def test_keeping_both_warns_when_agents_would_be_given_them_together(reviewer_client, queues):
    """Kept both, rivals in one scope and environment are both handed to agents: a reviewer
    took "Keep both, scoped apart" for two backend languages of one project, and agents were
    then given both. The form now says so before, and what was done after."""
    warning = "so agents are given all of them together"
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert warning in body and "scoped apart" not in body
    item = queues["own_conflict"]
    Memory.objects.filter(pk=item.candidate_ids[0]).update(environment="staging")
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert warning not in body and "agents are given each where it applies" in body


def test_other_tenants_reviewer_sees_only_theirs(client, other_reviewer, queues):
    client.force_login(other_reviewer)
    body = client.get(reverse("portal:review:queue")).content.decode()
    assert "Stranger has a pacemaker." in body and "Alice takes insulin daily." not in body


def test_approve_with_reason_activates_the_write(reviewer_client, queues):
    item = queues["own_write"]
    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]),
        {"reason": "Confirmed with user"},
        follow=True,
    )
    item.refresh_from_db()
    assert item.state == "approved"
    assert Memory.objects.get(pk=item.memory_id).status == "active"
    assert MemoryEvent.objects.filter(action="approved", memory_id=item.memory_id).exists()
    assert b"approved" in response.content


def test_the_approval_of_a_write_not_yet_in_effect_says_when_it_starts(
    reviewer_client, alice_subject
):
    """Stop 60's audit of reviewers found that approving a sensitive correction of a memory
    imported to start next week, which keeps that start (``reviews._approval_start``), was
    answered "Write … approved: it is now active.", though no agent is given it until then.
    The message says it is not in effect until its start, as the conflicts page says of a
    candidate not yet in effect."""
    start = timezone.now() + timedelta(days=7)
    head = MemoryFactory(
        subject=alice_subject,
        memory_key="health.diet",
        content="From next week Alice eats no gluten.",
        valid_from=start,
    )
    item = pending_write_on(
        head, "From next week Alice eats no gluten (coeliac).", valid_from=start
    )

    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "confirmed by the user"}
    )

    assert response.status_code == 302
    approved = Memory.objects.get(pk=item.memory_id)
    assert approved.status == "active" and approved.supersedes_id == head.pk
    assert approved.valid_from == start
    text = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert text == (
        f"Write {str(item.pk)[:8]} approved: it is not in effect until "
        f"{start.isoformat(timespec='minutes')} (no agent is given it before then)."
    )


def test_reject_with_reason(reviewer_client, queues):
    item = queues["own_write"]
    reviewer_client.post(reverse("portal:review:reject", args=[item.pk]), {"reason": "Not needed"})
    item.refresh_from_db()
    assert item.state == "rejected"
    assert Memory.objects.get(pk=item.memory_id).status != "active"


def test_a_decision_needs_a_reason(reviewer_client, queues):
    item = queues["own_write"]
    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": ""}, follow=True
    )
    item.refresh_from_db()
    assert item.state == "open"
    assert b"Give a reason" in response.content


@pytest.mark.parametrize("name", ["portal:review:approve", "portal:review:reject"])
def test_a_blank_reason_on_a_conflicts_approve_address_does_not_call_it_a_closed_write(
    reviewer_client, queues, name
):
    """Stop 62's audit of reviewer flows found that a blank reason posted to the approve (or
    reject) address of an open conflict took the form's error path, which looked the item up
    among the writes waiting, found none, and said "Nothing was decided on write …: it is no
    longer waiting for a reviewer" of a conflict still open. It is answered as with a reason,
    as the service answers it (``not_a_sensitive_write``): a conflict, resolved by choosing
    its outcome."""
    item = queues["own_conflict"]
    url = reverse(name, args=[item.pk])
    reasoned = reviewer_client.post(url, {"reason": "Checked."}, follow=True).content.decode()
    blank = reviewer_client.post(url, {"reason": "   "}, follow=True).content.decode()

    said = "This item is a conflict between memories, not a write waiting for approval"
    assert said in reasoned
    assert said in blank
    assert "no longer waiting for a reviewer" not in blank
    item.refresh_from_db()
    assert item.state == "open"


@pytest.mark.parametrize("method", ["post", "get"])
def test_a_writes_id_on_a_conflicts_resolve_address_says_it_is_a_write_waiting_for_approval(
    reviewer_client, queues, method
):
    """Stop 63's audit of the portal found that a POST to a conflict's resolve address with a
    pending sensitive write's id answered 404, though the write is in the reviewer's tenant
    (``conflict_resolve`` finds no conflict of its id), while a GET of the same address said
    "Nothing was resolved … Resolve it below if it is still open", calling the write a
    conflict (``OpenedByGetMixin.find`` looked the item up whatever its kind). Both now say
    that it is a write to approve or reject in the review queue (``not_a_conflict``, the
    reverse of ``not_a_sensitive_write``), on the conflicts page, and nothing changes. Stop
    63's review found that message saying "decide it in the review queue" on a page with no
    link to it: it names the queue's address, as the reviewer API's ``not_a_sensitive_write``
    names the conflicts page."""
    item = queues["own_write"]
    url = reverse("portal:review:resolve", args=[item.pk])
    body = {"outcome": "keep_both_scoped", "reason": "Both hold."}

    # A GET: the login's ``next`` once logged in again, or a refused page reloaded.
    response = reviewer_client.post(url, body) if method == "post" else reviewer_client.get(url)

    assert (response.status_code, response["Location"]) == (302, reverse("portal:review:conflicts"))
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "This item is a sensitive write for a reviewer to approve or reject, not a conflict "
        "between memories: decide it in the review queue (resolving is for conflicts). It "
        "waits on /portal/review/, the review queue (Pending writes)."
    ]
    item.refresh_from_db()
    assert item.state == "open"
    assert Memory.objects.get(pk=item.memory_id).status == "pending_approval"
    assert not MemoryEvent.objects.filter(memory_id=item.memory_id).exists()


def test_a_conflicts_id_opened_on_an_approve_address_is_called_a_conflict_as_its_post_is(
    reviewer_client, queues
):
    """Stop 63's audit of the portal: the reverse of the resolve address's, on a GET. Opened
    with a conflict's id, the approve address said "Nothing was decided on write …: … Decide
    it below if it is still waiting" of the conflict, while its POST (since stop 62) says
    what the item is (``not_a_sensitive_write``). The GET says the same."""
    item = queues["own_conflict"]

    response = reviewer_client.get(reverse("portal:review:approve", args=[item.pk]))

    assert (response.status_code, response["Location"]) == (302, reverse("portal:review:queue"))
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith(
        "This item is a conflict between memories, not a write waiting for approval: resolve "
        "the conflict by choosing its outcome"
    ), message
    item.refresh_from_db()
    assert item.state == "open"


@pytest.mark.parametrize("name", ["portal:review:approve", "portal:review:reject"])
@pytest.mark.parametrize(
    ("reason", "problem"),
    [
        ("ok\x00", "Null characters are not allowed."),
        ("x" * 2001, "Ensure this value has at most 2000 characters (it has 2001)."),
    ],
)
def test_a_bad_decision_reason_is_named_and_nothing_is_decided(
    reviewer_client, queues, name, reason, problem
):
    reviewer_client.raise_request_exception = False
    item = queues["own_write"]
    response = reviewer_client.post(reverse(name, args=[item.pk]), {"reason": reason}, follow=True)
    assert response.status_code == 200
    assert f"Nothing was decided (reason: {problem})" in response.content.decode()
    item.refresh_from_db()
    assert item.state == "open"
    assert Memory.objects.get(pk=item.memory_id).status == "pending_approval"


def test_a_bad_resolution_reason_is_named_and_nothing_changes(reviewer_client, queues):
    reviewer_client.raise_request_exception = False
    item = queues["own_conflict"]
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "winner_id": item.candidate_ids[0], "reason": "a\x00b"},
        follow=True,
    )
    assert response.status_code == 200
    assert b"Nothing was resolved. Reason: Null characters are not allowed." in response.content
    item.refresh_from_db()
    assert item.state == "open"
    assert set(
        Memory.objects.filter(pk__in=item.candidate_ids).values_list("status", flat=True)
    ) == {"active"}


LONG_REASON = "Checked with the person's care team; " + "x" * 1963  # 2,000 characters


@pytest.mark.parametrize("name", ["portal:review:approve", "portal:review:reject"])
def test_a_decision_reason_the_reviewer_api_takes_the_portal_takes_too(
    reviewer_client, queues, name
):
    """The portal refused a reason over 1,000 characters; the reviewer API (and api.md)
    take 2,000. One limit now, ``MAX_REVIEW_REASON_CHARS``, and the field says it."""
    from api.memories_serializers import ReviewDecisionSerializer

    assert ReviewDecisionSerializer().fields["reason"].max_length == len(LONG_REASON) == 2000
    item = queues["own_write"]
    page = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert f'id="reason-{item.pk}" name="reason" required maxlength="2000"' in page
    reviewer_client.post(reverse(name, args=[item.pk]), {"reason": LONG_REASON})
    item.refresh_from_db()
    assert item.state != "open" and item.reason == LONG_REASON


def test_a_resolution_reason_of_2000_characters_is_taken(reviewer_client, queues):
    item = queues["own_conflict"]
    page = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert f'id="reason-{item.pk}" name="reason" required maxlength="2000"' in page
    reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "winner_id": item.candidate_ids[0], "reason": LONG_REASON},
    )
    item.refresh_from_db()
    assert item.state == "resolved" and item.reason == LONG_REASON


@pytest.mark.parametrize("body", [{"reason": "sneaky"}, {}], ids=["complete", "no reason"])
@pytest.mark.parametrize("name", ["portal:review:approve", "portal:review:reject"])
def test_decisions_on_other_tenants_items_are_404(reviewer_client, queues, name, body):
    # Incomplete too: the form was checked first, and answered with a message and a 302.
    item = queues["foreign_write"]
    response = reviewer_client.post(reverse(name, args=[item.pk]), body)
    assert response.status_code == 404
    item.refresh_from_db()
    assert item.state == "open"


def test_end_users_cannot_approve_even_their_own(alice_client, queues):
    item = queues["own_write"]
    response = alice_client.post(reverse("portal:review:approve", args=[item.pk]), {"reason": "x"})
    assert response.status_code == 403
    item.refresh_from_db()
    assert item.state == "open"


def test_a_winner_chosen_among_the_candidates_shown_revokes_no_candidate_added_since(
    reviewer_client, queues, alice_subject
):
    """Choosing a winner revokes every other candidate: one a retrieval (or a write of lower
    authority) added after the page was shown was revoked, unseen by the reviewer."""
    item = queues["own_conflict"]
    page = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    shown = ",".join(str(i) for i in item.candidate_ids)
    assert f'name="candidate_ids" value="{shown}"' in page
    late = MemoryFactory(
        subject=alice_subject, memory_key="deploy.region", content="Deploy to ap-south-1."
    )
    ReviewItem.objects.filter(pk=item.pk).update(candidate_ids=[*item.candidate_ids, late.pk])
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": item.candidate_ids[0],
            "reason": "Ops confirmed",
            "candidate_ids": shown,
        },
        follow=True,
    )
    assert b"This conflict changed since it was shown" in response.content
    item.refresh_from_db()
    late.refresh_from_db()
    assert (item.state, late.status) == ("open", "active")
    # Shown again, with the newcomer: now it resolves.
    again = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert "Deploy to ap-south-1." in again
    reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": item.candidate_ids[0],
            "reason": "Ops confirmed",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
    )
    item.refresh_from_db()
    late.refresh_from_db()
    assert (item.state, late.status) == ("resolved", "revoked")


def test_resolve_choose_winner(reviewer_client, queues):
    item = queues["own_conflict"]
    winner = item.candidate_ids[1]
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "winner_id": winner, "reason": "Ops confirmed"},
        follow=True,
    )
    item.refresh_from_db()
    assert item.state == "resolved" and item.resolution == "choose_winner"
    assert b"Conflict resolved" in response.content
    assert MemoryEvent.objects.filter(
        action="conflict_resolved", memory_id__in=item.candidate_ids
    ).exists()


@pytest.mark.parametrize("outcome", ["keep_both_scoped", "ask_user"])
def test_other_outcomes_are_recorded_as_events(reviewer_client, queues, outcome):
    item = queues["own_conflict"]
    reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]), {"outcome": outcome, "reason": "why"}
    )
    item.refresh_from_db()
    assert item.state == "resolved" and item.resolution == outcome
    assert MemoryEvent.objects.filter(
        action="conflict_resolved", memory_id__in=item.candidate_ids
    ).exists()


def test_choose_winner_needs_a_winner(reviewer_client, queues):
    item = queues["own_conflict"]
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "reason": "x"},
        follow=True,
    )
    item.refresh_from_db()
    assert item.state == "open"
    assert b"Pick the memory that wins" in response.content


def test_an_incomplete_resolution_keeps_the_reviewers_reason_on_its_conflict(
    reviewer_client, queues
):
    item = queues["own_conflict"]
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "reason": "eu-west-1 is the contract region"},
    )
    assert response.status_code == 200  # the page again, not a redirect that drops the form
    body = response.content.decode()
    error = f'id="conflict-error-{item.pk}" role="alert" tabindex="-1" autofocus'
    assert error in body
    assert "Nothing was resolved. Winner: Pick the memory that wins." in body
    assert "winner_id:" not in body  # a field's label, never its name
    assert f'id="reason-{item.pk}" name="reason"' in body
    assert 'value="eu-west-1 is the contract region"' in body
    assert f'value="choose_winner" id="outcome-{item.pk}-choose_winner" required checked' in body
    item.refresh_from_db()
    assert item.state == "open"


def test_choose_winner_refuses_a_candidate_no_longer_active(reviewer_client, queues):
    item = queues["own_conflict"]
    gone, other = item.candidate_ids
    Memory.objects.filter(pk=gone).update(status="revoked")
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "winner_id": gone, "reason": "eu is right"},
        follow=True,
    )
    assert response.status_code == 200
    assert b"The chosen memory is revoked, no longer in use, so it cannot win" in response.content
    item.refresh_from_db()
    assert item.state == "open"  # nothing changed
    assert Memory.objects.get(pk=other).status == "active"
    assert not MemoryEvent.objects.filter(memory_id__in=item.candidate_ids).exists()


def test_conflicts_page_offers_only_active_candidates(reviewer_client, queues):
    item = queues["own_conflict"]
    gone, other = item.candidate_ids
    Memory.objects.filter(pk=gone).update(status="superseded")
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert f'name="winner_id" value="{other}"' in body
    assert f'value="{gone}"' not in body
    assert "Deploy to eu-west-1." in body and "no longer in use, so it cannot win" in body
    assert "Only one candidate is still in use" in body


def expired_and_live_conflict(subject):
    """A conflict whose first candidate is past its valid_until, not yet swept (still
    "active"), and whose second is in use."""
    now = timezone.now()
    item = conflict(subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    expired, live = item.candidate_ids
    Memory.objects.filter(pk=expired).update(
        valid_from=now - timedelta(days=10), valid_until=now - timedelta(days=1)
    )
    return item, expired, live


def test_conflicts_page_shows_a_candidate_past_its_end_as_expired_not_as_a_winner(
    reviewer_client, alice_subject
):
    item, expired, live = expired_and_live_conflict(alice_subject)
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert f'name="winner_id" value="{live}"' in body
    assert f'value="{expired}"' not in body
    assert "Expired</span>: no longer in use, so it cannot win" in body
    assert "Only one candidate is still in use" in body


def not_yet_in_effect_conflict(subject):
    """Return (a conflict item, its candidate in effect next week, its candidate in use)."""
    item = conflict(subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    later, live = item.candidate_ids
    Memory.objects.filter(pk=later).update(valid_from=timezone.now() + timedelta(days=7))
    return item, later, live


def test_conflicts_page_shows_a_candidate_not_yet_in_effect_and_refuses_it_as_the_winner(
    reviewer_client, alice_subject
):
    """A candidate whose valid_from is still ahead (imported so) was offered as a winner
    "in use"; chosen, it revoked the only memory agents were given on the key (stop 56's audit
    of conflicts). It is listed as not yet in effect, and a winner sent anyway is refused."""
    item, later, live = not_yet_in_effect_conflict(alice_subject)
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert f'name="winner_id" value="{live}"' in body
    assert f'value="{later}"' not in body
    assert "Not yet in effect</span>: from" in body
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": str(later),
            "reason": "the user's rule",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
        follow=True,
    )
    assert b"The chosen memory is not in effect until" in response.content
    item.refresh_from_db()
    assert item.state == "open"  # nothing changed
    assert Memory.objects.get(pk=live).status == "active"
    assert not MemoryEvent.objects.filter(memory_id__in=item.candidate_ids).exists()


def test_a_conflict_with_a_candidate_not_yet_in_effect_counts_one_candidate_in_use(
    reviewer_client, alice_subject
):
    """A candidate whose valid_from was still ahead was offered as no winner, yet
    ``conflict_queue`` counted it in use (its status is active): the page left out "Only one
    candidate is still in use" and said that keep both hands agents both together in one
    scope, of a memory no agent is given (stop 56's audit of the portal in a browser)."""
    item, later, live = not_yet_in_effect_conflict(alice_subject)
    body = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert f'value="{later}"' not in body
    assert "Only one candidate is still in use" in body
    assert "they hold in the same scope and environment" not in body


def test_choose_winner_says_which_candidate_not_yet_in_effect_it_left_active(
    reviewer_client, alice_subject
):
    """Stop 59's audit of the portal found the message after a chosen winner saying "every
    other candidate was revoked" when one not yet in effect (imported so) stayed active, as
    ``conflict_resolve`` leaves it. It says which one was not revoked, and why."""
    item = conflict(
        alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.",
        "Deploy to ap-south-1.",
    )  # fmt: skip
    winner, loser, later = item.candidate_ids
    Memory.objects.filter(pk=later).update(valid_from=timezone.now() + timedelta(days=7))

    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": str(winner),
            "reason": "the region the team chose",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
        follow=True,
    )

    statuses = dict(Memory.objects.values_list("pk", "status"))
    assert (statuses[loser], statuses[later]) == ("revoked", "active")
    body = response.content.decode()
    assert "every other candidate in use was revoked" in body
    assert f"Candidate {str(later)[:8]} was not revoked: it is not in effect until" in body
    assert str(loser)[:8] not in body


def test_choose_winner_does_not_call_a_candidate_past_its_end_not_yet_in_effect(
    reviewer_client, alice_subject
):
    """Stop 60's audit of reviewers found that the message after a chosen winner said of a
    candidate past its valid_until (stored "active" until the retention sweep, and rightly
    left alone by the resolution) "was not revoked: it is not in effect until" its start, a
    date in the past: ``not_in_effect_yet`` named every other candidate stored active. Only
    one whose valid_from is still ahead is named so."""
    item = conflict(
        alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.",
        "Deploy to ap-south-1.",
    )  # fmt: skip
    winner, loser, expired = item.candidate_ids
    now = timezone.now()
    Memory.objects.filter(pk=expired).update(
        valid_from=now - timedelta(days=3), valid_until=now - timedelta(hours=1)
    )

    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": str(winner),
            "reason": "eu is right",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
    )

    assert response.status_code == 302
    statuses = dict(Memory.objects.values_list("pk", "status"))
    assert (statuses[loser], statuses[expired]) == ("revoked", "active")
    text = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert "Conflict resolved" in text
    assert "not in effect" not in text and str(expired)[:8] not in text, text


def test_keep_both_names_each_candidate_it_leaves_given_to_no_agent(reviewer_client, alice_subject):
    """Stop 63's audit of the portal found that after "Keep both" the message said "Every
    candidate stays in use: agents are given each where it applies" of a conflict one of
    whose candidates was past its valid_until (stored active until the retention sweep), which
    the conflicts page lists as "Expired: no longer in use, so it cannot win" and no agent is
    given; so too of a candidate past its retention, revoked, deleted, or not yet in effect.
    It says that every candidate still in use stays in use, and names each of the others
    with its state at the resolution, as the choice of a winner names the candidates not yet
    in effect it left active."""
    item = conflict(
        alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.",
        "Deploy to ap-south-1.", "Deploy to sa-east-1.", "Deploy to af-south-1.",
        "Deploy to me-south-1.", "Deploy to ca-central-1.",
    )  # fmt: skip
    live, other_live, expired, old, revoked, deleted, later = item.candidate_ids
    now = timezone.now()
    Memory.objects.filter(pk=expired).update(
        valid_from=now - timedelta(days=2), valid_until=now - timedelta(hours=1)
    )
    # Episodic: 90 days under the default policy, so the retention sweep's next run deletes it.
    Memory.objects.filter(pk=old).update(created_at=now - timedelta(days=120))
    Memory.objects.filter(pk=revoked).update(status="revoked")
    owner = SubjectPrincipal(tenant_id=item.tenant_id, subject_id=item.subject_id, user_id=1)
    deletion_request(principal=owner, memory_id=deleted)  # its worker has not run
    start = now + timedelta(days=7)
    Memory.objects.filter(pk=later).update(valid_from=start)
    page = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert "Expired</span>: no longer in use, so it cannot win" in page  # as the page says it

    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "keep_both_scoped",
            "reason": "Every region is used.",
            "candidate_ids": ",".join(str(pk) for pk in item.candidate_ids),
        },
    )

    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.state, item.resolution) == ("resolved", "keep_both_scoped")
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith(
        "Conflict resolved: keep both. Every candidate still in use stays in use: agents are "
        "given each where it applies, together where they hold in the same place. Candidate "
    ), message
    for said in (
        f"Candidate {str(expired)[:8]} is expired and given to no agent.",
        f"Candidate {str(old)[:8]} is past its retention period under the tenant's policy "
        "and given to no agent.",
        f"Candidate {str(revoked)[:8]} is revoked and given to no agent.",
        f"Candidate {str(deleted)[:8]} is deleted and given to no agent.",
        f"Candidate {str(later)[:8]} is not in effect until "
        f"{start.isoformat(timespec='minutes')} (no agent is given it before then).",
    ):
        assert said in message, message
    assert message.count("Candidate ") == 5  # none of those in use
    assert str(live)[:8] not in message and str(other_live)[:8] not in message


def test_choose_winner_refuses_a_candidate_past_its_end(reviewer_client, alice_subject):
    item, expired, live = expired_and_live_conflict(alice_subject)
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": str(expired),
            "reason": "old one",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
        follow=True,
    )
    assert b"The chosen memory is expired, no longer in use, so it cannot win" in response.content
    item.refresh_from_db()
    assert item.state == "open"  # nothing changed
    assert Memory.objects.get(pk=live).status == "active"
    assert not MemoryEvent.objects.filter(memory_id__in=item.candidate_ids).exists()


def test_the_conflicts_page_says_who_reads_each_candidate_and_refuses_a_narrower_winner(
    reviewer_client, alice_subject
):
    """Stop 60's audit of reviewers found that the conflicts page did not say whose each
    candidate is, and that choosing an agent's private memory over a shared one revoked the
    shared one for every other agent. Each candidate says who reads it, and that choice is
    refused in a message that says why; nothing changes."""
    x = AgentFactory(tenant=alice_subject.tenant, name="agent-x")
    AgentFactory(tenant=alice_subject.tenant, name="agent-y")
    item = conflict(alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    shared, private = item.candidate_ids
    Memory.objects.filter(pk=private).update(agent=x)

    page = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": str(private),
            "reason": "us is right",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
        follow=True,
    )

    assert "private to agent <strong>agent-x</strong>" in page
    assert "shared by the tenant's agents" in page
    body = response.content.decode()
    assert "The chosen memory reaches fewer agents than candidate" in body
    assert "Nothing was resolved: choose another candidate, or keep both." in body
    item.refresh_from_db()
    assert item.state == "open"
    assert Memory.objects.get(pk=shared).status == "active"
    assert not MemoryEvent.objects.filter(memory_id__in=item.candidate_ids).exists()


def preference_conflict(subject, key, *contents):
    memories = [
        MemoryFactory(subject=subject, memory_key=key, content=content, authority="model_inference")
        for content in contents
    ]
    item = ReviewItem.objects.create(
        tenant=subject.tenant,
        subject=subject,
        kind="conflict",
        memory_key=key,
        candidate_ids=[memory.pk for memory in memories],
    )
    return item, memories


def test_revoking_candidates_closes_the_conflict_once_nothing_is_left_to_choose(
    client, alice, reviewer, alice_subject
):
    item, (a, b, c) = preference_conflict(alice_subject, "deploy.region", "EU.", "US.", "APAC.")
    client.force_login(alice)
    client.post(reverse("portal:memory-revoke", args=[a.pk]))
    item.refresh_from_db()
    assert item.state == "open"  # two candidates are still in use: still a choice to make
    client.force_login(reviewer)
    body = client.get(reverse("portal:review:conflicts")).content.decode()
    assert f'value="{a.pk}"' not in body and f'value="{b.pk}"' in body

    client.force_login(alice)
    client.post(reverse("portal:memory-revoke", args=[b.pk]))
    item.refresh_from_db()
    assert item.state == "resolved" and item.resolution == "revoked"
    assert item.resolved_by_id is None  # not a reviewer's decision
    assert Memory.objects.get(pk=c.pk).status == "active"
    client.force_login(reviewer)
    body = client.get(reverse("portal:review:conflicts")).content.decode()
    assert "No open conflicts." in body
    response = client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "winner_id": str(a.pk), "reason": "too late"},
        follow=True,
    )
    assert b"it closed meanwhile, as fewer than two of its candidates" in response.content
    assert Memory.objects.get(pk=c.pk).status == "active"


@pytest.mark.parametrize(
    "body",
    [{"outcome": "ask_user", "reason": "sneaky"}, {"outcome": "choose_winner", "reason": "x"}],
    ids=["complete", "no winner"],
)
def test_resolving_other_tenants_conflict_is_404(reviewer_client, queues, body):
    item = queues["foreign_conflict"]
    response = reviewer_client.post(reverse("portal:review:resolve", args=[item.pk]), body)
    assert response.status_code == 404
    item.refresh_from_db()
    assert item.state == "open"


def test_rejected_writes_grouped_by_rule(reviewer_client, tenant, other_tenant):
    for codes in (["injection.identity"], ["injection.identity", "class.business_state"]):
        AdmissionDecision.objects.create(tenant=tenant, outcome="rejected", rule_codes=codes)
    AdmissionDecision.objects.create(tenant=tenant, outcome="accepted", rule_codes=[])
    AdmissionDecision.objects.create(
        tenant=other_tenant, outcome="rejected", rule_codes=["foreign.rule"]
    )
    response = reviewer_client.get(reverse("portal:review:rejected"))
    groups = {group.rule_code: group.count for group in response.context["groups"]}
    assert groups == {"injection.identity": 2, "class.business_state": 1}
    assert b"foreign.rule" not in response.content


def test_rejected_counts_cover_every_row_not_a_capped_slice(
    reviewer_client, tenant, agent, django_assert_max_num_queries
):
    now = timezone.now()
    AdmissionDecision.objects.bulk_create(
        [
            AdmissionDecision(
                tenant=tenant,
                outcome="rejected",
                rule_codes=["injection.prompt"],
                created_at=now - timedelta(minutes=n),
            )
            for n in range(1, 2101)
        ]
    )
    both = AdmissionDecision.objects.create(
        tenant=tenant,
        agent=agent,
        outcome="rejected",
        rule_codes=["injection.prompt", "authority.raise"],
        created_at=now,
    )
    AdmissionDecision.objects.create(tenant=tenant, outcome="rejected", rule_codes=[])
    with django_assert_max_num_queries(8):
        response = reviewer_client.get(reverse("portal:review:rejected"))
    groups = {group.rule_code: group for group in response.context["groups"]}
    assert list(groups) == ["injection.prompt", "(no rule code)", "authority.raise"]
    assert groups["injection.prompt"].count == 2101
    assert groups["authority.raise"].count == 1 and groups["(no rule code)"].count == 1
    latest = groups["injection.prompt"].decisions
    assert len(latest) == 5 and latest[0].pk == both.pk
    assert [d.created_at for d in latest] == sorted((d.created_at for d in latest), reverse=True)
    assert groups["injection.prompt"].last_at == both.created_at
    body = response.content.decode()
    assert "Showing the latest 5 of 2101." in body
    assert agent.name in body


def dead_lettered(subject, *, attempts=5, last_error="", steps=()) -> DeletionOperation:
    """A dead-lettered deletion of ``subject``, with a failed step for each ``(store,
    last_error)`` of ``steps``."""
    operation = DeletionOperation.objects.create(
        tenant=subject.tenant,
        subject=subject,
        target="subject",
        status="failed",
        attempts=attempts,
        last_error=last_error,
        dead_lettered_at=timezone.now(),
    )
    for store, error in steps:
        operation.steps.create(store=store, status="failed", attempts=attempts, last_error=error)
    return operation


def test_dead_lettered_deletions_of_own_tenant(reviewer_client, alice_subject, stranger_subject):
    def stuck(subject, error):
        return dead_lettered(subject, last_error=error, steps=[("exports", error)])

    own = stuck(alice_subject, "export volume read-only")
    foreign = stuck(stranger_subject, "foreign error")
    DeletionOperation.objects.create(
        tenant=alice_subject.tenant, subject=alice_subject, target="subject", status="running"
    )
    body = reviewer_client.get(reverse("portal:review:deletions")).content.decode()
    assert str(own.pk) in body and "export volume read-only" in body
    assert str(foreign.pk) not in body and "foreign error" not in body
    assert body.count('class="card" aria-labelledby="op-') == 1


def test_dead_letters_show_reviewers_the_errors_without_the_servers_paths(
    reviewer_client, alice_subject
):
    """A step's and an operation's last_error name the server's folders and files (the
    evaluation step's missing folder, an OSError's file, the journal's): a tenant's reviewers
    are shown the error with each path left out; the stored error keeps it for the admin."""
    journal = "OSError: [Errno 30] Read-only file system: '/srv/memledger/deletion journal.log'"
    operation = dead_lettered(
        alice_subject,
        last_error=f"steps not verified after 5 runs: ['evaluation']; journal append failed: "
        f"{journal}",
        steps=[
            (
                "evaluation",
                "MEMLEDGER_EVAL_DATA_DIRS names '/srv/evals/tenant-a', which is not a folder",
            ),
            (
                "exports",
                "PermissionError: [Errno 13] Permission denied: /var/lib/memledger/exports/x.json",
            ),
        ],
    )
    body = reviewer_client.get(reverse("portal:review:deletions")).content.decode()
    for path in ("/srv/", "deletion journal.log", "tenant-a", "/var/lib", "x.json"):
        assert path not in body, path
    assert "Read-only file system: &#x27;&lt;path&gt;&#x27;" in body
    assert "MEMLEDGER_EVAL_DATA_DIRS names &#x27;&lt;path&gt;&#x27;, which is not a folder" in body
    assert "Permission denied: &lt;path&gt;" in body
    operation.refresh_from_db()
    assert journal in operation.last_error


def test_a_reviewer_retries_a_dead_lettered_deletion_from_its_page(
    reviewer_client,
    alice_subject,
    stranger_subject,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    """The dead-letter page's "Retry" button re-drives the operation (``deletion_retry``:
    fresh attempts, its task sent); another tenant's operation is a 404 and stays failed."""
    sent = []
    monkeypatch.setattr(
        "memory_core.deletion.services.deletion_enqueue", lambda pk: sent.append(pk) or True
    )

    def stuck(subject):
        return dead_lettered(
            subject,
            attempts=8,
            last_error="evaluation folder missing",
            steps=[("evaluation", "")],
        )

    own, foreign = stuck(alice_subject), stuck(stranger_subject)
    page = reviewer_client.get(reverse("portal:review:deletions")).content.decode()
    retry_url = reverse("portal:review:deletion-retry", args=[own.pk])
    assert f'action="{retry_url}"' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(retry_url, follow=True)
    own.refresh_from_db()
    assert (own.status, own.attempts, own.dead_lettered_at) == ("pending", 0, None)
    assert sent == [own.pk]
    assert "retried" in response.content.decode()
    page = reviewer_client.get(reverse("portal:review:deletions")).content.decode()
    assert str(own.pk) not in page

    # Opened (GET), the address retries nothing and goes back to the list.
    response = reviewer_client.get(retry_url)
    assert (response.status_code, response["Location"]) == (302, reverse("portal:review:deletions"))
    assert sent == [own.pk]
    foreign_url = reverse("portal:review:deletion-retry", args=[foreign.pk])
    assert reviewer_client.get(foreign_url).status_code == 404
    assert reviewer_client.post(foreign_url).status_code == 404
    foreign.refresh_from_db()
    assert foreign.status == "failed" and foreign.dead_lettered_at is not None


def test_a_retry_that_finds_the_deletion_already_retried_says_nothing_was_retried(
    reviewer_client, alice_subject, monkeypatch, django_capture_on_commit_callbacks
):
    # deletion_retry leaves an operation that is no longer failed as it is (a double click,
    # a second reviewer), but the page said "retried" every time.
    sent = []
    monkeypatch.setattr(
        "memory_core.deletion.services.deletion_enqueue", lambda pk: sent.append(pk) or True
    )
    operation = dead_lettered(alice_subject, attempts=8)
    url = reverse("portal:review:deletion-retry", args=[operation.pk])
    short = str(operation.pk)[:8]

    def retry():
        with django_capture_on_commit_callbacks(execute=True):
            response = reviewer_client.post(url, follow=True)
        return [str(message) for message in response.context["messages"]]

    assert retry() == [
        f"Deletion {short} retried: its unverified steps run again (it comes back here if "
        "they fail again)."
    ]
    assert sent == [operation.pk]
    assert retry() == [f"Nothing to retry: deletion {short} is already running (pending)."]
    for status in ("running", "partial"):
        DeletionOperation.objects.filter(pk=operation.pk).update(status=status)
        assert retry() == [f"Nothing to retry: deletion {short} is already running ({status})."]
    DeletionOperation.objects.filter(pk=operation.pk).update(
        status="completed", completed_at=timezone.now()
    )
    assert retry() == [f"Nothing to retry: deletion {short} has already completed."]
    assert sent == [operation.pk]  # sent once, by the one retry that re-drove it
    operation.refresh_from_db()
    assert operation.status == "completed"


def test_each_pending_writes_controls_are_named_for_it(reviewer_client, queues, tenant):
    # "Reason", "Approve", "Reject" repeated for every item: a screen reader's list of
    # controls could not tell one write's buttons from another's. Named by the subject alone,
    # two writes about one person still read alike: the key and the short id tell them apart.
    from tests.factories import SubjectFactory

    bob = SubjectFactory(tenant=tenant, external_id="bob-7")
    second = pending_write(bob, "Bob sees a cardiologist.")
    third = pending_write(queues["own_write"].subject, "Alice sees a cardiologist.")
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    names = []
    for item, subject in (
        (queues["own_write"], "alice-subject"),
        (second, "bob-7"),
        (third, "alice-subject"),
    ):
        what = f"the write {item.memory.memory_key} ({str(item.pk)[:8]}) about {subject}"
        names.append(what)
        about = f'<span class="visually-hidden"> {what}</span>'
        assert f"Approve{about}</button>" in body and f"Reject{about}</button>" in body
        assert f'Reason<span class="visually-hidden"> for {what}</span></label>' in body
        # The reason and both buttons are described by the write's text.
        assert body.count(f'aria-describedby="write-{item.pk}"') == 3
        assert f'id="write-{item.pk}"' in body
    assert len(set(names)) == 3


def test_an_error_message_is_an_alert_and_others_a_status(reviewer_client, queues):
    item = queues["own_write"]
    approved = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "checked"}, follow=True
    )
    assert 'class="message message-success" role="status"' in approved.content.decode()
    refused = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "twice"}, follow=True
    )
    assert 'class="message message-error" role="alert"' in refused.content.decode()
    assert "you approved it already." in refused.content.decode()


def test_the_queue_says_an_approval_stands_beside_a_stronger_version_written_since(
    reviewer_client, alice_subject
):
    """A tool's write on a model's guess waits; the person then corrects the guess. Approved,
    the write stands in a conflict beside the person's version; the queue said it "becomes
    the next version of" the guess (it compared authority with the version written on)."""
    guess = MemoryFactory(
        subject=alice_subject,
        memory_key="health.diet",
        content="Alice seems to avoid sugar.",
        authority="model_inference",
        source_type="model_inference",
        confidence=0.6,
    )
    item = pending_write_on(
        guess,
        "A glucose monitor reports Alice is diabetic.",
        authority="tool_observation",
        source_type="verified_tool_output",
        source_tool="glucose",
        confidence=0.8,
    )
    Memory.objects.filter(pk=guess.pk).update(status="superseded")
    stated = MemoryFactory(
        subject=alice_subject,
        memory_key="health.diet",
        content="I avoid sugar, I am not diabetic.",
        authority="explicit_user",
        supersedes=guess,
        version=2,
    )

    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "checked"}
    )

    assert response.status_code == 302
    stated.refresh_from_db()
    item.memory.refresh_from_db()
    assert stated.status == "active" and item.memory.status == "active"
    assert item.memory.supersedes_id is None
    conflict = ReviewItem.objects.get(
        subject=alice_subject, kind="conflict", state="open", memory_key="health.diet"
    )
    assert set(conflict.candidate_ids) == {stated.pk, item.memory.pk}
    # What the page said before: the conflict, beside the person's version, not the guess.
    assert "becomes the next version of" not in body
    assert (
        "stands in a conflict, for a reviewer, beside (its authority is lower than) "
        "<q>I avoid sugar, I am not diabetic.</q>"
    ) in body
    written_on = "this was written on <q>Alice seems to avoid sugar.</q>, version 1, superseded"
    assert written_on in body


def test_the_queue_names_the_newest_version_an_approval_becomes_the_next_version_of(
    reviewer_client, alice_subject
):
    """Moved on to a version of no higher authority, the chain's newest version is what the
    approval supersedes, and what the queue names."""
    first = MemoryFactory(subject=alice_subject, memory_key="health.sleep", content="Sleeps 6h.")
    item = pending_write_on(first, "Alice takes melatonin to sleep.")
    Memory.objects.filter(pk=first.pk).update(status="superseded")
    second = MemoryFactory(
        subject=alice_subject,
        memory_key="health.sleep",
        content="Sleeps 7h.",
        supersedes=first,
        version=2,
    )

    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    reviewer_client.post(reverse("portal:review:approve", args=[item.pk]), {"reason": "ok"})

    item.memory.refresh_from_db()
    assert item.memory.supersedes_id == second.pk and item.memory.version == 3
    assert "becomes the next version of <q>Sleeps 7h.</q>" in body
    assert "this was written on <q>Sleeps 6h.</q>, version 1, superseded since" in body


def next_version(head, content):
    """Supersede ``head`` with its next version, ``content``, as a write on its key does."""
    Memory.objects.filter(pk=head.pk).update(status="superseded")
    return MemoryFactory(
        subject=head.subject,
        memory_key=head.memory_key,
        content=content,
        supersedes=head,
        version=head.version + 1,
    )


def approval_sent_from(body: str, item) -> dict:
    """Return what the queue page ``body``'s form of ``item`` sends with Approve."""
    card = body.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0]
    seen = re.search(r'name="seen_head_id" value="([^"]*)"', card).group(1)
    return {"reason": "ok", "seen_head_id": seen}


@pytest.mark.parametrize("since", ["moved_on", "written_on_the_key"])
def test_an_approval_from_a_queue_shown_before_the_key_moved_on_decides_nothing(
    reviewer_client, alice_subject, since
):
    """Stop 61's audit of reviewers: an approval sent from a queue page whose card named the
    memory it lands on ("becomes the next version of <q>…</q>", or nothing to replace)
    decides nothing when it lands on another one by the click (a newer version superseded
    the one named, or a memory was written on the key since): 409 ``review_changed``, the
    queue shown again with what approving does now, and approved from there it lands on
    that. As a conflict's resolution from a stale page (``conflict_changed``), since the
    approval superseded a memory the reviewer was never shown."""
    if since == "moved_on":
        head = MemoryFactory(
            subject=alice_subject, memory_key="health.diet", content="Alice eats everything."
        )
        item = pending_write_on(head, "Alice has coeliac disease, eats no gluten.")
    else:
        item = pending_write(alice_subject, "Alice has coeliac disease, eats no gluten.")
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    sent = approval_sent_from(body, item)
    if since == "moved_on":
        assert "becomes the next version of <q>Alice eats everything.</q>" in body
        newer = next_version(head, "Alice is vegetarian now.")
    else:
        assert sent["seen_head_id"] == ""  # the card named no memory
        newer = MemoryFactory(
            subject=alice_subject,
            memory_key=item.memory.memory_key,
            content="Alice is vegetarian now.",
        )

    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), sent, follow=True
    )

    newer.refresh_from_db()
    item.memory.refresh_from_db()
    assert newer.status == "active" and item.memory.status == "pending_approval"
    assert ReviewItem.objects.get(pk=item.pk).state == "open"
    body = response.content.decode()
    assert f"Write {str(item.pk)[:8]}: The memory this approval lands on changed" in body
    assert "becomes the next version of <q>Alice is vegetarian now.</q>" in body
    reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), approval_sent_from(body, item)
    )
    item.memory.refresh_from_db()
    assert item.memory.status == "active" and item.memory.supersedes_id == newer.pk


def test_the_queue_names_the_memory_a_write_made_on_a_key_without_one_would_supersede(
    reviewer_client, alice_subject
):
    """A sensitive write made while its key had no memory cites none; the key then got one.
    Approved, the write supersedes it (``approval_head`` falls back to the key's head), but
    the queue said what an approval does only for a write that cited a head (``review_queue``
    read ``lands_on`` for those alone): a health fact replaced a diet preference unseen."""
    item = pending_write(alice_subject, "Alice is allergic to penicillin.")
    alone = pending_write(alice_subject, "Alice takes insulin daily.")  # its key has none
    assert item.candidate_ids == [] and alone.candidate_ids == []
    head = MemoryFactory(
        subject=alice_subject,
        memory_key=item.memory.memory_key,
        content="Alice prefers vegetarian meals.",
    )

    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    reviewer_client.post(reverse("portal:review:approve", args=[item.pk]), {"reason": "ok"})

    item.memory.refresh_from_db()
    assert item.memory.supersedes_id == head.pk  # what the approval did
    card = body.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0]
    assert "becomes the next version of <q>Alice prefers vegetarian meals.</q>" in card
    assert "the key's memory in use now; this was written while the key had none" in card
    card = body.split(f'id="item-{alone.pk}"', 1)[1].split("</li>", 1)[0]
    assert 'class="replaces"' not in card  # nothing to replace, nothing said


def test_the_queue_does_not_say_a_write_on_a_head_deleted_since_was_made_while_the_key_had_none(
    api_client, reviewer_client, tenant
):
    """Stop 60's audit of reviewers found that a sensitive write made on the key's head,
    whose person then deleted that head, was said once the key had a new memory to have
    been "written while the key had none": the deletion's worker takes the head's id out of
    the write's review item (no id of a deleted memory is kept), and the queue read an item
    citing none as a write made on no memory, hiding that approving it brings back a
    correction of a memory the person deleted. The card says it was written on a memory
    deleted since, as it does before the worker runs; the item cites no id of the head."""
    head = api_client.post(
        "/api/v1/memories",
        write_body(memory_key="health.diet", content="User eats everything."),
        format="json",
    ).json()["memory"]
    written = api_client.post(
        "/api/v1/memories",
        write_body(memory_key="health.diet", content="User is allergic to peanuts."),
        format="json",
    ).json()
    item = ReviewItem.objects.get(pk=written["review_item"])
    assert [str(i) for i in item.candidate_ids] == [head["id"]]
    subject = Subject.objects.get(tenant=tenant, external_id="user-1")
    owner = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=owner, memory_id=head["id"])
    assert deletion_run(operation_id=operation.id) == "completed"
    item.refresh_from_db()
    assert item.state == "open" and item.candidate_ids == []
    alone = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    MemoryFactory(subject=subject, memory_key="health.diet", content="User eats fish now.")

    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    card = body.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0]
    assert "becomes the next version of <q>User eats fish now.</q>" in card
    assert "this was written on a memory deleted since" in card, card
    assert "while the key had none" not in card
    card = alone.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0]
    assert (
        "a memory of its own, replacing nothing: it was written on a memory deleted since" in card
    )


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_reviewer_refused_by_a_queued_deletion_is_told_in_a_reviewers_words(
    reviewer_client, reviewer, alice_subject, decision
):
    """A deletion of the subject is queued: the decision is refused, and the reviewer was told
    the end user's "A deletion of memories about you ... (see Deletions) ... none of your
    memories", on a page with no Deletions link."""
    item = pending_write(alice_subject, "Alice takes insulin daily.")
    Subject.objects.filter(pk=alice_subject.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=reviewer.pk
    )

    response = reviewer_client.post(
        reverse(f"portal:review:{decision}", args=[item.pk]), {"reason": "ok"}, follow=True
    )

    item.refresh_from_db()
    item.memory.refresh_from_db()
    assert (item.state, item.memory.status) == ("open", "pending_approval")
    body = response.content.decode()
    assert BEING_DELETED_FOR_REVIEWER.replace("'", "&#x27;") in body
    assert "memories about you" not in body and "none of your memories" not in body


def test_recently_decided_lists_reviewers_decisions_not_items_the_system_closed(
    reviewer_client, alice_subject
):
    """Items closed by the system (the retention sweep, a deletion's worker, a revoke) after a
    reviewer's approval filled the ten rows of "Recently decided" and pushed it out."""
    decided = pending_write(alice_subject, "Alice takes insulin daily.")
    reviewer_client.post(reverse("portal:review:approve", args=[decided.pk]), {"reason": "ok"})
    resolved = conflict(alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us.")
    ReviewItem.objects.filter(pk=resolved.pk).update(
        state="resolved", resolution="keep_both_scoped", resolved_at=timezone.now()
    )
    later = timezone.now() + timedelta(seconds=1)
    closures = ["valid_until_passed", "deleted", "revoked", "consent_withdrawn", "settled"]
    closed = []
    for n in range(12):
        kind = "conflict" if closures[n % 5] in ("revoked", "settled") else "sensitive_write"
        closed.append(
            ReviewItem.objects.create(
                tenant=alice_subject.tenant,
                subject=alice_subject,
                kind=kind,
                memory=MemoryFactory(subject=alice_subject, status="expired"),
                memory_key=f"closed.{n}",
                state="resolved",
                resolution=closures[n % 5],
                resolved_at=later + timedelta(seconds=n),
            )
        )

    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()

    recent = body.split('id="recent-title"', 1)[1].split("</section>", 1)[0]
    assert recent.count("<tr>") == 1 + 2  # the head's row, the two decisions
    assert f"<code>{str(decided.pk)[:8]}</code>" in recent
    assert f"<code>{str(resolved.pk)[:8]}</code>" in recent
    assert not any(str(item.pk)[:8] in recent for item in closed)


def test_an_approval_that_opened_a_conflict_says_so(reviewer_client, alice_subject, queues):
    """Approved beside a head of higher authority, the write stands in a conflict: the
    reviewer was told "approved: it is now active" and nothing of the conflict."""
    head = MemoryFactory(subject=alice_subject, memory_key="health.diet", content="No sugar.")
    item = pending_write_on(
        head,
        "Alice seems to eat sugar.",
        authority="model_inference",
        source_type="model_inference",
        confidence=0.6,
    )

    body = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "checked"}, follow=True
    ).content.decode()

    conflict = ReviewItem.objects.get(kind="conflict", state="open", memory_key="health.diet")
    said = (
        f"Write {str(item.pk)[:8]} approved: it is now active, but its authority is lower "
        f"than the memory in use on its key, so it stands beside it in a conflict "
        f"({str(conflict.pk)[:8]}) for a reviewer to settle under Conflicts"
    )
    assert said in body and 'class="message message-warning" role="status"' in body
    # One that replaced nothing, or the head, says it is active and nothing of a conflict.
    plain = reviewer_client.post(
        reverse("portal:review:approve", args=[queues["own_write"].pk]),
        {"reason": "checked"},
        follow=True,
    ).content.decode()
    assert f"Write {str(queues['own_write'].pk)[:8]} approved: it is now active." in plain
    assert "in a conflict (" not in plain


def test_the_pages_say_what_agents_are_given_during_a_conflict_as_retrieval_gives_it(
    api_client, reviewer_client, tenant
):
    """An inferred sensitive write on a key whose memory the user stated is approved: it
    stands beside the head in a conflict. The approval's message, the conflicts page and
    "Ask the user" (before and after) said that meanwhile "agents are asked for
    clarification instead of being given either", but retrieval gives agents the memory its
    rules prefer, here the head of higher authority, and asks for clarification only for a
    tie (docs/retrieval.md, stage 8). The pages now say what agents are given."""
    claim = "asked for clarification instead of being given either"
    approve_workflow_consent(tenant, "user_preference")
    stated = write_body(memory_key="diet.notes", content="User avoids sugar in every meal.")
    assert api_client.post("/api/v1/memories", stated, format="json").status_code == 201
    inferred = write_body(
        memory_key="diet.notes",
        content="User probably has diabetes.",
        source={"type": "model_inference", "conversation_id": "c-1", "message_id": "m-3"},
    )
    pending = api_client.post("/api/v1/memories", inferred, format="json").json()

    approved = reviewer_client.post(
        reverse("portal:review:approve", args=[pending["review_item"]]),
        {"reason": "Checked with the user."},
        follow=True,
    ).content.decode()
    conflict = ReviewItem.objects.get(kind="conflict", state="open", memory_key="diet.notes")
    page = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    asked = reviewer_client.post(
        reverse("portal:review:resolve", args=[conflict.pk]),
        {"outcome": "ask_user", "reason": "The user decides.", "candidate_ids": ""},
        follow=True,
    ).content.decode()

    question = {"query": "Any diet notes: sugar, diabetes?", "context": {"user_id": "user-1"}}
    package = api_client.post("/api/v1/retrieve", question, format="json").json()
    assert [item["content"] for item in package["items"]] == ["User avoids sugar in every meal."]
    assert package["clarifications"] == []
    assert "agents are given the memory of higher authority, as before" in approved
    assert "agents are given the one retrieval's rules prefer" in page
    assert "Only where those rules leave a tie" in page
    assert "Nothing changed: agents are given what they were given before" in asked
    for said in (approved, page, asked):
        assert claim not in said and "keep asking for clarification" not in said


def test_the_conflict_an_approval_put_its_write_in_is_found(tenant, reviewer, alice_subject):
    """``review_approval_conflict``: the approved write of lower authority stands beside the
    key's head in an open conflict; one that became the next version stands in none, though
    an open conflict of the head it superseded follows it and names it."""
    from memory_core.principals import ReviewerPrincipal
    from memory_core.retrieval.types import ConflictPlace
    from memory_core.selectors.reviews import review_approval_conflict
    from memory_core.services.conflicts import conflict_open
    from memory_core.services.reviews import review_approve

    principal = ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk)
    head = MemoryFactory(subject=alice_subject, memory_key="health.sleep", content="Sleeps 7h.")
    weaker = pending_write_on(
        head, "Alice seems tired.", authority="model_inference", source_type="model_inference"
    )
    approved = review_approve(principal=principal, item_id=weaker.pk, reason="ok")
    conflict = review_approval_conflict(principal=principal, item=approved)
    assert conflict.kind == "conflict" and conflict.state == "open"
    assert set(conflict.candidate_ids) == {head.pk, approved.memory_id}

    other = MemoryFactory(subject=alice_subject, memory_key="health.walk", content="Walks.")
    rival = MemoryFactory(subject=alice_subject, memory_key="health.walk", content="Runs.")
    followed = conflict_open(
        tenant_id=tenant.id,
        subject_id=alice_subject.pk,
        memory_key="health.walk",
        place=ConflictPlace.of(other),
        candidate_ids=[other.pk, rival.pk],
    )
    stronger = pending_write_on(other, "Alice walks 5 km a day.")
    approved = review_approve(principal=principal, item_id=stronger.pk, reason="ok")
    followed.refresh_from_db()
    assert approved.memory_id in followed.candidate_ids  # the head's conflict followed it
    assert review_approval_conflict(principal=principal, item=approved) is None


@pytest.mark.parametrize("ended", ["valid_until", "retention"])
def test_the_queue_offers_only_a_rejection_of_a_write_that_went_out_of_use(
    reviewer_client, alice_subject, ended
):
    """A write out of use while it waited (past its valid_until, or its class's retention)
    cannot be approved (``review_expired``); its card still said "Approved, it becomes the
    next version of ..." and offered Approve (stop 49's review)."""
    now = timezone.now()
    head = MemoryFactory(subject=alice_subject, memory_key="health.diet", content="Eats anything.")
    then = now - timedelta(days=2 if ended == "valid_until" else 40)
    fields = {"created_at": then, "valid_from": then}
    if ended == "valid_until":
        fields["valid_until"] = now - timedelta(minutes=5)
    else:  # inferred, past the default policy's 30 days
        fields.update(authority="model_inference", source_type="model_inference", confidence=0.6)
    item = pending_write_on(head, "Has diabetes.", **fields)
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    card = body.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0]
    assert "so it can no longer be approved, only rejected" in card
    assert "Approved, it" not in card
    assert reverse("portal:review:approve", args=[item.pk]) not in card
    assert reverse("portal:review:reject", args=[item.pk]) in card


def _card_then_approve(reviewer_client, item):
    """Return ``item``'s card in the review queue, and the answer to an approval of it sent
    from that page (followed)."""
    body = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "ok"}, follow=True
    )
    return body.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0], response


def test_the_queue_offers_only_a_rejection_of_a_write_its_agents_grant_no_longer_allows(
    api_client, reviewer_client, agent
):
    """Stop 61's audit of reviewers: a write whose agent's grant was narrowed while it
    waited, so that admission refuses it now, cannot be approved (``review_grant_narrowed``):
    its card says so and offers Reject alone, as for a write out of use, and an approval
    sent all the same decides nothing and says why."""
    written = api_client.post(
        "/api/v1/memories",
        write_body(memory_key="health.notes", content="User has asthma, prefers indoors."),
        format="json",
    ).json()
    item = ReviewItem.objects.get(pk=written["review_item"])
    agent_grant_set(agent=agent, max_sensitivity="personal")

    card, response = _card_then_approve(reviewer_client, item)
    assert "the agent may no longer write memories this sensitive" in card
    assert "it can no longer be approved, only rejected" in card
    assert reverse("portal:review:approve", args=[item.pk]) not in card
    assert reverse("portal:review:reject", args=[item.pk]) in card
    assert "was narrowed while it waited for review" in response.content.decode()
    item.refresh_from_db()
    assert item.state == "open" and item.memory.status == "pending_approval"


def test_the_queue_offers_only_a_rejection_of_a_correction_of_a_memory_that_lost_a_conflict(
    api_client, reviewer_client, reviewer
):
    """Stop 62's audit of conflicts found that a correction without a key of a memory a
    reviewer revoked by choosing another in a conflict (``conflict_lost``) while it waited
    stood alone once approved, beside the memory chosen, with no conflict, and its card said
    it became a memory of its own. It cannot be approved now (``review_conflict_lost``): its
    card says so and offers Reject alone, and an approval sent all the same decides nothing
    and says why."""
    from tests.keyless.helpers import correction_waiting_on_a_lost_conflict

    waiting = correction_waiting_on_a_lost_conflict(api_client, reviewer)
    item = ReviewItem.objects.get(pk=waiting["review_item"])

    card, response = _card_then_approve(reviewer_client, item)
    assert "lost a conflict while it waited" in card
    assert "it can no longer be approved, only rejected" in card
    assert "Approved, it becomes a memory of its own" not in card
    assert reverse("portal:review:approve", args=[item.pk]) not in card
    assert reverse("portal:review:reject", args=[item.pk]) in card
    assert "lost a conflict while it waited" in response.content.decode()
    item.refresh_from_db()
    assert item.state == "open" and item.memory.status == "pending_approval"


def test_the_conflicts_page_offers_no_candidate_past_its_retention_as_a_winner(
    reviewer_client, alice_subject
):
    """docs/portal.md: only candidates in use can be chosen. One past its class's retention
    (episodic, 90 days by the default policy) was offered as the winner and counted in use,
    and Resolve then refused it (``winner_not_active``: stop 52's audit)."""
    episode = {
        "memory_type": "previous_decision",
        "memory_class": "episodic",
        "authority": "model_inference",
        "source_type": "model_inference",
        "confidence": 0.7,
    }
    old = MemoryFactory(
        subject=alice_subject, memory_key="deploy.region", content="eu-west-1", **episode
    )
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=120))
    fresh = MemoryFactory(
        subject=alice_subject, memory_key="deploy.region", content="us-east-1", **episode
    )
    ReviewItem.objects.create(
        tenant=alice_subject.tenant,
        subject=alice_subject,
        kind="conflict",
        memory_key="deploy.region",
        candidate_ids=[old.pk, fresh.pk],
    )
    page = reviewer_client.get(reverse("portal:review:conflicts"))
    html = page.content.decode()
    assert f'name="winner_id" value="{fresh.pk}"' in html
    assert f'name="winner_id" value="{old.pk}"' not in html
    assert page.context["items"][0].active_count == 1


def test_two_conflicts_on_one_key_have_resolve_controls_told_apart(reviewer_client, alice_subject):
    """docs/portal.md: each conflict's Resolve carries the item in its accessible name, and
    one key may have a conflict in each project. Both read "Resolve the conflict on
    deploy.region of …", both reasons "Reason for the conflict on deploy.region" (stop 52's
    audit): the place tells them apart now, and the subject the reasons of two people's."""
    for project in ("atlas", "orbit"):
        rows = [
            MemoryFactory(
                subject=alice_subject,
                memory_key="deploy.region",
                scope_kind="project",
                scope_ref=project,
                content=f"{project} {region}",
            )
            for region in ("eu-west-1", "us-east-1")
        ]
        ReviewItem.objects.create(
            tenant=alice_subject.tenant,
            subject=alice_subject,
            kind="conflict",
            memory_key="deploy.region",
            scope_kind="project",
            scope_ref=project,
            candidate_ids=[row.pk for row in rows],
        )
    html = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()

    def text(fragment):
        return " ".join(re.sub(r"<[^>]+>", "", fragment).split())

    buttons = re.findall(r'<button type="submit"[^>]*>(.*?)</button>', html, re.S)
    names = sorted(name for name in map(text, buttons) if name.startswith("Resolve"))
    reasons = sorted(map(text, re.findall(r'<label for="reason-[^"]+">(.*?)</label>', html, re.S)))
    who = alice_subject.external_id
    assert names == [
        f"Resolve the conflict on deploy.region in project:{p} of {who}" for p in ("atlas", "orbit")
    ]
    assert reasons == [
        f"Reason for the conflict on deploy.region in project:{p} of {who}"
        for p in ("atlas", "orbit")
    ]


def test_a_refused_reason_is_shown_on_its_write_after_another_reviewer_moved_it_a_page_up(
    reviewer_client, alice_subject
):
    """docs/portal.md: a reason the form refuses "shows the queue again, titled "Error:
    Pending writes", with the problem under that write's reason, which is marked invalid,
    described by it and focused". The view looked for the write on the page the form was sent
    from only: once another reviewer's decision moved it to the page before (the queue has
    more than one page left), the page with its field was not shown; the reviewer got a
    redirect and a message as if the write had been decided or withdrawn (stop 55's audit of
    the reviewer pages). The page the write is on now is shown (``queue_page_of``)."""
    start = timezone.now() - timedelta(days=1)
    items = []
    for n in range(101):
        item = pending_write(alice_subject, f"Sensitive write number {n}.")
        ReviewItem.objects.filter(pk=item.pk).update(created_at=start + timedelta(seconds=n))
        items.append(item)
    target = items[50]  # the first write of page 2
    page2 = reviewer_client.get(reverse("portal:review:queue") + "?page=2").content.decode()
    assert f'id="reason-{target.pk}"' in page2
    # Another reviewer decides the oldest write: the target is now the last write of page 1.
    ReviewItem.objects.filter(pk=items[0].pk).update(
        state="rejected", resolution="rejected", resolved_at=timezone.now()
    )
    url = reverse("portal:review:approve", args=[target.pk]) + "?page=2"
    response = reviewer_client.post(url, {"reason": "   "})
    assert response.status_code == 200, (response.status_code, response.get("Location"))
    body = response.content.decode()
    assert "<title>Error: Pending writes" in body
    assert f'id="reason-error-{target.pk}"' in body
    target.refresh_from_db()
    assert target.state == "open"


def test_an_incomplete_resolution_is_shown_on_its_conflict_after_another_moved_it_a_page_up(
    reviewer_client, alice_subject
):
    """docs/portal.md: "An incomplete resolution (no winner picked) shows the page again
    with the problem on that conflict, focused, and the reviewer's outcome, winner and reason
    kept." The same lookup on the sent page only: once a conflict before it was resolved, the
    conflict was on the page before, and the reviewer was redirected with "The resolution is
    incomplete (...)", the reason typed lost, and no conflict named (stop 55's audit of the
    reviewer pages)."""
    from tests.portal.test_review import conflict

    start = timezone.now() - timedelta(days=1)
    items = []
    for n in range(101):
        item = conflict(alice_subject, f"deploy.key{n:03d}", f"Value A{n}.", f"Value B{n}.")
        ReviewItem.objects.filter(pk=item.pk).update(created_at=start + timedelta(seconds=n))
        items.append(item)
    target = items[50]
    page2 = reviewer_client.get(reverse("portal:review:conflicts") + "?page=2").content.decode()
    assert f'id="conflict-{target.pk}"' in page2
    ReviewItem.objects.filter(pk=items[0].pk).update(
        state="resolved", resolution="ask_user", resolved_at=timezone.now()
    )
    url = reverse("portal:review:resolve", args=[target.pk]) + "?page=2"
    response = reviewer_client.post(
        url,
        {
            "outcome": "choose_winner",
            "reason": "typed reason kept",
            "candidate_ids": ",".join(str(c) for c in target.candidate_ids),
        },
    )
    assert response.status_code == 200, (response.status_code, response.get("Location"))
    body = response.content.decode()
    assert "<title>Error: Open conflicts" in body
    assert f'id="conflict-error-{target.pk}"' in body
    assert 'value="typed reason kept"' in body
    target.refresh_from_db()
    assert target.state == "open"


def test_an_approval_refused_as_changed_shows_the_write_on_the_page_it_is_on_now(
    reviewer_client, alice_subject, tenant, django_user_model
):
    """Stop 61's review: approving write 51 of 52 from page 2, refused as ``review_changed``
    after another reviewer's rejection moved it onto page 1, went back to page 2, which held
    it no more: the message said to look at what approving it does now, on no page shown."""
    start = timezone.now() - timedelta(hours=1)
    items = []
    for n in range(52):
        if n == 50:
            head = MemoryFactory(
                subject=alice_subject, memory_key="health.diet", content="Alice eats everything."
            )
            item = pending_write_on(head, "Alice has coeliac disease, eats no gluten.")
        else:
            item = pending_write(alice_subject, f"Alice takes medicine number {n}.")
        ReviewItem.objects.filter(pk=item.pk).update(created_at=start + timedelta(seconds=n))
        items.append(item)
    moved = items[50]
    sent = approval_sent_from(
        reviewer_client.get(reverse("portal:review:queue") + "?page=2").content.decode(), moved
    )
    other = django_user_model.objects.create_user("other-reviewer-same-tenant")
    review_reject(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=other.id),
        item_id=items[0].pk,
        reason="not needed",
    )
    next_version(head, "Alice is vegetarian now.")
    url = reverse("portal:review:approve", args=[moved.pk]) + "?page=2"
    response = reviewer_client.post(url, sent, follow=True)
    body = response.content.decode()
    assert f"Write {str(moved.pk)[:8]}: The memory this approval lands on changed" in body
    assert f'id="item-{moved.pk}"' in body
    assert "Alice is vegetarian now." in body  # what approving it does now
    assert ReviewItem.objects.get(pk=moved.pk).state == "open"


def test_a_changed_conflict_is_shown_on_the_page_it_is_on_now(reviewer_client, alice_subject):
    """Stop 61's second review: a resolution refused as ``conflict_changed`` went back to the
    page it was sent from (page 2), which another resolution had left without it; it goes to
    the page the conflict is on now, as a changed approval does."""
    items = [
        conflict(alice_subject, f"deploy.k{n:03d}", "Option 1.", "Option 2.") for n in range(101)
    ]
    target = items[50]  # the first of page 2 (50 a page, oldest first)
    shown = ",".join(str(pk) for pk in target.candidate_ids)
    ReviewItem.objects.filter(pk=items[0].pk).update(
        state="resolved", resolution="ask_user", resolved_at=timezone.now()
    )
    # A retrieval found a third candidate since the page was shown.
    extra = conflict_candidate(alice_subject, target.memory_key, "Option 3.")
    ReviewItem.objects.filter(pk=target.pk).update(candidate_ids=[*target.candidate_ids, extra.pk])
    answer = reviewer_client.post(
        reverse("portal:review:resolve", args=[target.pk]) + "?page=2",
        {
            "outcome": "choose_winner",
            "winner_id": str(target.candidate_ids[0]),
            "reason": "Option 1 was agreed.",
            "candidate_ids": shown,
        },
    )
    assert ReviewItem.objects.get(pk=target.pk).state == "open"
    assert answer["Location"] == reverse("portal:review:conflicts")  # page 1, where it is now


def resolved_message(client, item, body) -> str:
    """Send a resolution of ``item`` and return the messages of the page it lands on."""
    response = client.post(reverse("portal:review:resolve", args=[item.pk]), body, follow=True)
    return " ".join(str(message) for message in get_messages(response.wsgi_request))


def test_resolving_a_conflict_decided_meanwhile_says_by_whom_and_how(
    reviewer_client, reviewer, queues
):
    """Stop 68's audit of the portal: a resolution of a conflict another reviewer resolved
    while the page was open, or a second click on Resolve, answered with the service's "This
    conflict is already resolved.", which said neither by whom nor how, where a decision on a
    write says both (``ReviewDecideView.closed_meanwhile``): the reviewer could not tell
    whether what they meant was done."""
    from tests.portal.conftest import make_login

    item = queues["own_conflict"]
    shown = ",".join(str(pk) for pk in item.candidate_ids)
    choose = {
        "outcome": "choose_winner",
        "winner_id": str(item.candidate_ids[0]),
        "reason": "Ops confirmed",
        "candidate_ids": shown,
    }
    assert "Conflict resolved" in resolved_message(reviewer_client, item, choose)
    said = resolved_message(reviewer_client, item, choose)  # a second click
    short = str(item.pk)[:8]
    assert f"Nothing more was resolved on conflict {short}: you resolved it already" in said
    assert "(choose the winner)" in said

    other = make_login("second-reviewer", tenant=item.tenant, role="reviewer")
    other_client = Client()
    other_client.force_login(other)
    keep = {"outcome": "keep_both_scoped", "reason": "both hold", "candidate_ids": shown}
    said = resolved_message(other_client, item, keep)
    assert f"Nothing was resolved on conflict {short}: another reviewer resolved it" in said
    assert "(choose the winner)" in said
    item.refresh_from_db()
    assert (item.resolution, item.resolved_by_id) == ("choose_winner", reviewer.pk)


@pytest.mark.parametrize("reason", ["Ops confirmed", ""])
def test_resolving_a_conflict_that_closed_by_itself_does_not_call_it_resolved(
    reviewer_client, queues, reason
):
    """Stop 68's audit of the portal: once its person revoked one of two candidates, the
    conflict closed by itself (nothing is left to choose), and a reviewer's resolution from
    the page opened before was told "This conflict is already resolved.", of a conflict no
    one resolved; one without a reason was asked for the reason and the winner of it. Each
    now says that it closed, and why."""
    from memory_core.services.writes import memory_revoke

    item = queues["own_conflict"]
    owner = SubjectPrincipal(tenant_id=item.tenant_id, subject_id=item.subject_id, user_id=1)
    memory_revoke(principal=owner, memory_id=item.candidate_ids[0])
    item.refresh_from_db()
    assert (item.state, item.resolved_by_id) == ("resolved", None)

    said = resolved_message(
        reviewer_client,
        item,
        {
            "outcome": "choose_winner",
            "winner_id": str(item.candidate_ids[1]),
            "reason": reason,
            "candidate_ids": ",".join(str(pk) for pk in item.candidate_ids),
        },
    )
    short = str(item.pk)[:8]
    assert f"Nothing was resolved on conflict {short}: it closed meanwhile" in said
    assert "fewer than two of its candidates are still in use" in said
    assert "already resolved" not in said and "required" not in said, said
