"""Conflicts between memories on one memory_key: opened by retrieval, resolved by a person.

Retrieval (stage 8) hands an unresolved high-impact conflict back to the agent as a
clarification and calls ``conflict_open``; a write of lower authority than the key's head opens
one too. A conflict has a place: the key, and the scope and environment of its most specific
candidates (``retrieval.conflicts.conflict_place``). One ReviewItem(kind=conflict) is open per
tenant, subject, key and place (a database constraint); requests in two projects (or two
environments) that each see a conflict on one key have an item each. A conflict of memories
without a key is the open item citing its rows, else a new one that holds too the rivals its
conflicts resolved ``ask_user`` or ``keep_both_scoped`` still cite
(``_keyless_conflict_open``). Requests at one place that see different rows (agents with other
grants) share it: it holds every active row any of them saw, so one decision covers them all.

``conflict_resolve`` closes it with one of three outcomes:

- ``choose_winner``: the winner stays active; every other candidate still in use is revoked
  (reason ``conflict_lost``, with an event), and so is each copy of one that retrieval's
  dedup folds into it (``_folded_copies``), so the next retrieval returns the winner. The
  winner must itself still be in use (``policy_check.InUse``: active, and past neither its
  valid_until nor its class's retention under the tenant's active policy) and in effect (its
  valid_from passed); 409 ``winner_not_active`` otherwise, nothing changed. Nor may it reach
  fewer agents than a candidate it revokes (``_refuse_narrower``): 409 ``winner_narrower``.
- ``keep_both_scoped``: every candidate stays; retrieval keeps all of them while the group is
  among these rows (for rows that apply in different contexts). Every set kept at a place
  counts, not only the last. A new version of a kept row on a key opens the conflict again
  beside the rows kept with it (``conflicts_reopen_kept``).
- ``ask_user``: nothing changes; retrieval keeps answering with the clarification, pointing at
  this item, until a row outside its candidates joins the group (e.g. the user corrects one
  through the portal).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from memory_core.admission.normalize import is_blank
from memory_core.commit_hooks import after_commit
from memory_core.exceptions import Conflict, NotFound, PermissionDenied, ValidationFailed
from memory_core.locks import lock_memory_keys, subjects_shared_locked
from memory_core.models import (
    MAX_REVIEW_REASON_CHARS,
    PROPOSED_STATUSES,
    Memory,
    MemoryEvent,
    ReviewItem,
    Status,
    Subject,
)
from memory_core.models.choices import sensitivities_up_to
from memory_core.policy_check import STATE_WORDS, InUse
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal, SystemPrincipal
from memory_core.retrieval.conflicts import ASK_USER_FOLLOWED_SQL
from memory_core.retrieval.policy import RetrievalPolicy
from memory_core.retrieval.types import ConflictPlace
from memory_core.rls import request_tenant_set, tenant_atomic
from memory_core.selectors.approvals import (
    CONFLICT_LOST,
    agents_reaching,
    in_use_now,
    keyless_rivals_standing,
    newest_versions,
    open_writes,
)
from memory_core.selectors.policy import active_retrieval_policy
from memory_core.services.revocations import memory_revocation_journal_on_commit

logger = logging.getLogger(__name__)

OUTCOMES = ReviewItem.CONFLICT_OUTCOMES
# Inserts of a first open before giving up (``conflict_open``): each failed one found no item
# to join in its place, a reviewer having resolved another call's at once each time.
OPEN_ATTEMPTS = 3
# The actor of the events of a conflict's rows a mend adds (``conflicts_heal``).
MEND = "conflict_mend"


@dataclass
class ConflictState:
    """A key's review state at one place, as retrieval needs it."""

    # The open item there, or else the most recently resolved one.
    current: ReviewItem | None = None
    # Every set of rows a reviewer resolved there as ``keep_both_scoped``: a group within any
    # of them is kept.
    kept: set[frozenset[str]] = field(default_factory=set)
    # Every item a reviewer resolved there as ``ask_user``, newest first: a clarification
    # about rows within one of them points at it (``asked_about``).
    asked: list[ReviewItem] = field(default_factory=list)

    def asked_about(self, ids) -> ReviewItem | None:
        """Return the newest item resolved ``ask_user`` here that holds every row of ``ids``,
        or None.

        Every one counts, not only the newest item of the place: once another conflict there
        was resolved (a write of lower authority a reviewer settled by keeping the head), the
        next retrieval opened a new item for the very rows a reviewer had resolved "ask the
        user", back in the reviewers' queue (stop 62's audit of conflicts)."""
        wanted = {str(i) for i in ids}
        return next(
            (item for item in self.asked if {str(i) for i in item.candidate_ids} >= wanted), None
        )


def conflict_lookup(
    *, tenant_id, subject_id, groups: dict[str, ConflictPlace]
) -> dict[str, ConflictState]:
    """Return, per key of ``groups``, the review state at the group's place (one query)."""
    items = ReviewItem.objects.filter(
        tenant_id=tenant_id,
        subject_id=subject_id,
        kind=ReviewItem.Kind.CONFLICT,
        memory_key__in=list(groups),
    ).order_by("memory_key", "-created_at")
    found: dict[str, ConflictState] = {}
    for item in items:
        if ConflictPlace.of(item) != groups[item.memory_key]:
            continue  # the same key's conflict at another place: another request's
        state = found.setdefault(item.memory_key, ConflictState())
        if state.current is None or (item.state == "open" and state.current.state != "open"):
            state.current = item
        if item.state == "resolved" and item.resolution == "keep_both_scoped":
            state.kept.add(frozenset(str(i) for i in item.candidate_ids))
        if item.state == "resolved" and item.resolution == "ask_user":
            state.asked.append(item)
    return found


@transaction.atomic
def conflict_open(
    *,
    tenant_id,
    subject_id,
    memory_key: str,
    place: ConflictPlace,
    candidate_ids: list,
    actor_id: str = "retrieval",
    use: InUse | None = None,
    within_grant: Callable | None = None,
) -> ReviewItem | None:
    """Return the open conflict item for the key at ``place``, creating it (with events) if
    there is none, and adding to it the rows of ``candidate_ids`` it does not hold yet; None
    when there is none and fewer than two of those rows are still in use (``_in_use``).

    The item is read without a lock first. Most calls (every retrieval after the first to see
    the conflict) find it holding every row and write nothing, so they lock nothing: a row
    lock held until a retrieval commits is what two retrievals of one subject deadlocked on,
    each holding one key's item and waiting for the other's. Only rows to add lock the item
    (``FOR UPDATE``, held until commit), and the check is made again on the locked row, which
    a concurrent call may have changed. Two first opens are kept apart by the constraint
    ``review_one_open_conflict_per_place``: the second insert waits for the first transaction
    to end, fails, and joins the item the first one committed. ``actor_id``: the part of
    memledger that saw the conflict, which its events name (``_conflict_events``).

    Only rows still in use are opened or added (``use``: what is in use, the tenant's now
    without it). A retrieval reads a key's rows without the key's lock: a reviewer choosing
    a winner between its read and this call revoked the loser and closed the item, and the
    retrieval opened a new item citing the winner and the revoked loser, back in the
    reviewers' queue with nothing to choose (stop 58's audit of races). Writes and approvals
    hold the key's lock and pass the ``use`` they read their rows by: they always get an item.

    ``within_grant``: for a write or an approval, a function that limits a queryset of
    memories to those its writer may read; a new keyless item takes in only those of the
    rows its chain's resolved conflicts still cite (``_keyless_conflict_open``), as a key's
    writes pass only the heads their writer reads in ``candidate_ids``.
    """
    ids = sorted(str(i) for i in candidate_ids)
    if not memory_key:
        return _keyless_conflict_open(
            tenant_id=tenant_id,
            subject_id=subject_id,
            place=place,
            ids=ids,
            actor_id=actor_id,
            within_grant=within_grant,
        )
    identity = {
        "tenant_id": tenant_id,
        "subject_id": subject_id,
        "kind": ReviewItem.Kind.CONFLICT,
        "state": ReviewItem.State.OPEN,
        "memory_key": memory_key,
        **place._asdict(),
    }
    items = ReviewItem.objects.filter(**identity)
    item = items.first()
    if item is not None and {str(i) for i in item.candidate_ids}.issuperset(ids):
        return item
    ids = _current_versions(tenant_id, ids)
    # Every path from here locks the item until this transaction ends (it opens it, or locks
    # it to add rows, or finds another call's committed item in its place): a mend after
    # another's commit skips a locked item, so this one looks again after its own.
    conflicts_heal_on_commit(tenant_id=tenant_id, memory_ids=ids)
    if item is not None:
        # None if a resolution closed the item since it was read: a new one is opened, as
        # when there was none.
        item = items.select_for_update().first()
    use = use or in_use_now(tenant_id)
    for attempt in range(OPEN_ATTEMPTS):
        if item is not None:
            break
        # Read after the item's lock, or after finding none open: a resolution that closed
        # it has committed by then, and its revokes are seen.
        ids = _in_use(tenant_id, ids, use)
        if len(ids) < 2:
            return None  # settled since the caller read its rows: nothing to choose
        try:
            with transaction.atomic():
                item = ReviewItem.objects.create(
                    **identity, candidate_ids=ids, rule_codes=["unresolved_high_impact_conflict"]
                )
        except IntegrityError:
            # A concurrent call opened it first, and has committed: join it. None when there
            # is no such item: the tenant was deleted meanwhile (the trigger refused the insert:
            # raised, a 410 ``tenant_deleted``, where ``.get()`` was a 500: stop 52's audit),
            # or a reviewer resolved the other call's item already (opened again).
            item = items.select_for_update().first()
            if item is None and attempt == OPEN_ATTEMPTS - 1:
                raise
        else:
            _conflict_events(item, ids, actor_id=actor_id)
            return item
    return _joined(item, _in_use(tenant_id, ids, use), actor_id=actor_id)


def _in_use(tenant_id, ids: list[str], use: InUse) -> list[str]:
    """Return the rows of ``ids`` still in use under ``use`` (active, and past neither their
    valid_until nor their class's retention), sorted, as stored: the rows a reviewer may
    still choose among, as ``conflict_resolve`` and ``conflicts_close_settled`` count them."""
    rows = Memory.objects.filter(tenant_id=tenant_id, pk__in=ids, status=Status.ACTIVE)
    return sorted(str(pk) for pk in rows.not_ended(use).values_list("pk", flat=True))


def _joined(item: ReviewItem, ids: list[str], *, actor_id: str) -> ReviewItem:
    """Return the open ``item`` holding the rows of ``ids`` too (``_conflict_join``)."""
    held = {str(i) for i in item.candidate_ids}
    if not held.issuperset(ids):
        _conflict_join(item, held, ids, actor_id=actor_id)
    return item


def _keyless_conflict_open(
    *, tenant_id, subject_id, place, ids, actor_id, within_grant=None
) -> ReviewItem:
    """``conflict_open`` for memories without a key (a correction of lower authority of a
    keyless memory): the open item citing one of their rows, else a new one.

    Keyless memories share no key, so a place does not tell their conflicts apart: two
    incidents' corrections at one place shared an item, and a reviewer choosing a winner in
    it revoked the other incident's rows too (stop 53's "Left open"). The item is the
    chain's, found by its rows. Its callers (a write, a correction, an approval) hold the
    subject's keyless lock (``locks.lock_memory_keys``), which keeps two opens of one chain's
    conflict in turn, as the constraint does a key's.

    A new item holds too the rows still standing that the chain's conflicts resolved
    ``ask_user`` or ``keep_both_scoped`` cite (``keyless_rivals_standing``), as a key's holds
    every head: opened with the new rival alone, choosing it revoked the chain's row and left
    the first rival given beside it (stop 57's audit of reviews; of a rival kept both, stop
    62's audit of conflicts). Of those, only the rows its writer may read (``within_grant``):
    a write never stands in conflict with a memory above its grant, whose revocation a
    reviewer choosing the write's side would be (stop 62's audit of isolation).
    """
    ids = _current_versions(tenant_id, ids)
    conflicts_heal_on_commit(tenant_id=tenant_id, memory_ids=ids)
    identity = {
        "tenant_id": tenant_id,
        "subject_id": subject_id,
        "kind": ReviewItem.Kind.CONFLICT,
        "state": ReviewItem.State.OPEN,
        "memory_key": "",
        **place._asdict(),
    }
    item = (
        ReviewItem.objects.select_for_update()
        .filter(**identity, candidate_ids__overlap_array=ids)
        .order_by("created_at", "pk")
        .first()
    )
    if item is None:
        standing = keyless_rivals_standing(
            tenant_id=tenant_id, subject_id=subject_id, memory_ids=ids
        )
        if within_grant is not None and standing:
            rows = within_grant(Memory.objects.filter(tenant_id=tenant_id, pk__in=standing))
            standing = [str(pk) for pk in rows.values_list("pk", flat=True)]
        ids = sorted({*ids, *standing})
        item = ReviewItem.objects.create(
            **identity, candidate_ids=ids, rule_codes=["unresolved_high_impact_conflict"]
        )
        _conflict_events(item, ids, actor_id=actor_id)
        return item
    return _joined(item, ids, actor_id=actor_id)


def _current_versions(tenant_id, ids: list[str]) -> list[str]:
    """Return ``ids`` with each row superseded since it was read replaced by its chain's
    newest version (sorted, as stored).

    A retrieval reads a key's rows, and a write may supersede one before the retrieval opens
    the conflict (nothing orders the two: the retrieval holds the subject's lock shared): the
    item then cited the superseded row, and a reviewer choosing the other revoked nothing
    while the new version stayed in use. Rows retired otherwise stay: the item's own rules
    (``_conflict_join``, the retention sweep) take them out.
    A write committed after this read and before the caller's commit is caught by whichever
    of the two commits last (``conflicts_heal_on_commit``).
    """
    rows = dict(Memory.objects.filter(tenant_id=tenant_id, pk__in=ids).values_list("pk", "status"))
    current = set()
    for memory_id, status in rows.items():
        while status == Status.SUPERSEDED:
            successor = (
                Memory.objects.filter(tenant_id=tenant_id, supersedes_id=memory_id)
                .exclude(status__in=PROPOSED_STATUSES)
                .values_list("pk", "status")
                .first()
            )
            if successor is None:
                break
            memory_id, status = successor
        current.add(str(memory_id))
    return sorted(current | {i for i in ids if uuid.UUID(i) not in rows})


def _conflict_join(item: ReviewItem, held: set[str], ids: list[str], *, actor_id: str) -> None:
    """Add the rows of ``ids`` to the open ``item``, dropping the rows it held that are no
    longer active.

    Requests at one place may see different rows (agents with other grants, each with a
    private rival): the item holds every row any of them saw, so a reviewer decides on all
    of them at once, and one request no longer takes the candidates another gave it. A row
    retired since (superseded by a correction, say) leaves with the change.
    """
    active = Memory.objects.filter(
        tenant_id=item.tenant_id, pk__in=sorted(held), status=Status.ACTIVE
    ).values_list("pk", flat=True)
    item.candidate_ids = sorted({str(pk) for pk in active} | set(ids))
    item.save(update_fields=["candidate_ids"])
    _conflict_events(item, [i for i in ids if i not in held], actor_id=actor_id)


def _conflict_events(item: ReviewItem, ids, *, actor_id: str) -> None:
    """Record that each memory of ``ids`` is a candidate of the conflict ``item``: by
    memledger's part that cited it (``actor_id``: ``retrieval``, ``admission``, ``review`` or
    ``conflict_mend``), under the policy the memory was written under, as a resolution's
    events record it (``_policy_versions``). Every mend was "retrieval" and no event had a
    policy version (stop 52's audits)."""
    ids = list(ids)
    if not ids:
        return
    policy_versions = _policy_versions(item.tenant_id, ids)
    MemoryEvent.objects.bulk_create(
        [
            MemoryEvent(
                tenant_id=item.tenant_id,
                memory_id=memory_id,
                action=MemoryEvent.Action.CONFLICT,
                actor_type=MemoryEvent.ActorType.SYSTEM,
                actor_id=actor_id,
                reason_code="unresolved_high_impact_conflict",
                policy_version=policy_versions.get(str(memory_id)),
                details={"review_item": str(item.id)},
            )
            for memory_id in ids
        ]
    )


def _check_principal(principal, item: ReviewItem) -> None:
    if isinstance(principal, (ReviewerPrincipal, SystemPrincipal)):
        return
    if isinstance(principal, SubjectPrincipal) and principal.subject_id == item.subject_id:
        return
    raise PermissionDenied("Only a reviewer or the person concerned resolves a conflict.")


def conflicts_close_settled(
    *, tenant_id, memory_ids: list = (), reason_code: str, now, except_item=None, item_ids=None
) -> None:
    """Close the open conflicts citing ``memory_ids`` (just retired: revoked, expired) that
    they leave with fewer than two candidates in use: nothing is left for a reviewer to
    choose. The item is closed with the retirement's reason code (not a reviewer's outcome);
    one that still has two or more active candidates stays open. ``except_item``: the item a
    resolution is closing itself, with its own outcome. ``item_ids``: those items instead of
    the ones citing ``memory_ids`` (a deletion's, which no longer cite the deleted ids).
    """
    # skip_locked: conflict_resolve locks the item before the memories, a retirement the
    # other way round; an item a reviewer is resolving right now is left to that resolution
    # (which then finds the memory retired) instead of deadlocking with it. The retention
    # sweep closes whatever is left (resolution ``settled``).
    cited = (
        Q(pk__in=list(item_ids))
        if item_ids is not None
        else Q(candidate_ids__overlap_array=list(memory_ids))
    )
    items = list(
        ReviewItem.objects.select_for_update(skip_locked=True)
        .filter(
            cited, tenant_id=tenant_id, kind=ReviewItem.Kind.CONFLICT, state=ReviewItem.State.OPEN
        )
        .exclude(pk=except_item)
    )
    # In use as a resolution reads it (``InUse``): one past its valid_until or its class's
    # retention keeps the status "active" until the sweep, and counted, it kept open a conflict
    # left with one candidate to choose (stop 52's audit).
    use = in_use_now(tenant_id, now) if items else None
    for item in items:
        rows = Memory.objects.filter(
            tenant_id=tenant_id, pk__in=item.candidate_ids, status=Status.ACTIVE
        )
        active = sum(1 for row in rows if use.holds(row))
        if active < 2:
            item.state = ReviewItem.State.RESOLVED
            item.resolution = reason_code
            item.resolved_at = now
            item.save(update_fields=["state", "resolution", "resolved_at"])


def conflicts_follow_successor(*, previous: Memory, successor: Memory) -> None:
    """Let the open conflicts citing ``previous`` cite ``successor`` instead.

    A conflict stands between chains; when a correction or an approved write moves a
    chain's head on, the conflict is about the new head. Left citing the superseded row, a
    reviewer choosing another candidate revoked nothing (the row was not active) while the
    successor stayed in use; now the choice applies to the successor, and a page shown
    before the move is refused (``conflict_changed``). Called with the key's lock held, as
    ``conflict_resolve`` takes it before the item: the two never wait for each other.
    """
    items = ReviewItem.objects.select_for_update().filter(
        _followed(),
        tenant_id=previous.tenant_id,
        kind=ReviewItem.Kind.CONFLICT,
        candidate_ids__contains=[previous.id],
    )
    for item in items.order_by("pk"):
        kept = {c for c in item.candidate_ids if c != previous.id}
        item.candidate_ids = sorted({*kept, successor.id}, key=str)
        item.save(update_fields=["candidate_ids"])


def conflicts_reopen_kept(
    *, previous: Memory, successor: Memory, actor_id: str, use: InUse, within_grant: Callable
) -> None:
    """Open again each conflict on ``previous``'s key that a reviewer resolved
    ``keep_both_scoped`` citing ``previous``, which ``successor`` has just superseded: at
    that item's place, a conflict (opened, or the open one joined) of ``successor`` and the
    newest versions of the other rows the reviewer kept there (``_current_versions``; of
    those, ``conflict_open`` takes the ones still in use), of those the ones the successor's
    writer may read (``within_grant``, a function limiting a queryset of memories), as a
    write of lower authority stands in conflict only with the heads its writer reads.

    The grant is checked on the newest versions, not on the rows the reviewer kept: an old
    version the writer may read passed, and ``conflict_open`` then put in its place a newer
    one above the writer's grant (the person's statement corrected to a sensitive version),
    which a reviewer choosing the writer's row would revoke (stop 65's audit of conflicts).

    The decision stays on the rows it named: the reviewer kept the rows whose words they
    read, and a new version, a rewording of the same authority too, may say something else
    (docs/retrieval.md, stage 8). Until stop 65 nothing was opened: retrieval measured the new
    version against the rows kept with the old one by its rules, and the model's rewording of
    a row kept beside the person's statement was withheld from every agent
    (``lost_conflict:authority_class``), with no clarification and no review item (stop 65's
    audit of conflicts). Called with the key's lock held, as ``conflicts_follow_successor``.
    """
    if not previous.memory_key:
        return
    items = ReviewItem.objects.filter(
        tenant_id=previous.tenant_id,
        subject_id=previous.subject_id,
        kind=ReviewItem.Kind.CONFLICT,
        state=ReviewItem.State.RESOLVED,
        resolution="keep_both_scoped",
        memory_key=previous.memory_key,
        candidate_ids__contains=[previous.id],
    )
    kept_at: dict[ConflictPlace, set] = {}
    for item in items:
        kept_at.setdefault(ConflictPlace.of(item), set()).update(item.candidate_ids)
    for place in sorted(kept_at):  # the order retrieval locks a key's items in
        kept = _current_versions(previous.tenant_id, [str(i) for i in kept_at[place]])
        rows = Memory.objects.filter(tenant_id=previous.tenant_id, pk__in=kept)
        beside = within_grant(rows.exclude(pk=successor.id)).values_list("pk", flat=True)
        conflict_open(
            tenant_id=previous.tenant_id,
            subject_id=previous.subject_id,
            memory_key=previous.memory_key,
            place=place,
            candidate_ids=sorted({successor.id, *beside}, key=str),
            actor_id=actor_id,
            use=use,
        )


def _followed() -> Q:
    """The conflict items that follow their chains to new versions: the open ones, and a
    keyless one a reviewer resolved ``ask_user``, which retrieval still measures its rows by
    (``retrieval.conflicts.keyless_rivals``: nothing changes). Left citing the rival's
    superseded row, the model's new version of its disputed claim was given beside the
    user's account (stop 54's review). A key's ``ask_user`` item ends its clarification
    when a row outside its candidates joins the group: a new conflict is opened then.

    Not a keyless ``ask_user`` item a later one has taken over (``ASK_USER_FOLLOWED_SQL``):
    retrieval reads it no more, and the takeover is the ids the two share. Followed while the
    later one, resolved, was not, new versions of both its rows left it sharing none, and it
    measured again the rival the reviewer had kept (stop 58's audit of conflicts)."""
    taken_over = ASK_USER_FOLLOWED_SQL.format(item=ReviewItem._meta.db_table)
    return Q(state=ReviewItem.State.OPEN) | (
        Q(state=ReviewItem.State.RESOLVED, resolution="ask_user", memory_key="")
        & ~Q(RawSQL(taken_over, (), output_field=BooleanField()))  # noqa: S611 - a constant
    )


def conflicts_citing(*, tenant_id, memory_ids: list) -> tuple[set, set]:
    """The ids of ``memory_ids`` that an open conflict cites, and those that a key's conflict
    a reviewer resolved ``keep_both_scoped`` cites, in one statement and without a lock: a
    batch moving many chains on calls ``conflicts_follow_successor`` (which locks) and
    ``conflicts_reopen_kept`` for those only, in its own order, instead of once for each
    chain. A retrieval may open a conflict citing one of them after this read, from rows it
    read before the write commits: the caller reads again after anything that may have waited
    (``writes._record``). The kept ones are exact under the keys' locks a write holds: only a
    resolution, which takes its key's lock, resolves an item."""
    if not memory_ids:
        return set(), set()
    kept = Q(state=ReviewItem.State.RESOLVED, resolution="keep_both_scoped") & ~Q(memory_key="")
    cited = (
        ReviewItem.objects.filter(
            _followed() | kept,
            tenant_id=tenant_id,
            kind=ReviewItem.Kind.CONFLICT,
            candidate_ids__overlap_array=list(memory_ids),
        )
        .annotate(kept=ExpressionWrapper(kept, output_field=BooleanField()))
        .values_list("candidate_ids", "kept")
    )
    followed, kept_ids = set(), set()
    for ids, is_kept in cited:
        (kept_ids if is_kept else followed).update(ids)
    wanted = set(memory_ids)
    return followed & wanted, kept_ids & wanted


def conflicts_heal_on_commit(*, tenant_id, memory_ids) -> None:
    """Once the current transaction commits, let the open conflicts citing a row of
    ``memory_ids`` that is superseded by then cite its chain's newest version instead
    (``conflicts_heal``).

    A retrieval reads a key's rows without the key's lock, so a write may supersede one of
    them between the retrieval's read and its commit. Inside their transactions each misses
    the other's work: the write's read of the conflicts citing its heads does not see the
    item the retrieval has not committed, the retrieval's read of the rows' statuses does
    not see the supersession the write has not committed, and the item cited the superseded
    row (stop 51's "Left open"). Both look again once they have committed, the write at the
    heads it superseded and the retrieval (whenever it locked an item: opened it, added rows
    to it, or found another's in its place) at the rows it cited: whichever commits last sees
    the other's work and mends the item. A third holding the item when a mend runs (which
    skips it) looks again after its own commit.
    """
    ids = sorted({str(i) for i in memory_ids})
    if ids:
        after_commit(partial(_heal_after_commit, tenant_id, ids))


def _heal_after_commit(tenant_id, ids: list[str]) -> None:
    # Its own transaction (a request's tenant setting ended with its own), its lock waits
    # bounded as a request's are (its events' inserts wait for a whole tenant's deletion
    # holding the tenant row, say). Never raised: the work it follows is committed, a
    # resolution refuses a conflict left stale (``conflict_changed``) and the retention sweep
    # mends it (``conflicts_heal_stale``).
    try:
        with transaction.atomic():
            request_tenant_set(tenant_id)
            conflicts_heal(tenant_id=tenant_id, memory_ids=ids)
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception("could not mend the conflicts citing %s (tenant %s)", ids, tenant_id)


def conflicts_heal(*, tenant_id, memory_ids: list) -> int:
    """Let each open conflict citing a row of ``memory_ids`` cite, for each candidate that was
    superseded, its chain's newest version (with the event saying it is a candidate); return
    how many conflicts changed.

    ``SKIP LOCKED``: an item another transaction holds is that transaction's. A resolution
    holding it refuses a stale one (``conflict_changed``); a retrieval or a write holding it
    looks again after its own commit; the retention sweep mends whatever is left.
    """
    items = ReviewItem.objects.select_for_update(skip_locked=True).filter(
        _followed(),
        tenant_id=tenant_id,
        kind=ReviewItem.Kind.CONFLICT,
        candidate_ids__overlap_array=list(memory_ids),
    )
    healed = 0
    for item in items.order_by("pk"):
        held = sorted(str(i) for i in item.candidate_ids)
        current = _current_versions(tenant_id, held)
        if current != held:
            item.candidate_ids = current
            item.save(update_fields=["candidate_ids"])
            _conflict_events(item, [i for i in current if i not in held], actor_id=MEND)
            healed += 1
    return healed


# The open conflicts (and the others ``_followed`` follows) citing a superseded row whose chain
# has moved on (its successor in use or retired, not waiting for a reviewer) without them:
# what ``conflicts_heal_on_commit`` left, a mend that failed, or a conflict stored before it.
# A batch at a time. Not an ``ask_user`` item taken over, which ``conflicts_heal`` leaves as it
# is: read, it would fill every batch again.
_STALE_SQL = """
    SELECT DISTINCT item.tenant_id, m.id
      FROM memory_core_reviewitem item
      JOIN memory_core_memory m
        ON m.id = ANY(item.candidate_ids) AND m.tenant_id = item.tenant_id
       AND m.status = %(superseded)s
      JOIN memory_core_memory successor
        ON successor.supersedes_id = m.id AND successor.tenant_id = m.tenant_id
       AND NOT (successor.status = ANY(%(proposed)s))
     WHERE item.kind = 'conflict'
       AND (item.state = 'open' OR (item.resolution = 'ask_user' AND item.memory_key = ''
                                    AND NOT {taken_over}))
     LIMIT %(limit)s
""".format(taken_over=ASK_USER_FOLLOWED_SQL.format(item="item"))  # noqa: S608 (constants)


def conflicts_heal_stale(*, limit: int = 5000) -> int:
    """Mend the open conflicts, of every tenant, that still cite a row superseded by a version
    not waiting for a reviewer (``conflicts_heal``); return how many changed. Run in platform
    mode (the retention sweep), one transaction per tenant."""
    with connection.cursor() as cursor:
        cursor.execute(
            _STALE_SQL,
            {
                "superseded": Status.SUPERSEDED,
                "proposed": list(PROPOSED_STATUSES),
                "limit": limit,
            },
        )
        found = cursor.fetchall()
    by_tenant: dict = {}
    for tenant_id, memory_id in found:
        by_tenant.setdefault(tenant_id, []).append(str(memory_id))
    healed = 0
    for tenant_id, ids in sorted(by_tenant.items(), key=lambda pair: str(pair[0])):
        with tenant_atomic(tenant_id):
            healed += conflicts_heal(tenant_id=tenant_id, memory_ids=ids)
    return healed


def review_reason_check(reason: str) -> None:
    """Refuse a reviewer's reason longer than ``MAX_REVIEW_REASON_CHARS`` (ValidationFailed
    ``reason_too_long``): the API's serializer and the portal's forms say so first; a caller
    that skips them (a script, the shell) gets the same limit, not a longer one."""
    if len(reason or "") > MAX_REVIEW_REASON_CHARS:
        raise ValidationFailed(
            f"A reviewer's reason holds at most {MAX_REVIEW_REASON_CHARS:,} characters "
            f"({len(reason):,} given).",
            code="reason_too_long",
        )
    if reason and is_blank(reason):  # zero-width or bidi characters alone: no reason kept
        raise ValidationFailed(
            "A reviewer's reason must show something: it holds only invisible characters.",
            code="reason_invisible",
        )


@transaction.atomic
def conflict_resolve(
    *, principal, item_id, outcome: str, winner_id=None, reason: str, seen_candidate_ids=None
) -> ReviewItem:
    """Resolve the open conflict ``item_id`` with ``outcome`` (see the module docstring).

    ``seen_candidate_ids``: the candidates the resolver was shown. When the item holds others
    by now (a retrieval or a write of lower authority added one meanwhile), nothing is done
    (409 ``conflict_changed``): choosing a winner revokes every other candidate, one the
    resolver never saw included.
    """
    conflicts = ReviewItem.objects.filter(
        tenant_id=principal.tenant_id, kind=ReviewItem.Kind.CONFLICT, pk=item_id
    )
    # The key's lock before the item's, as writes, corrections and approvals take it: one of
    # lower authority holds the key's head, then locks this item (conflict_open), while a
    # resolution holding the item waited for the head among its candidates (a deadlock).
    key = conflicts.values_list("subject__external_id", "memory_key", "subject_id").first()
    if key is not None:
        lock_memory_keys(principal.tenant_id, [key[:2]])
        # Then the subject's lock shared, before the item's too, as every path takes it
        # before its rows and items (memory_core.locks). Taken after the item, it queued
        # behind a deletion of the subject that waited for a retrieval's shared lock, while
        # that retrieval waited for the item (conflict_open): a stall of deadlock_timeout,
        # or subject_being_deleted past a shorter MEMLEDGER_SUBJECT_LOCK_WAIT. Not another
        # person's: that item is NotFound below, never a 503 telling it exists.
        # A deletion of the subject, or of the key, queued for a worker refuses it, as a
        # revoke (which choosing a winner does to the others) is refused.
        if not isinstance(principal, SubjectPrincipal) or str(principal.subject_id) == str(key[2]):
            subjects_shared_locked(
                Subject.objects.filter(tenant_id=principal.tenant_id, pk=key[2]),
                keys={key[:2]},
            )
    item = conflicts.select_for_update().first()
    if item is None or (
        isinstance(principal, SubjectPrincipal) and principal.subject_id != item.subject_id
    ):
        raise NotFound("No conflict review item with this id.")
    _check_principal(principal, item)
    if item.state != ReviewItem.State.OPEN:
        raise ValidationFailed("This conflict is already resolved.", code="review_not_open")
    if seen_candidate_ids is not None and {str(i) for i in seen_candidate_ids} != {
        str(i) for i in item.candidate_ids
    }:
        raise Conflict(
            "This conflict changed since it was shown: its candidates are not the ones you "
            "saw. Nothing was resolved; look at it again.",
            code="conflict_changed",
        )
    if outcome not in OUTCOMES:
        raise ValidationFailed(
            f"outcome must be one of {', '.join(OUTCOMES)}.", code="invalid_outcome"
        )
    candidates = [str(i) for i in item.candidate_ids]
    if _current_versions(item.tenant_id, sorted(candidates)) != sorted(candidates):
        # A candidate was superseded and the item not yet moved to its new version (a write
        # that committed just now, ``conflicts_heal_on_commit``): no write on the key runs
        # while its lock is held, so this is exact. Choosing another winner would revoke
        # nothing of the new version; keeping both would keep a retired row.
        raise Conflict(
            "This conflict changed since it was shown: one of its candidates was corrected "
            "and the conflict now stands with the new version. Nothing was resolved; look at "
            "it again.",
            code="conflict_changed",
        )
    if not (reason or "").strip():
        raise ValidationFailed("A reason is required.", code="reason_required")
    review_reason_check(reason)
    now = timezone.now()
    events = []
    actor = {"actor_type": principal.actor_type, "actor_id": principal.actor_id}
    if outcome == "choose_winner":
        if winner_id is None or str(winner_id) not in candidates:
            raise ValidationFailed(
                "winner_id must be one of the conflict's candidates.", code="winner_not_candidate"
            )
        copies = _folded_copies(item, [i for i in candidates if i != str(winner_id)], winner_id)
        # Every candidate (and copy) locked in one statement, in id order, as a deletion of the
        # subject (or a write on the key) locks them. Locking the winner, then the losers,
        # deadlocked with such a deletion holding a loser of a smaller id and waiting for the
        # winner.
        rows = {
            str(row.id): row
            for row in Memory.objects.select_for_update()
            .filter(
                tenant_id=item.tenant_id, subject_id=item.subject_id, id__in=[*candidates, *copies]
            )
            .order_by("pk")
        }
        winner = rows.get(str(winner_id))
        # In use now (``InUse``): a row past its valid_until or its class's retention keeps
        # status "active" until the retention sweep expires or deletes it, and one chosen
        # revoked the only live memory.
        use = in_use_now(item.tenant_id, now)
        state = use.state(winner) if winner is not None else "gone"
        if state != Status.ACTIVE:
            # A winner that is revoked, superseded, expired, past its retention or deleted
            # would leave the key with no memory at all once the other candidates are revoked.
            raise Conflict(
                f"The chosen memory is {STATE_WORDS.get(state, state)}, no longer in use, so "
                "it cannot win: choose an active candidate or another outcome.",
                code="winner_not_active",
            )
        if winner.valid_from > now:
            # Imported so (``import_memories`` keeps valid_from): retrieval gives no agent a
            # row before it is in effect, so with the others revoked agents were given nothing
            # on the key until then (stop 56's audit of conflicts).
            raise Conflict(
                "The chosen memory is not in effect until "
                f"{winner.valid_from.isoformat(timespec='minutes')} and no agent is given it "
                "before then, so it cannot win: choose a candidate in effect or another outcome.",
                code="winner_not_active",
            )
        # The other candidates and their copies still in use.
        # Not one whose valid_from is still to come: it is in use for no agent yet, the page
        # counts it so and offered it as no winner, and choosing another revoked it for good
        # (stop 56's review). It stays, as a candidate out of use does.
        # A copy goes with the candidate it copies only if that one goes: one of a candidate
        # that stays is folded into nothing revoked (stop 56's third review).
        losing = {
            memory_id
            for memory_id, row in rows.items()
            if memory_id != str(winner_id)
            and memory_id not in copies
            and use.holds(row)
            and row.valid_from <= now
        }
        losers = [
            row
            for memory_id, row in rows.items()
            if memory_id in losing
            or (memory_id in copies and copies[memory_id] in losing and use.holds(row))
        ]
        # The copies it revokes measured too, candidates first: a copy's sensitivity may
        # differ from its candidate's, and a public copy of a personal loser, read by an agent
        # capped at public that was shown no conflict, was revoked, leaving that agent nothing
        # on the matter (stop 60's review).
        _refuse_narrower(
            item.tenant_id,
            winner,
            sorted(losers, key=lambda row: str(row.pk) in copies),
            copies=copies,
        )
        for loser in losers:
            loser.status = Status.REVOKED
            loser.updated_at = now
            loser.save(update_fields=["status", "updated_at"])
            # Journaled as revokes are: a restore from an older backup would put it back.
            memory_revocation_journal_on_commit(loser)
            events.append(
                MemoryEvent(
                    tenant_id=item.tenant_id,
                    memory_id=loser.id,
                    action=MemoryEvent.Action.REVOKED,
                    reason_code="conflict_lost",
                    policy_version=loser.policy_version,  # as a revoke records it
                    details={
                        "review_item": str(item.id),
                        "winner": str(winner_id),
                        # A copy of a candidate names the candidate it is a copy of.
                        **({"copy_of": copies[str(loser.id)]} if str(loser.id) in copies else {}),
                    },
                    **actor,
                )
            )
        _corrections_lost(item, losers)
        # A loser revoked here is revoked as a revoke's is: the key's conflicts at other
        # places it leaves with one candidate in use close too (they stayed open, citing it,
        # with nothing left to choose: stop 47's audit).
        conflicts_close_settled(
            tenant_id=item.tenant_id,
            memory_ids=[loser.id for loser in losers],
            reason_code="conflict_lost",
            now=now,
            except_item=item.pk,
        )
    # Only choosing a winner names one (a radio ticked before "keep both" is no winner).
    winner = str(winner_id) if outcome == "choose_winner" else ""
    policy_versions = _policy_versions(item.tenant_id, candidates)
    for memory_id in candidates:
        events.append(
            MemoryEvent(
                tenant_id=item.tenant_id,
                memory_id=memory_id,
                action=MemoryEvent.Action.CONFLICT_RESOLVED,
                reason_code=outcome,
                policy_version=policy_versions.get(memory_id),
                details={"review_item": str(item.id), "winner": winner},
                **actor,
            )
        )
    MemoryEvent.objects.bulk_create(events)
    item.state = ReviewItem.State.RESOLVED
    item.resolution = outcome
    item.reason = reason.strip()
    item.resolved_at = now
    fields = ["state", "resolution", "reason", "resolved_at"]
    if isinstance(principal, ReviewerPrincipal):
        item.resolved_by_id = principal.user_id
        fields.append("resolved_by")
    item.save(update_fields=fields)
    return item


def _corrections_lost(item: ReviewItem, losers: list[Memory]) -> None:
    """Give ``CONFLICT_LOST`` to the open items of the corrections waiting for a reviewer
    that are written on a version of the chain of one of ``losers`` (just revoked by the
    choice of a winner of the conflict ``item``): their approval is refused
    (``review_conflict_lost``, ``selectors.approvals.chains_lost``). Approved, one without a
    key stood alone beside the winner (stop 62), and one on a key landed on the winner and,
    of no lower authority, superseded it (stop 65's audit of conflicts).

    Recorded on the item, not read from the loser alone: once the person deleted the revoked
    loser (a memory not in use, which the portal offers to delete), its status was
    "deleted" and the deletion's worker took its id out of the item, so nothing told the
    approval that the correction had lost, and it went through (stop 62's audit of reviewer
    flows). Three queries, one more for each version a chain has moved on by and one for
    each item marked."""
    if not losers:
        return
    waiting = list(
        open_writes(
            item.tenant_id,
            subject_id=item.subject_id,
            memory_key__in=sorted({loser.memory_key for loser in losers}),
        )
        .exclude(candidate_ids=[])
        .exclude(rule_codes__contains=[CONFLICT_LOST])
        .values_list("pk", "candidate_ids")
    )
    if not waiting:
        return
    retired = {loser.pk for loser in losers}
    newest = newest_versions(ids[0] for _, ids in waiting)
    lost = [pk for pk, ids in waiting if ids[0] in newest and newest[ids[0]].pk in retired]
    # skip_locked: an item locked now is being decided, withdrawn or scrubbed. An approval
    # locks its item before the head it lands on, so one of a copy's correction, which a
    # conflict's resolution (holding that copy, not its key's lock) revokes, would deadlock
    # with this; it then finds the copy revoked itself (``chains_lost``).
    written_on_losers = ReviewItem.objects.select_for_update(skip_locked=True).filter(
        pk__in=lost, state=ReviewItem.State.OPEN
    )
    for written in written_on_losers.order_by("pk"):
        written.rule_codes = [*written.rule_codes, CONFLICT_LOST]
        written.save(update_fields=["rule_codes"])


def _refuse_narrower(
    tenant_id, winner: Memory, losers: list[Memory], *, copies: dict[str, str]
) -> None:
    """Refuse (Conflict ``winner_narrower``, nothing changed) a ``winner`` that fewer agents
    may be given than a row of ``losers`` it would revoke, a candidate or a copy of one
    (``copies`` names each copy's candidate): private to an agent while that row is shared
    or another agent's, of a type or sensitivity outside the grant of an active agent that
    reads that row, or kept out of every prompt by the tenant's policy (``agents_reaching``).

    A conflict holds every row any agent at its place saw (``_conflict_join``): an agent's
    private memory beside the shared one its retrieval found too, say. Chosen, the private
    row revoked the shared one, and every other agent, shown no conflict, was given nothing
    on the key from then on (stop 60's audit of reviewers). Two queries, and one for each
    private memory's owner a refusal names.
    """
    policy = active_retrieval_policy(tenant_id)
    readers = agents_reaching(tenant_id, [winner, *losers], policy=policy)
    reach = {grant.agent_id for grant in readers[winner.pk]}
    for loser in losers:
        left = [grant for grant in readers[loser.pk] if grant.agent_id not in reach]
        private = winner.agent_id is not None and loser.agent_id != winner.agent_id
        if not (private or left):
            continue
        copy_of = copies.get(str(loser.pk))
        if private:
            why = (
                f"the chosen memory is private to agent {winner.agent.name}, and the "
                f"{'copy' if copy_of else 'candidate'} is {_owner_words(loser)}"
            )
            if left:
                names = ", ".join(grant.agent_name for grant in left)
                why += f", so agents that read it ({names}) would be left without it"
        else:
            # By reason: the policy's is every agent's, and said once.
            unread: dict[str, list[str]] = {}
            for grant in left:
                words = _unread_words(grant, winner, policy)
                unread.setdefault(words, []).append(grant.agent_name)
            why = "; ".join(
                f"{_readers_words(names)}, but {words}" for words, names in unread.items()
            )
        if copy_of:
            # A copy is no candidate the page lists: named with the one it copies.
            row = f"memory {str(loser.pk)[:8]}, a copy of candidate {copy_of[:8]} with its words,"
        else:
            row = f"candidate {str(loser.pk)[:8]},"
        raise Conflict(
            f"The chosen memory reaches fewer agents than {row} which choosing it would "
            f"revoke: {why}. Nothing was resolved: choose another candidate, or keep both.",
            code="winner_narrower",
        )


def _owner_words(memory: Memory) -> str:
    """Say which agents ``memory``'s owner lets read it."""
    if memory.agent_id is None:
        return "shared by the tenant's agents"
    return f"private to agent {memory.agent.name}"


def _readers_words(names: list[str]) -> str:
    """Say that the agents named ``names`` read a row."""
    if len(names) == 1:
        return f"agent {names[0]} reads it"
    return f"agents {', '.join(names)} read it"


def _unread_words(grant, memory: Memory, policy: RetrievalPolicy) -> str:
    """Say why ``memory``, of its own or a shared one, is not given to ``grant`` (an
    AgentPrincipal): its type, its sensitivity, or the tenant's ``policy``."""
    if memory.memory_type not in grant.read_types:
        return f"its grant does not read the chosen memory's type ({memory.memory_type})"
    if memory.sensitivity not in sensitivities_up_to(grant.max_sensitivity):
        return (
            f"its grant reads memories up to {grant.max_sensitivity} only, and the chosen "
            f"memory is {memory.sensitivity}"
        )
    if memory.confidence < policy.confidence_floor:
        return (
            f"the tenant's policy gives agents no memory below confidence "
            f"{policy.confidence_floor:g}, and the chosen memory's is {memory.confidence:g}"
        )
    return (
        f"the tenant's policy puts no memory above {policy['max_prompt_sensitivity']} into a "
        f"prompt, and the chosen memory is {memory.sensitivity}"
    )


def _folded_copies(item: ReviewItem, memory_ids: list[str], winner_id) -> dict[str, str]:
    """Return, by id, the live rows of ``item``'s subject that retrieval's dedup folds into a
    row of ``memory_ids`` by its content (stage 6, ``content_hash``), each with that row's id:
    the same words, of its type, at its scope and environment, on its key or on none
    (``dedup._may_absorb``), and a keyless row's on any key, which dedup keeps before it
    (``dedup.keeper_order``): the loser's words were given again under such a copy's id
    (stop 64's review). Never one with the winner's words, which the reviewer chose.

    Such a copy is never a candidate: folded, it stood behind the row it was folded into, and
    the clarification (so the item) cited that row alone. Choosing a winner revoked only the
    row, and the copy came back on the next retrieval: a key's twin opened the conflict again
    with the loser's words, and a copy without a key was given beside the winner (stop 56's
    audit of conflicts). Only a copy some agent is given beside the row (shared, or the row's
    own agent's), as dedup folds only what one retrieval reads. Two queries.
    """
    fields = ("id", "content_hash", "memory_type", "scope_kind", "scope_ref", "environment")
    rows = list(
        Memory.objects.filter(
            tenant_id=item.tenant_id, subject_id=item.subject_id, pk__in=[*memory_ids, winner_id]
        ).values(*fields, "memory_key", "agent_id")
    )
    chosen = next((r["content_hash"] for r in rows if str(r["id"]) == str(winner_id)), "")
    losing = [
        r for r in rows if str(r["id"]) != str(winner_id) and r["content_hash"] not in ("", chosen)
    ]
    if not losing:
        return {}
    match = Q()
    for row in losing:
        same = Q(**{f: row[f] for f in fields[1:]})
        if row["memory_key"]:
            same &= Q(memory_key__in=[row["memory_key"], ""])
        if row["agent_id"] is not None:
            # Only a copy some agent is given beside it, as dedup folds it: shared, or the
            # same agent's. Another agent's private copy is never read with it, and choosing
            # a winner revoked it, unseen by the reviewer (stop 56's review).
            same &= Q(agent_id__isnull=True) | Q(agent_id=row["agent_id"])
        match |= same
    copies = (
        Memory.objects.filter(
            match, tenant_id=item.tenant_id, subject_id=item.subject_id, status=Status.ACTIVE
        )
        .exclude(pk__in=[*memory_ids, winner_id])
        .values(*fields, "memory_key", "agent_id")
    )

    def folds_into(copy, row) -> bool:  # the query's condition, for one pair
        return (
            all(row[f] == copy[f] for f in fields[1:])
            and (not row["memory_key"] or copy["memory_key"] in (row["memory_key"], ""))
            and (None in (row["agent_id"], copy["agent_id"]) or row["agent_id"] == copy["agent_id"])
        )

    return {
        str(copy["id"]): next(str(row["id"]) for row in losing if folds_into(copy, row))
        for copy in copies
    }


def _policy_versions(tenant_id, memory_ids: list[str]) -> dict[str, int | None]:
    """Return the policy version each memory of ``memory_ids`` was written under, by its id
    as a string: what its events record (``event_record``), as every event records one
    (DESIGN.md). One query."""
    rows = Memory.objects.filter(tenant_id=tenant_id, pk__in=memory_ids)
    return {str(pk): version for pk, version in rows.values_list("pk", "policy_version")}
