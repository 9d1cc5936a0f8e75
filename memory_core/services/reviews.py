"""The reviewer queue's decisions on sensitive writes (approve or reject, with a reason).

A sensitive write waits as a ``pending_approval`` row: embedded, never retrievable. Approval
makes it active and, when it was written on a memory_key with an active head of no higher
authority, links it into that chain as the next version (the head becomes superseded).
Against a head of higher authority it stays a separate chain and a conflict is opened, as at
write time. Rejection marks it ``rejected``, journaled (``revocations``) so that a restore's replay
rejects it again. Conflicts are resolved by
``memory_core.services.conflicts.conflict_resolve``, not here.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.admission.codes import RULE_CODES
from memory_core.exceptions import Conflict, NotFound
from memory_core.locks import lock_memory_keys, subjects_shared_locked
from memory_core.models import (
    AUTHORITY_RANK,
    Memory,
    MemoryEvent,
    ReviewItem,
    Status,
    Subject,
)
from memory_core.policy_check import InUse
from memory_core.principals import require_reviewer
from memory_core.retrieval.types import ConflictPlace
from memory_core.selectors.approvals import (
    WRITER_DEACTIVATED,
    approval_head,
    chains_lost,
    heads_on_key,
    in_use_now,
    kept_sensitivity,
    writer_grant_refuses,
    writer_of,
    writer_reaches,
)
from memory_core.services.conflicts import (
    conflict_open,
    conflicts_follow_successor,
    conflicts_heal_on_commit,
    conflicts_reopen_kept,
    review_reason_check,
)
from memory_core.services.events import event_record
from memory_core.services.revocations import memory_rejection_journal_on_commit

# ``review_approve``'s ``seen_head_id`` when its caller was shown no head the approval lands
# on (the reviewer API): it lands wherever ``approval_head`` finds. None is a head shown as
# none ("a memory of its own, replacing nothing").
ANY_HEAD = object()


def review_kind_check(item: ReviewItem, *, kind: str = ReviewItem.Kind.SENSITIVE_WRITE) -> None:
    """Refuse (Conflict) an action meant for review items of ``kind`` on ``item`` of the
    other kind, saying what it is and how it is decided: an approval or a rejection of a
    conflict between memories (``not_a_sensitive_write``), resolved by choosing an outcome
    (``services.conflicts.conflict_resolve``), or a conflict's resolution of a sensitive
    write (``not_a_conflict``), approved or rejected in the review queue.

    The portal asks it before it reads the form, and when an action's address is opened with
    GET: a blank reason sent to a conflict's approve address looked the item up as a write
    and called it one no longer waiting (stop 62's audit of reviewer flows), and a write's id
    on a conflict's resolve address was a 404 to a POST, while a GET called it a conflict
    (stop 63's audit of the portal)."""
    if item.kind == kind:
        return
    if kind == ReviewItem.Kind.SENSITIVE_WRITE:
        raise Conflict(
            "This item is a conflict between memories, not a write waiting for approval: "
            "resolve the conflict by choosing its outcome (approve and reject are for "
            "sensitive writes).",
            code="not_a_sensitive_write",
        )
    raise Conflict(
        "This item is a sensitive write for a reviewer to approve or reject, not a conflict "
        "between memories: decide it in the review queue (resolving is for conflicts).",
        code="not_a_conflict",
    )


def _open_item(*, principal, item_id, lock: bool = True) -> ReviewItem:
    """Return the open sensitive-write item ``item_id`` of the reviewer's tenant, locked
    unless ``lock`` is false."""
    require_reviewer(principal, message="No review item with this id.", or_system=True)
    items = ReviewItem.objects.filter(pk=item_id, tenant_id=principal.tenant_id)
    item = (items.select_for_update() if lock else items).first()
    if item is None:
        raise NotFound("No review item with this id.")
    review_kind_check(item)
    if item.state != ReviewItem.State.OPEN or item.memory_id is None:
        raise Conflict(f"This item is already {item.state}.", code="review_closed")
    return item


def _lock_item_and_conflict(*, principal, item_id, memory: Memory) -> ReviewItem:
    """Lock the open item ``item_id`` with its key's open conflicts (any place), in id order.

    An approval of lower authority than the key's head opens (locks) that conflict last; a
    deletion's events step locks every item citing a deleted memory in id order (the
    pending write's item and the conflict may both cite the key's deleted head): holding
    the item and then waiting for the conflict deadlocked with it.
    """
    if memory.memory_key:
        conflict = Q(
            tenant_id=memory.tenant_id,
            subject_id=memory.subject_id,
            kind=ReviewItem.Kind.CONFLICT,
            state=ReviewItem.State.OPEN,
            memory_key=memory.memory_key,
        )
        list(
            ReviewItem.objects.select_for_update()
            .filter(Q(pk=item_id, tenant_id=principal.tenant_id) | conflict)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    return _open_item(principal=principal, item_id=item_id)


def _close(item: ReviewItem, *, principal, state: str, reason: str) -> None:
    item.state = state
    item.resolution = state
    item.reason = reason
    item.resolved_by_id = getattr(principal, "user_id", None)
    item.resolved_at = timezone.now()
    item.save(update_fields=["state", "resolution", "reason", "resolved_by", "resolved_at"])


def _link_into_chain(
    memory: Memory, item: ReviewItem, *, principal, use: InUse, seen_head_id
) -> None:
    """Make the approved ``memory`` the head of its key's chain, or put it beside the head in
    a conflict (opened, or joined where one was open), among the heads in use (``use``).
    Refuse it, changing nothing, when it corrects a memory that lost a conflict since, when
    the head it lands on is not ``seen_head_id`` (unless ``ANY_HEAD``), or when its writer's
    grant no longer allows it."""
    lock_memory_keys(memory.tenant_id, [(memory.subject.external_id, memory.memory_key)])
    head = approval_head(memory, item, use=use)
    _refuse_lost_chain(memory, item)
    _refuse_unseen_head(head, seen_head_id)
    _refuse_narrowed_grant(memory, head)
    now = timezone.now()
    # Its owner as a write's now (``writes._draft``): the head's, shared without one. A write
    # measured against its writer's private head, landing on a shared head that stood since
    # (or on none, the private head gone), kept its writer's ownership of a chain that was
    # not its writer's (stop 53's audits).
    memory.agent_id = head.agent_id if head is not None else None
    memory.sensitivity = kept_sensitivity(memory, head)
    memory.valid_from = _approval_start(memory, head, use.now)
    if head is not None and AUTHORITY_RANK[memory.authority] >= AUTHORITY_RANK[head.authority]:
        head.status = Status.SUPERSEDED
        head.updated_at = now
        head.save(update_fields=["status", "updated_at"])
        memory.supersedes = head
        memory.version = head.version + 1
        event_record(
            memory=head,
            action=MemoryEvent.Action.SUPERSEDED,
            principal=principal,
            reason_code="review.approved",
            policy_version=memory.policy_version,  # the approved write's, as its own events
            details={"successor": str(memory.id)},
        )
        # The new version is its writer's correction, as memory_supersede records one; the
        # reviewer's part is the "approved" event.
        event_record(
            memory=memory,
            action=MemoryEvent.Action.CORRECTED,
            principal=writer_of(memory) or principal,
            reason_code="review.approved",
            details={"supersedes": str(head.id)},
        )
    memory.status = Status.ACTIVE
    memory.admitted = True
    memory.updated_at = now
    memory.save(
        update_fields=[
            "status",
            "admitted",
            "updated_at",
            "supersedes",
            "version",
            "agent",
            "sensitivity",
            "valid_from",
        ]
    )
    if memory.supersedes_id is not None:
        conflicts_follow_successor(previous=head, successor=memory)
        conflicts_heal_on_commit(tenant_id=memory.tenant_id, memory_ids=[head.id])
        conflicts_reopen_kept(
            previous=head,
            successor=memory,
            actor_id="review",
            use=use,
            within_grant=lambda rows: writer_reaches(memory, rows),
        )
    if head is not None and memory.supersedes_id != head.id:
        # Every chain still standing on the key, as a write of lower authority opens it: the
        # head and the approved write only would drop a third chain from an open conflict.
        standing = writer_reaches(memory, heads_on_key(memory, agent_id=head.agent_id, use=use))
        standing = standing.values_list("pk", flat=True)
        conflict = conflict_open(
            tenant_id=memory.tenant_id,
            subject_id=memory.subject_id,
            memory_key=memory.memory_key,
            place=ConflictPlace.of(memory),
            candidate_ids=sorted({head.id, memory.id, *standing}, key=str),
            actor_id="review",
            use=use,
            within_grant=lambda rows: writer_reaches(memory, rows),
        )
        # Kept beside the head as its writer's, as a write of lower authority records its own
        # ``conflict`` event (a person's correction of an administrator's memory counts as a
        # user correction once approved: stop 52's audit); the reviewer's part is "approved".
        event_record(
            memory=memory,
            action=MemoryEvent.Action.CONFLICT,
            principal=writer_of(memory) or principal,
            reason_code="review.approved",
            details={"review_item": str(conflict.id)},
        )


def _refuse_lost_chain(memory: Memory, item: ReviewItem) -> None:
    """Refuse (Conflict ``review_conflict_lost``) the approval of a correction of a memory
    that lost a conflict while it waited: a reviewer chose another candidate and revoked it
    (``selectors.approvals.chains_lost``). As for ``review_expired``, the write can only be
    rejected.

    Without a key it landed on no head and stood active alone, with no conflict, beside the
    memory the reviewer had chosen (stop 62's audit of conflicts). On a key it landed on the
    key's head, the winner, and, of no lower authority, superseded it: a person's correction
    of the statement a reviewer revoked replaced the model's memory the reviewer chose, and
    the lost chain was given to agents again with no conflict left (stop 65's audit of
    conflicts). Told by the item's rule code too (``CONFLICT_LOST``): once the person deleted
    the revoked memory, the deletion's worker took its id out of the item and the approval
    went through (stop 62's audit of reviewer flows)."""
    if not chains_lost(memory.tenant_id, [item]):
        return
    raise Conflict(
        "The memory this write corrects lost a conflict while it waited: a reviewer chose "
        "another memory over it, and approved, this write would undo that choice (given to "
        "agents beside the one chosen, or in its place). It can no longer be approved: "
        "reject it, and ask for a new write if it still holds.",
        code="review_conflict_lost",
    )


def _refuse_unseen_head(head: Memory | None, seen_head_id) -> None:
    """Refuse (Conflict ``review_changed``) an approval landing on another head than
    ``seen_head_id``, the one its reviewer was shown (None: none; ``ANY_HEAD``: no check).

    The review queue says what approving a write does ("becomes the next version of" the
    key's memory); a write on the key since moved the chain on, and the approval superseded
    a memory the reviewer never saw (stop 61's audit of reviewers), as a conflict's
    resolution from a page shown before its candidates changed is refused
    (``conflict_changed``)."""
    if seen_head_id is ANY_HEAD:
        return
    if str(getattr(head, "pk", None)) != str(seen_head_id):
        raise Conflict(
            "The memory this approval lands on changed since the write was shown (a newer "
            "version of it, or a memory written on the key since), so nothing was decided. "
            "Look at what approving it does now, and decide again.",
            code="review_changed",
        )


def _refuse_narrowed_grant(memory: Memory, head: Memory | None) -> None:
    """Refuse (Conflict ``review_grant_narrowed``) the approval of a write its agent's grant
    no longer allows (``writer_grant_refuses``): an approval must not store what admission
    refuses now. As for ``review_expired``, the write can only be rejected."""
    code = writer_grant_refuses(memory, head)
    if not code:
        return
    if code == WRITER_DEACTIVATED:
        why = "The agent that wrote this was deactivated while it waited for review."
    else:
        why = (
            "The grant of the agent that wrote this was narrowed while it waited for review, "
            f"so admission refuses it now ({code}). {RULE_CODES[code][1]}"
        )
    raise Conflict(
        f"{why} It can no longer be approved: reject it, and ask for a new write if it still "
        "holds.",
        code="review_grant_narrowed",
    )


def _approval_start(memory: Memory, head: Memory | None, now) -> datetime:
    """Return the start of the approved ``memory`` landing on ``head``: the start a write on
    that head would get now (``writes._start``).

    A start still ahead is kept only when it is the start of the head landed on, itself not
    yet in effect (a correction of a memory imported to start later keeps that start), or
    when the approval lands on no head (it supersedes nothing, and the version written for
    a later date is not put in use before it). Kept on a head in effect since, it superseded
    the key's memory in use and left the key none until that start (stop 58's audit of the
    reviewers' work). ``now`` is the moment the write was found in use (``_refuse_ended``),
    before its valid_until."""
    if memory.valid_from <= now or head is None or head.valid_from == memory.valid_from:
        return memory.valid_from
    return now


def _lock_pending_memory(item: ReviewItem) -> Memory:
    """Lock and return the write ``item`` reviews; Conflict if it is no longer pending."""
    memory = Memory.objects.select_for_update().get(pk=item.memory_id)
    if memory.status != Status.PENDING_APPROVAL:
        raise Conflict(f"The memory is {memory.status}, not pending.", code="review_closed")
    return memory


def _subject_shared_unless_queued(memory: Memory) -> None:
    """Take the lock of ``memory``'s subject shared (``subjects_shared_locked``), and raise
    SubjectBeingDeleted when a deletion of the subject, or of the memory's key, is queued for
    a worker, as a revoke and a write do: a reviewer's approval made the pending write active
    (and superseded the key's head) while the person was told nothing of it would change
    before the deletion."""
    subjects_shared_locked(
        Subject.objects.filter(tenant_id=memory.tenant_id, pk=memory.subject_id),
        keys={(memory.subject.external_id, memory.memory_key)},
    )


@transaction.atomic
def review_approve(*, principal, item_id, reason: str, seen_head_id=ANY_HEAD) -> ReviewItem:
    """Approve a pending sensitive write: the memory becomes active (and usable), the next
    version of its key's head or, of lower authority, beside it in a conflict for a reviewer
    (``selectors.reviews.review_approval_conflict`` finds that conflict).

    ``seen_head_id``: the id of the head the reviewer was shown the approval lands on (None:
    none); landing on another now, nothing is decided (409 ``review_changed``). Nothing is
    decided either for a write out of use (``review_expired``), one its agent's grant no
    longer allows (``review_grant_narrowed``), or a correction of a memory that lost a
    conflict since (``review_conflict_lost``)."""
    review_reason_check(reason)
    item = _open_item(principal=principal, item_id=item_id, lock=False)
    # The key's lock before the row's, in the order writes take them (memory_core/locks.py),
    # and the subject's shared: the approval locks the pending row, then the key's head, out
    # of id order, so a deletion of the subject (which locks its rows in id order) must not
    # hold any of them meanwhile (it waits for this approval, or this approval for it).
    pending = Memory.objects.select_related("subject").filter(pk=item.memory_id).first()
    if pending is not None:
        lock_memory_keys(pending.tenant_id, [(pending.subject.external_id, pending.memory_key)])
        _subject_shared_unless_queued(pending)
    memory = _lock_pending_memory(item)
    use = in_use_now(memory.tenant_id)
    _refuse_ended(memory, use)
    # The row before its item, as a revoke of the pending write takes them (it locks the row,
    # then closes the item): the other way round each waited for the other (a deadlock).
    item = _lock_item_and_conflict(principal=principal, item_id=item_id, memory=memory)
    _link_into_chain(memory, item, principal=principal, use=use, seen_head_id=seen_head_id)
    event_record(
        memory=memory,
        action=MemoryEvent.Action.APPROVED,
        principal=principal,
        reason_code="review.approved",
        details={"review_item": str(item.id)},
    )
    _close(item, principal=principal, state=ReviewItem.State.APPROVED, reason=reason)
    return item


def _refuse_ended(memory: Memory, use: InUse) -> None:
    """Refuse (Conflict ``review_expired``) the approval of the pending ``memory`` once it is
    out of use (``use``): past its valid_until (``status_at``: the rule the sweep and the
    portal apply), or past its class's retention under the tenant's active policy (which
    may have shortened it while the write waited: retrieval gives it to no agent, and the
    sweep deletes it). Made active, it would supersede the key's live head and be expired or
    deleted by the next retention sweep: the key would be left with no usable value."""
    if memory.status_at(use.now) == Status.EXPIRED:
        raise Conflict(
            "This write's validity ended while it waited for review "
            f"(valid_until {memory.valid_until.isoformat()}), so it can no longer be "
            "approved: reject it, and ask for a new write if it still holds.",
            code="review_expired",
        )
    if use.overdue(memory):
        raise Conflict(
            "This write is older than the tenant's policy keeps memories of its class "
            f"(written {memory.created_at.isoformat()}), so it can no longer be approved: "
            "reject it, and ask for a new write if it still holds.",
            code="review_expired",
        )


def _reject(
    memory: Memory, *, principal, item: ReviewItem | None, reason: str, details=None
) -> None:
    """Mark the locked pending ``memory`` rejected, with its ``rejected`` event, close its
    (locked) open item ``item`` as rejected, and journal the rejection as it commits
    (``revocations``: a restore from an older backup would put it back in the reviewers'
    queue, and ``replay_deletions`` rejects it again)."""
    memory.status = Status.REJECTED
    memory.updated_at = timezone.now()
    memory.save(update_fields=["status", "updated_at"])
    details = dict(details or {})
    if item is not None:
        details["review_item"] = str(item.id)
    event_record(
        memory=memory,
        action=MemoryEvent.Action.REJECTED,
        principal=principal,
        reason_code="review.rejected",
        details=details,
    )
    if item is not None:
        _close(item, principal=principal, state=ReviewItem.State.REJECTED, reason=reason)
    memory_rejection_journal_on_commit(memory)


@transaction.atomic
def review_reject(*, principal, item_id, reason: str) -> ReviewItem:
    """Reject a pending sensitive write: the memory is kept as ``rejected``, never used."""
    review_reason_check(reason)
    item = _open_item(principal=principal, item_id=item_id, lock=False)
    # The subject's lock shared first, as an approval and a revoke take it: a deletion of the
    # subject holding the row is waited for a bounded time (memory_core.locks), and a queued
    # one refuses the rejection. Then the row before its item, as review_approve (and a
    # revoke) take them.
    pending = Memory.objects.select_related("subject").filter(pk=item.memory_id).first()
    if pending is not None:
        _subject_shared_unless_queued(pending)
    memory = _lock_pending_memory(item)
    item = _open_item(principal=principal, item_id=item_id)
    _reject(memory, principal=principal, item=item, reason=reason)
    return item


@transaction.atomic
def memory_reject_replayed(*, principal, memory_id, operation_id: str) -> Memory:
    """Reject again, after a restore, the pending write ``memory_id`` as the journal line of
    the operation ``operation_id`` records (``replay_deletions``): its open review item
    resolved as rejected, the ``rejected`` event's reason naming the line. ``principal`` is
    memledger itself (no reviewer decides). Conflict ``review_closed`` if it is not pending
    (any more); ``SubjectBeingDeleted`` if its subject (or key) has a deletion queued, as for
    a revoke: the deletion removes it.

    Locks as ``review_reject`` takes them: the subject's shared, with the queued deletion's
    fence (``_subject_shared_unless_queued``), the row, then its open items in id order.
    """
    memory = Memory.objects.select_related("subject").get(pk=memory_id)
    _subject_shared_unless_queued(memory)
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
    if memory.status != Status.PENDING_APPROVAL:
        raise Conflict(f"The memory is {memory.status}, not pending.", code="review_closed")
    items = list(
        ReviewItem.objects.select_for_update()
        .filter(
            tenant_id=memory.tenant_id,
            memory=memory,
            kind=ReviewItem.Kind.SENSITIVE_WRITE,
            state=ReviewItem.State.OPEN,
        )
        .order_by("pk")
    )
    reason = f"Rejected again after a restore (journal line {operation_id})."
    item = items[0] if items else None
    _reject(memory, principal=principal, item=item, reason=reason, details={"reason": reason})
    for other in items[1:]:  # one a write, as a rule; none is left open on a rejected write
        _close(other, principal=principal, state=ReviewItem.State.REJECTED, reason=reason)
    return memory
