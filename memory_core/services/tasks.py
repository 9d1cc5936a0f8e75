"""A task's end: what was bound to the task expires with it.

The seed: "A task decision should usually expire when the task closes." Working memory
lives 24 hours by default (``retention.working_hours``) whatever happens to its task; an
agent that finishes a task says so, and the task's state and decisions stop being used at
once instead of lingering into the next task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.deletion.ledger import TASK_CLOSED, journaled_spellings, task_digest
from memory_core.exceptions import PermissionDenied
from memory_core.locks import lock_memory_keys, subjects_shared_locked
from memory_core.models import (
    PROPOSED_STATUSES,
    Memory,
    MemoryEvent,
    MemoryType,
    ScopeKind,
    Status,
    Subject,
)
from memory_core.selectors.approvals import shared_or_own
from memory_core.services.conflicts import conflicts_close_settled
from memory_core.services.memories import memories_mark_expired
from memory_core.services.revocations import (
    memory_task_close_journal_on_commit,
    memory_task_replaced_journal_on_commit,
)

# The types a close expires by their task_id alone: the task's working state and its
# decisions (the seed: "A task decision should usually expire when the task closes"; a
# "temporary task decision" is "short-lived and task-bound"). A preference, constraint, rule,
# incident, procedure or episode merely written while the task ran keeps its own retention:
# an explicit preference is "stable until changed or revoked" (stop 57's audit of tasks: a
# close expired a global preference that carried the task's id).
CLOSED_BY_TASK_ID = (MemoryType.TASK_STATE, MemoryType.PREVIOUS_DECISION)


def bound_to_task(task_ids) -> Q:
    """Return the condition of the memories bound to one of ``task_ids``, those a close
    expires: a task state or decision carrying its task_id (``CLOSED_BY_TASK_ID``), and any
    memory scoped to it (``task:<id>``). The close and its replay after a restore
    (``task_close_replayed``) both read it, so they expire the same rows."""
    return Q(task_id__in=task_ids, memory_type__in=CLOSED_BY_TASK_ID) | Q(
        scope_kind=ScopeKind.TASK, scope_ref__in=task_ids
    )


@dataclass
class TaskCloseResult:
    task_id: str
    expired: list = field(default_factory=list)  # memory ids
    outside_grant: int = 0  # bound to the task, but of a type the agent may not write


@transaction.atomic
def task_close(*, principal, user_id: str, task_id: str) -> TaskCloseResult:
    """Expire the subject's memories bound to ``task_id`` (``bound_to_task``): its task state
    and decisions (``task_id``) and whatever is scoped to the task (``task:<id>``), active or
    still waiting for a reviewer
    (whose review items close, resolution ``task_closed``: approved later, one became the
    closed task's state), with an ``expired`` event each (reason ``task_closed``). Only
    memories the agent may write and see (shared or its own, of its read types, up to its
    maximum sensitivity: ``visible_to``); those it sees but may not write are counted, not
    touched, and those it may not see are neither.
    An agent without ``any_subject`` closes tasks of its token's subject only
    (``subject_not_granted``). An unknown subject or task expires nothing. Closing twice
    changes nothing more.
    """
    may_act_for = getattr(principal, "may_act_for", None)
    if may_act_for is not None and not may_act_for(user_id):
        raise PermissionDenied(
            "This agent may close tasks only for the subject named by its subject token.",
            code="subject_not_granted",
        )
    result = TaskCloseResult(task_id=task_id)
    # The subject's lock of writes first, as a write and a correction take it (before the
    # subject's, memory_core.locks): one in flight commits before the close reads, so its row
    # is read. A write of lower authority than a bound head (kept beside it) or a sensitive
    # one (waiting) leaves that head active: the close waited for the head, held it and read
    # no further, and the write's row, bound to the task, stayed in use after the close, or
    # waited for an approval into the closed task's state (stop 53's audit of races).
    lock_memory_keys(principal.tenant_id, (), writes_of=[user_id])
    # The subject's lock shared, as every write takes it: a deletion of the subject waits,
    # and a queued one of the whole subject answers 503. A key's queued deletion does not:
    # its memories are out of ``visible_to`` below, so the close leaves them to the worker.
    subjects = subjects_shared_locked(
        Subject.objects.filter(tenant_id=principal.tenant_id, external_id=user_id), keys=set()
    )
    if not subjects:
        return result
    subject = subjects[0]
    # What the agent may see (its read types and maximum sensitivity too, as revoke needs):
    # a memory it may not read is neither expired nor counted, nor its id answered.
    bound = (
        Memory.objects.visible_to(principal)
        .filter(subject=subject)
        .filter(bound_to_task([task_id]))
        .filter(shared_or_own(getattr(principal, "agent_id", None)))
    )
    write_types = getattr(principal, "write_types", None)
    # The writes waiting for a reviewer first, as an approval takes its pending row before
    # the key's head (memory_core.locks); one approved meanwhile is active by now, and read
    # with the active rows.
    pending = _lock_pending(bound.filter(status=Status.PENDING_APPROVAL))
    rows = pending + _lock_bound(bound.filter(status=Status.ACTIVE))
    closing = [row for row in rows if write_types is None or row[1] in write_types]
    result.outside_grant = len(rows) - len(closing)
    if closing:
        result.expired = _expire(
            tenant_id=principal.tenant_id,
            closing=closing,
            actor=(principal.actor_type, principal.actor_id),
            details={"task_id": task_id},
        )
    _journal_replaced(
        bound,
        tenant_id=principal.tenant_id,
        write_types=write_types,
        expired=result.expired,
        task_id=task_id,
    )
    return result


def _journal_replaced(bound, *, tenant_id, write_types, expired: list, task_id: str) -> None:
    """Journal the versions of ``bound`` (the rows the close reads) that a newer version
    replaced (superseded), of the types the agent may write, as the close's lines
    (``memory_task_replaced_journal_on_commit``).

    A backup taken before the replacement holds such a version in use. The close expires
    nothing of it here, and the newer version's own line, when another task's write
    replaced it, names that other task: unjournaled, the replay after a restore left the
    closed task's state in use (stop 58's audit of conflicts and tasks). One whose successor
    the close expires or journals is named by that line's chain (``supersedes_ids``) already,
    and so is one whose successor an earlier close of the task expired; one an earlier close
    of the task marked has its line. Neither is marked again: closing twice changes nothing
    more (until stop 62's audit of tasks a second close marked such a version again and
    appended another line, and so did every further close).
    """
    replaced = bound.filter(status=Status.SUPERSEDED)
    if write_types is not None:
        replaced = replaced.filter(memory_type__in=write_types)
    rows = list(replaced.values_list("pk", "task_closed_sha256"))
    if not rows:
        return
    digest = task_digest(task_id)
    ids = {pk for pk, _ in rows}
    marked = {pk for pk, task_sha256 in rows if task_sha256 == digest}
    successors = list(
        Memory.objects.filter(tenant_id=tenant_id, supersedes_id__in=ids)
        .exclude(status__in=PROPOSED_STATUSES)
        .values_list("supersedes_id", "pk", "status")
    )
    closed_before = _expired_by_close_of(
        tenant_id, [pk for _, pk, status in successors if status == Status.EXPIRED], digest
    )
    named = ids | set(expired) | closed_before
    covered = {previous for previous, successor, _ in successors if successor in named}
    owed = sorted(ids - covered - marked, key=str)
    # Marked, so that the deletion sweep appends a line the close's append misses: the row
    # stays superseded, and only the mark says it owes one. Only while it is superseded: a
    # whole tenant's deletion takes no subject's lock, and one that scrubbed the row since it
    # was read left the task's digest in a deleted row (stop 59's review).
    Memory.objects.filter(tenant_id=tenant_id, pk__in=owed, status=Status.SUPERSEDED).update(
        task_closed_at=timezone.now(),
        task_closed_sha256=digest,
        revocation_journaled_at=None,
    )
    memory_task_replaced_journal_on_commit(owed, tenant_id)


def _expired_by_close_of(tenant_id, memory_ids: list, digest: str) -> set:
    """Return those of ``memory_ids`` (expired rows) that a close of the task whose digest is
    ``digest`` expired: their ``expired`` event's reason is ``task_closed`` and it names the
    task by its id or, a replayed close's, by its digest, as their journal line does
    (``revocations.expired_memories_sql``)."""
    if not memory_ids:
        return set()
    events = MemoryEvent.objects.filter(
        tenant_id=tenant_id,
        memory_id__in=memory_ids,
        action=MemoryEvent.Action.EXPIRED,
        reason_code=TASK_CLOSED,
    ).values_list("memory_id", "details")
    return {memory_id for memory_id, details in events if _event_task_digest(details) == digest}


def _event_task_digest(details) -> str:
    """Return the digest of the task a close's ``expired`` event names (its ``details``)."""
    if not isinstance(details, dict):
        return ""
    if details.get("task_sha256"):
        return str(details["task_sha256"])
    task_id = details.get("task_id")
    return task_digest(task_id) if isinstance(task_id, str) and task_id else ""


def _expire(*, tenant_id, closing: list, actor: tuple, details: dict) -> list:
    """Expire the locked rows ``closing`` (``(pk, memory_type, policy_version)``) by their
    task's close (``memories_mark_expired``): the open review items of those that were
    waiting resolved, an ``expired`` event each (reason ``task_closed``, by ``actor``: its type and
    id, with ``details``: the task id), the conflicts they settle closed; journaled as the
    transaction commits. Return the ids."""
    now = timezone.now()
    ids = memories_mark_expired(
        [(pk, tenant_id, policy_version) for pk, _, policy_version in closing],
        reason_code=TASK_CLOSED,
        actor=actor,
        now=now,
        details=details,
    )
    # A conflict the close leaves with one candidate in use has nothing left to decide.
    conflicts_close_settled(tenant_id=tenant_id, memory_ids=ids, reason_code=TASK_CLOSED, now=now)
    # A backup taken before the close holds these in use: the journal's line has the replay
    # expire them again after a restore.
    memory_task_close_journal_on_commit(ids, tenant_id)
    return ids


@transaction.atomic
def task_close_replayed(*, principal, memory_ids: list, task_sha256: str, operation_id: str):
    """Expire again, after a restore, the memories among ``memory_ids`` that the restored
    database holds in use (or waiting for a reviewer) and bound to the task whose digest is
    ``task_sha256``, as a journal line of the operation ``operation_id`` records
    (``replay_deletions``): a task closed after the backup, whose state would be given to
    agents again. ``SubjectBeingDeleted`` if their subject (or key) has a deletion queued,
    as for a close. Return the ids expired."""
    live = Memory.objects.filter(
        tenant_id=principal.tenant_id,
        pk__in=memory_ids,
        status__in=(Status.ACTIVE, Status.PENDING_APPROVAL),
    )
    places = set(live.values_list("subject_id", "subject__external_id", "memory_key"))
    if not places:
        return []
    # The subjects' locks shared first, as a close takes its subject's, then the rows. A
    # queued deletion of the subject, or of one of their keys, leaves them to that deletion;
    # one of another key does not (it skipped them, and nothing ever expired them: stop 55's
    # audit of tasks), as a close and a revocation's replay read it.
    subjects_shared_locked(
        Subject.objects.filter(pk__in={subject for subject, _, _ in places}).order_by("pk"),
        keys={(external_id, key) for _, external_id, key in places},
    )
    # The line names the task by its digest only: the task's ids among the rows' (a task
    # scope's in either spelling, ``journaled_spellings``), then the rows bound to it as a
    # close reads them (``bound_to_task``), so a row merely carrying the task_id stays, as the
    # close left it. Locked in id order; one no longer in use once its lock is granted is
    # skipped (PostgreSQL tests the condition again).
    names = set()
    for task_id, scope_kind, scope_ref in live.values_list("task_id", "scope_kind", "scope_ref"):
        if task_id and task_digest(task_id) == task_sha256:
            names.add(task_id)
        if scope_kind == ScopeKind.TASK and task_sha256 in {
            task_digest(ref) for ref in journaled_spellings(scope_ref)
        }:
            names.add(scope_ref)
    if not names:
        return []
    bound = list(
        live.filter(bound_to_task(names))
        .select_for_update(of=("self",))
        .order_by("pk")
        .values_list("pk", "memory_type", "policy_version")
    )
    if not bound:
        return []
    return _expire(
        tenant_id=principal.tenant_id,
        closing=bound,
        actor=(principal.actor_type, principal.actor_id),
        # The digest, not the id the restored rows may not hold: journaled again as it
        # commits, the line names the same task (``revocations.expired_memories_sql``).
        details={
            "reason": f"Expired again after a restore (journal line {operation_id}).",
            "task_sha256": task_sha256,
        },
    )


def _lock_pending(waiting) -> list:
    """Lock the rows of ``waiting`` (writes waiting for a reviewer) one at a time, in id
    order; return ``(pk, memory_type, policy_version)`` of those still waiting once locked.

    One locking read of them all kept the lock of a row it had waited for even when that row,
    approved meanwhile, no longer matched and was not returned: the next approval on its key
    locked its own pending row, then the chain's new head (that row), held by the close, while
    the close waited for the approval's row, and PostgreSQL failed one of them (deadlock
    detected: stop 52's audit of races). Each row is locked in a savepoint now, rolled back,
    its lock with it, when the row no longer waits; the approved one is read with the active
    rows (``_lock_bound``)."""
    locked = []
    for pk in waiting.order_by("pk").values_list("pk", flat=True):
        savepoint = transaction.savepoint()
        row = (
            waiting.filter(pk=pk)
            .select_for_update(of=("self",))
            .values_list("pk", "memory_type", "policy_version")
            .first()
        )
        if row is None:  # approved (or rejected) while the close waited for it
            transaction.savepoint_rollback(savepoint)
            continue
        transaction.savepoint_commit(savepoint)
        locked.append(row)
    return locked


def _lock_bound(bound) -> list:
    """Lock the rows of ``bound`` (active rows), in id order; return their (pk, memory_type,
    policy_version).

    A row a correction (or a write on its key) is superseding is waited for, and then
    skipped: it is no longer active. Its new version, bound to the task as it was, committed
    meanwhile, but the locking statement's snapshot is older, so only a new statement sees
    it: while a row read before the lock is not among those locked, the rows are read again.
    Without that, the task closed, the old version superseded and the new one active: the
    task's state was used on after its close. The rows held stay held, so each round is
    about rows committed since (a new version of a held row waits for this close).
    """
    rows: list = []
    held: set = set()
    while True:
        seen = set(bound.exclude(pk__in=held).values_list("pk", flat=True))
        if not seen:
            return rows
        found = list(
            bound.exclude(pk__in=held)
            .select_for_update(of=("self",))
            .order_by("pk")
            .values_list("pk", "memory_type", "policy_version")
        )
        rows += found
        held.update(pk for pk, _, _ in found)
        if seen <= held:
            return rows
