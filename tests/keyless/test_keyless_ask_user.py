"""A keyless conflict resolved "ask the user", and a later correction of the same memory.

The conflict a later correction of lower authority opened was found by the open item citing
the chain's rows (``conflicts._keyless_conflict_open``), and the one resolved ``ask_user`` is
not open: the new item cited the memory and the new rival only, and left out the first rival,
which retrieval still measured against the memory (``keyless_rivals``). It now holds too the
rows still standing that the chain's ``ask_user`` conflicts cite, as a key's holds every head,
and decides them: retrieval reads the ``ask_user`` item no more (``_KEYLESS_CITED_SQL``).
Since stop 62 it holds the rows a conflict resolved "keep both" kept beside the memory too,
and a waiting correction of a memory that lost its conflict can no longer be approved.
"""

import importlib

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exceptions import Conflict
from memory_core.models import Memory, ReviewItem, Status
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.selectors.approvals import CONFLICT_LOST
from memory_core.selectors.portal import review_queue
from memory_core.services.conflicts import conflict_resolve, conflicts_heal_stale
from memory_core.services.reviews import review_approve
from tests.clients import client_for
from tests.factories import AgentFactory, SubjectFactory
from tests.keyless.helpers import HEAD, RIVAL, correct, deploy_question, keyless_incident
from tests.rls_support import run_as_a_migration

pytestmark = pytest.mark.django_db

SECOND = "Monday's deploy was rolled back: a failing database migration."
THIRD = "Monday's deploy was rolled back: the load balancer lost its certificate."
SENSITIVE_RIVAL = (
    "Monday's deploy was skipped: the release manager was in hospital with a heart attack."
)


@pytest.fixture
def reviewer_principal(tenant, reviewer):
    user = get_user_model().objects.get(username="reviewer")
    return ReviewerPrincipal(tenant_id=tenant.id, user_id=user.pk)


def _given(api_client) -> list[str]:
    return [item["content"] for item in deploy_question(api_client)["items"]]


def _first_conflict_asked(api_client, reviewer_principal) -> str:
    """The memory, its model's correction (a conflict), resolved "ask the user"; the memory's
    id."""
    head = keyless_incident(api_client, HEAD)
    correct(api_client, head, RIVAL)
    item = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer_principal, item_id=item.pk, outcome="ask_user", reason="a")
    return head


def test_choosing_a_keyless_winner_after_ask_user_leaves_no_second_rival_given(
    api_client, reviewer_principal
):
    """Stop 57's audit of reviews found that the second correction's conflict held the memory
    and that correction only: choosing the correction revoked the memory and left the first
    rival given beside the winner, two contradicting accounts of one incident. The new item
    now holds the first rival too, and choosing the second leaves it alone given."""
    head = _first_conflict_asked(api_client, reviewer_principal)
    second = correct(api_client, head, SECOND)["memory"]["id"]
    item = ReviewItem.objects.get(kind="conflict", state="open")
    rival = Memory.objects.get(content=RIVAL)
    assert {str(i) for i in item.candidate_ids} == {head, str(rival.pk), second}
    given = _given(api_client)
    assert HEAD in given and RIVAL not in given and SECOND not in given
    conflict_resolve(
        principal=reviewer_principal,
        item_id=item.pk,
        outcome="choose_winner",
        winner_id=second,
        reason="the rollback is right",
    )
    given = _given(api_client)
    assert given.count(SECOND) == 1
    assert HEAD not in given and RIVAL not in given, given
    rival.refresh_from_db()
    assert rival.status == "revoked"


def test_an_approved_keyless_correction_after_ask_user_conflicts_with_every_standing_rival(
    api_client, reviewer_principal
):
    """Stop 57's audit of reviews found the same through an approval: a sensitive correction
    of lower authority, approved after the first conflict was resolved "ask the user", opened
    an item that left out the first rival. The item now holds every row still standing beside
    the memory: the memory, the first rival and the approved correction."""
    head = _first_conflict_asked(api_client, reviewer_principal)
    waiting = correct(
        api_client,
        head,
        "Monday's deploy was rolled back: the on-call engineer had a diabetes emergency.",
        expect=202,
    )
    review_approve(principal=reviewer_principal, item_id=waiting["review_item"], reason="ok")
    item = ReviewItem.objects.get(kind="conflict", state="open")
    rival = Memory.objects.get(content=RIVAL)
    assert {str(i) for i in item.candidate_ids} == {head, str(rival.pk), waiting["memory_id"]}


def test_a_rival_no_longer_standing_is_not_taken_into_the_new_conflict(
    api_client, reviewer_principal
):
    """Only the rows still standing are taken in: a rival revoked since the reviewer asked
    is no candidate of the new item (one no longer in use cannot win)."""
    head = _first_conflict_asked(api_client, reviewer_principal)
    rival = Memory.objects.get(content=RIVAL)
    revoked = api_client.post(f"/api/v1/memories/{rival.pk}/revoke", {}, format="json")
    assert revoked.status_code == 200, revoked.json()
    second = correct(api_client, head, SECOND)["memory"]["id"]
    item = ReviewItem.objects.get(kind="conflict", state="open")
    assert {str(i) for i in item.candidate_ids} == {head, second}


@pytest.mark.parametrize(
    ("outcome", "winner", "given"),
    [
        ("keep_both_scoped", None, {HEAD, RIVAL, SECOND}),
        ("ask_user", None, {HEAD}),
        (None, None, {HEAD}),
        ("choose_winner", RIVAL, {RIVAL}),
    ],
    ids=["keep_both_scoped", "ask_user", "open", "choose_first_rival"],
)
def test_a_later_keyless_conflict_decides_what_the_ask_user_one_held_back(
    api_client, reviewer_principal, outcome, winner, given
):
    """Stop 57's audit of reviews found that once a second correction's item held the first
    rival too, retrieval still measured that rival against the memory by the first item,
    resolved "ask the user", whatever the reviewer did with the new one: kept beside the memory
    (``keep_both_scoped``) there, agents were never given it. An ``ask_user`` item now stops
    counting once a later keyless conflict cites one of its rows (that one holds every row
    still standing), as a key's newest item is the one read: kept, all three are given; asked
    again, or open, the memory alone; the first rival chosen, that one alone."""
    head = _first_conflict_asked(api_client, reviewer_principal)
    correct(api_client, head, SECOND)
    item = ReviewItem.objects.get(kind="conflict", state="open")
    if outcome is not None:
        winner_id = Memory.objects.get(content=winner).pk if winner else None
        conflict_resolve(
            principal=reviewer_principal,
            item_id=item.pk,
            outcome=outcome,
            winner_id=winner_id,
            reason="b",
        )
    found = _given(api_client)
    assert set(found) == given and len(found) == len(given), found


def test_rivals_kept_by_a_later_conflict_stay_given_while_the_next_is_open(
    api_client, reviewer_principal
):
    """The rows an ``ask_user`` conflict cites are read only while no later conflict followed
    it, as retrieval reads it: once a reviewer kept the first rival beside the memory in the
    second conflict, both rivals kept stay given while a third correction's conflict is open
    (the first rival, read by the ``ask_user`` item again, was held back once more while the
    second, kept in the same decision, was given). Since stop 62 that conflict holds both
    kept rivals too, as the rows a ``keep_both_scoped`` conflict kept beside the memory
    (``keyless_rivals_standing``), and retrieval keeps giving them until a reviewer decides
    it (``keyless_rivals``' ``kept``); the third alone is held back."""
    head = _first_conflict_asked(api_client, reviewer_principal)
    second = correct(api_client, head, SECOND)["memory"]["id"]
    item = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(
        principal=reviewer_principal, item_id=item.pk, outcome="keep_both_scoped", reason="b"
    )
    third = correct(api_client, head, THIRD)["memory"]["id"]
    item = ReviewItem.objects.get(kind="conflict", state="open")
    rival = str(Memory.objects.get(content=RIVAL).pk)
    assert {str(i) for i in item.candidate_ids} == {head, rival, second, third}
    given = _given(api_client)
    assert {HEAD, RIVAL, SECOND} <= set(given) and THIRD not in given, given


def _kept_both(api_client, reviewer_principal):
    """Two conflicts of one memory: the first resolved "ask the user", the second (holding
    both rivals) kept beside the memory; the memory and the two items."""
    head = keyless_incident(api_client, HEAD)
    correct(api_client, head, RIVAL)
    first = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer_principal, item_id=first.pk, outcome="ask_user", reason="a")
    correct(api_client, head, SECOND)
    later = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(
        principal=reviewer_principal, item_id=later.pk, outcome="keep_both_scoped", reason="b"
    )
    given = _given(api_client)
    assert {HEAD, RIVAL, SECOND} <= set(given), given
    return head, first, later


def test_a_new_version_of_the_kept_rival_does_not_revive_the_ask_user_item(
    api_client, reviewer_principal
):
    """Stop 57's review of its own fixes found that a rule reading what the later item holds
    now revived the ``ask_user`` item a reviewer's later decision had settled: the reviewer
    kept the first rival and the second correction beside the memory; a new version of the
    first rival is followed into the ``ask_user`` item (``conflicts_follow_successor``), not
    into the resolved later one, and was held back while the second, kept by the same
    decision, was given. The item stays taken over, by ids (``ASK_USER_FOLLOWED_SQL``), and
    since stop 58 a taken-over item follows no chain: it keeps the ids it shares with the
    later one."""
    head, first, later = _kept_both(api_client, reviewer_principal)
    held = set(first.candidate_ids)
    rival = Memory.objects.get(content=RIVAL, status="active")
    newer = "Monday's deploy was skipped: the release manager cancelled it for the holiday."
    newer_id = correct(api_client, str(rival.pk), newer)["memory"]["id"]
    first.refresh_from_db()
    later.refresh_from_db()
    # Neither the taken-over ask_user item nor the resolved later one followed the chain.
    assert set(first.candidate_ids) == held
    assert newer_id not in {str(i) for i in later.candidate_ids}
    assert ReviewItem.objects.filter(kind="conflict").count() == 2
    given = _given(api_client)
    assert HEAD in given and SECOND in given, given
    assert newer in given, given


def test_a_users_new_version_of_the_memory_does_not_revive_the_ask_user_item(
    api_client, reviewer_principal
):
    """The same through the memory itself (stop 57's review): its user writes a new version of
    it, which the ``ask_user`` item followed and the resolved later one did not; the first
    rival, kept by the reviewer, was held back again while the second was given. Taken over,
    the item follows it no more (stop 58)."""
    head, first, later = _kept_both(api_client, reviewer_principal)
    held = set(first.candidate_ids)
    newer = "Atlas deploy failed on Monday: disk full on the build host (a 20 GB log)."
    correct(api_client, head, newer, source_type="user_input")
    first.refresh_from_db()
    later.refresh_from_db()
    assert set(first.candidate_ids) == held
    assert ReviewItem.objects.filter(kind="conflict").count() == 2
    given = _given(api_client)
    assert newer in given, given
    assert (RIVAL in given) == (SECOND in given), given


def test_new_versions_of_both_ask_user_rows_do_not_revive_it(api_client, reviewer_principal):
    """Stop 58's audit of conflicts found that the ``ask_user`` item, taken over by a later
    one that kept both rivals beside the memory, went on following new versions of its rows
    while the resolved later one did not: once the first rival and then the memory had new
    versions, the two items shared no id, the ``ask_user`` item counted again, and the first
    rival's new version was dropped (``lost_conflict:authority_class``) while the second
    rival was given. A taken-over item follows no chain now, nor does the retention sweep's
    mend move it (``conflicts_heal_stale``), and both rivals stay given."""
    head, first, _ = _kept_both(api_client, reviewer_principal)
    held = set(first.candidate_ids)
    rival = Memory.objects.get(content=RIVAL, status="active")
    newer_rival = "Monday's deploy was skipped: the release manager cancelled it for the holiday."
    correct(api_client, str(rival.pk), newer_rival)
    newer_head = "Atlas deploy failed on Monday: disk full on the build host (a 20 GB log)."
    correct(api_client, head, newer_head, source_type="user_input")
    assert conflicts_heal_stale() == 0
    first.refresh_from_db()
    assert set(first.candidate_ids) == held
    answer = deploy_question(api_client)
    given = [item["content"] for item in answer["items"]]
    stages = api_client.get(f"/api/v1/traces/{answer['trace_id']}").json()["stages"]
    newer_id = str(Memory.objects.get(content=newer_rival).pk)
    reasons = [r["reason"] for r in stages["rejections"] if r["id"] == newer_id]
    assert newer_head in given and SECOND in given, given
    assert newer_rival in given, (given, reasons)


def test_a_rival_kept_both_is_not_left_beside_a_later_winner(api_client, reviewer_principal):
    """Stop 62's audit of conflicts found that a keyless conflict resolved ``keep_both_scoped``
    was left out of the chain's next conflict (only the rows of ``ask_user`` items were taken
    in): the second correction's item held the memory and the new rival only, and choosing
    the new rival revoked the memory while the first rival, kept beside it, stayed given
    beside the winner, two contradicting accounts of one incident with no conflict open. The
    new item holds the kept rival too (``keyless_rivals_standing``), as a key's holds every
    head; while it is open, agents are still given what the reviewer kept, and choosing the
    new rival revokes both."""
    head = keyless_incident(api_client, HEAD)
    correct(api_client, head, RIVAL)
    first = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer_principal, item_id=first.pk, outcome="keep_both_scoped",
                     reason="Both accounts hold.")  # fmt: skip
    assert set(_given(api_client)) == {HEAD, RIVAL}

    second = correct(api_client, head, SECOND)["memory"]["id"]
    item = ReviewItem.objects.get(kind="conflict", state="open")
    rival = Memory.objects.get(content=RIVAL)
    assert {str(i) for i in item.candidate_ids} == {head, str(rival.pk), second}
    assert set(_given(api_client)) == {HEAD, RIVAL}
    conflict_resolve(principal=reviewer_principal, item_id=item.pk, outcome="choose_winner",
                     winner_id=second, reason="The rollback is what happened.")  # fmt: skip

    assert _given(api_client) == [SECOND]
    rival.refresh_from_db()
    assert rival.status == Status.REVOKED


def _correction_waiting_on_the_loser(api_client, reviewer_principal):
    """Return (the incident, its rival, the answer to the rival's sensitive correction) once
    the reviewer chose the incident over the rival while the correction waited."""
    head = keyless_incident(api_client, HEAD)
    rival = correct(api_client, head, RIVAL)["memory"]["id"]
    waiting = correct(api_client, rival, SENSITIVE_RIVAL, sensitivity="sensitive", expect=202)
    conflict = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer_principal, item_id=conflict.pk, outcome="choose_winner",
                     winner_id=head, reason="The build host's disk was full.")  # fmt: skip
    return head, rival, waiting


def test_a_losers_waiting_correction_can_no_longer_be_approved(api_client, reviewer_principal):
    """Stop 62's audit of conflicts found that once a reviewer chose the memory over its
    keyless rival (revoked, ``conflict_lost``), approving the rival's correction that was
    waiting for a reviewer stored it active on no head (``approval_head`` finds none for a
    keyless write whose chain is revoked), with no conflict: agents were given the model's
    disputed account again beside the memory the reviewer chose. A key's approval lands on
    the winner and stands beside it in a conflict; without a key there is no head to land
    on, so the approval is refused (409 ``review_conflict_lost``), nothing changes, and the
    write can only be rejected."""
    head, rival, waiting = _correction_waiting_on_the_loser(api_client, reviewer_principal)
    assert Memory.objects.get(pk=rival).status == Status.REVOKED
    assert _given(api_client) == [HEAD]

    with pytest.raises(Conflict) as refused:
        review_approve(principal=reviewer_principal, item_id=waiting["review_item"],
                       reason="The words are accurate.")  # fmt: skip

    assert refused.value.code == "review_conflict_lost"
    assert "lost a conflict while it waited" in refused.value.message
    assert Memory.objects.get(pk=waiting["memory_id"]).status == Status.PENDING_APPROVAL
    assert ReviewItem.objects.get(pk=waiting["review_item"]).state == "open"
    assert _given(api_client) == [HEAD]


def test_deleting_the_losing_memory_does_not_make_its_correction_approvable(
    api_client, reviewer_principal
):
    """Stop 62's audit of reviewer flows found that once the person deleted the revoked
    loser (a memory not in use, which the portal offers to delete), its waiting correction
    could be approved again: ``chains_lost`` read the loser's status, "deleted" and no
    longer "revoked", and the deletion's worker took its id out of the item, so the approval
    found nothing lost and put the disputed account back beside the winner. The resolution
    now records the loss on the waiting item (rule code ``conflict_lost``), which survives
    the worker's scrub, and a loser deleted since counts as revoked (for an item waiting from
    before). The approval is refused before and after the worker, and the queue says the
    write can only be rejected."""
    head, rival, waiting = _correction_waiting_on_the_loser(api_client, reviewer_principal)
    item = ReviewItem.objects.get(pk=waiting["review_item"])
    assert CONFLICT_LOST in item.rule_codes

    loser = Memory.objects.get(pk=rival)
    person = SubjectPrincipal(tenant_id=loser.tenant_id, subject_id=loser.subject_id, user_id=None)
    operation = deletion_request(principal=person, memory_id=rival)

    def refused() -> str:
        with pytest.raises(Conflict) as refusal:
            review_approve(principal=reviewer_principal, item_id=item.pk,
                           reason="The words are accurate.")  # fmt: skip
        return refusal.value.code

    # Before the worker, by the loser's status alone too (an item waiting from before the
    # resolution recorded the loss on it).
    ReviewItem.objects.filter(pk=item.pk).update(rule_codes=["sensitivity.review_required"])
    assert refused() == "review_conflict_lost"
    ReviewItem.objects.filter(pk=item.pk).update(rule_codes=[*item.rule_codes])

    assert deletion_run(operation_id=operation.pk) == "completed"
    item.refresh_from_db()
    assert (item.state, item.candidate_ids) == ("open", [])
    assert refused() == "review_conflict_lost"
    assert Memory.objects.get(pk=waiting["memory_id"]).status == Status.PENDING_APPROVAL
    assert _given(api_client) == [HEAD]
    (card,) = review_queue(principal=reviewer_principal).items
    assert (card.conflict_lost, card.lands_on) == (True, None)
    reviewers = Client()
    reviewers.force_login(get_user_model().objects.get(pk=reviewer_principal.user_id))
    queue = reviewers.get(reverse("portal:review:queue")).content.decode()
    assert "The memory it corrected, deleted since, lost a conflict while it waited" in queue


def test_migration_0049_marks_a_losers_correction_waiting_from_before_stop_62(
    api_client, reviewer_principal
):
    """Left open at stop 62: a keyless correction waiting on a memory that lost a conflict
    before stop 62's fix held no ``conflict_lost``, and once the deletion's worker took the
    deleted loser's id out of its item it could be approved again. Migration 0049 marks such
    items as the resolution now does (the chain's newest version revoked ``conflict_lost``),
    once; a correction waiting on the winner stays unmarked."""
    head, _rival, waiting = _correction_waiting_on_the_loser(api_client, reviewer_principal)
    on_the_winner = correct(api_client, head, "Disk full on the build host at 09:10.",
                            sensitivity="sensitive", expect=202)  # fmt: skip
    lost = ReviewItem.objects.filter(pk=waiting["review_item"])
    before_stop_62 = [code for code in lost.get().rule_codes if code != CONFLICT_LOST]
    lost.update(rule_codes=before_stop_62)
    mark = importlib.import_module(
        "memory_core.migrations.0049_keyless_corrections_conflict_lost"
    ).MARK_LOST

    run_as_a_migration(mark)
    run_as_a_migration(mark)

    assert lost.get().rule_codes == [*before_stop_62, CONFLICT_LOST]
    assert CONFLICT_LOST not in ReviewItem.objects.get(pk=on_the_winner["review_item"]).rule_codes


def test_every_rival_kept_both_stays_given_while_a_later_conflict_is_open(
    api_client, reviewer_principal
):
    """Stop 62's review: ``keyless_rivals`` kept the rows of one set a reviewer resolved
    ``keep_both_scoped`` (the first in the query's order), not of every such set holding
    the memory. Kept both twice (the first rival, then a second correction beside both), a
    third correction's open conflict had agents given the memory and the first rival only,
    the second correction held back. Every row a reviewer kept stays given until the open
    conflict is decided; only the third, undecided, is held back."""
    head = keyless_incident(api_client, HEAD)
    correct(api_client, head, RIVAL)
    first = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer_principal, item_id=first.pk, outcome="keep_both_scoped",
                     reason="Both accounts hold.")  # fmt: skip
    correct(api_client, head, SECOND)
    second = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer_principal, item_id=second.pk,
                     outcome="keep_both_scoped", reason="All three hold.")  # fmt: skip
    assert set(_given(api_client)) == {HEAD, RIVAL, SECOND}

    correct(api_client, head, THIRD)
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1

    given = set(_given(api_client))
    assert given == {HEAD, RIVAL, SECOND}, given


@pytest.mark.parametrize("outcome", ["ask_user", "keep_both_scoped"])
def test_a_keyless_correction_never_stands_in_conflict_with_a_rival_above_its_grant(
    tenant, reviewer_principal, outcome
):
    """Stop 62's audit of isolation: a narrow agent's keyless correction of lower authority
    opened a conflict taking in the rival an earlier conflict (resolved ask_user or keep
    both) held, though that rival is above the agent's maximum sensitivity
    (``keyless_rivals_standing``, unfiltered), so a reviewer choosing the narrow write
    revoked a memory its writer may not see. As a key's write takes only the heads its
    writer reads, a keyless one takes only the rivals its writer reads (``within_grant``)."""
    SubjectFactory(tenant=tenant, external_id="user-1")
    wide = client_for(AgentFactory(tenant=tenant))
    head = keyless_incident(wide, HEAD)
    # A sensitive rival of lower authority, approved by a reviewer: a keyless conflict.
    waiting = correct(wide, head, SENSITIVE_RIVAL, expect=202)
    review_approve(principal=reviewer_principal, item_id=waiting["review_item"], reason="ok")
    rival = waiting["memory_id"]
    assert Memory.objects.get(pk=rival).sensitivity == "sensitive"
    item = ReviewItem.objects.get(kind="conflict", state="open")
    assert rival in {str(i) for i in item.candidate_ids}
    conflict_resolve(principal=reviewer_principal, item_id=item.pk, outcome=outcome, reason="a")
    narrow = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    assert narrow.get(f"/api/v1/memories/{rival}").status_code == 404
    correct(narrow, head, SECOND)
    opened = ReviewItem.objects.get(kind="conflict", state="open")
    assert rival not in {str(i) for i in opened.candidate_ids}
