"""Memory revocations and rejections in the deletion journal: a restore must not put a revoked
memory back in use, nor a rejected write back in the reviewers' queue.

A memory revoked (``memory_revoke``), whose consent was withdrawn (``consent_withdraw``) or
that lost a conflict (``conflict_resolve``) is never used again; a backup taken before that
holds it in use. So each revocation is appended to the deletion journal as it commits
(``ledger.memory_revocation_entry``: ids, the action and when, never content), recorded on
the row (``Memory.revocation_journaled_at``), and ``replay_deletions`` revokes it again after
a restore (``writes.memory_revoke_replayed``). An append that fails is logged and made by the
deletion sweep (``memory_revocations_journal``).

A sensitive write a reviewer rejected (``reviews.review_reject``) is journaled alike
(``ledger.memory_rejection_entry``, recorded on the same column), made by the sweep
(``memory_rejections_journal``) when its append failed, and rejected again by the replay
(``reviews.memory_reject_replayed``): a backup taken before the rejection holds it waiting
for a reviewer, who could approve it into use.

A memory expired by its task's close (``tasks.task_close``) is journaled alike
(``ledger.memory_task_close_entry``: the task by its digest), made by the sweep
(``memory_task_closes_journal``), and expired again by the replay
(``tasks.task_close_replayed``): a backup taken before the close holds the task's state in
use, and an agent would be given the closed task's decisions again. So does an older version
bound to the task that a newer one replaced, which the close marks (``task_closed_at``) and
journals too (``memory_task_replaced_journal_on_commit``), made by the sweep
(``memory_task_replaced_journal``) when its append failed.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial, reduce
from operator import or_

from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory_core.commit_hooks import after_commit
from memory_core.deletion.ledger import (
    TASK_CLOSED,
    backups_age,
    ledger_catch_up,
    ledger_write_many,
    memory_rejection_entry,
    memory_revocation_entry,
    memory_task_close_entry,
)
from memory_core.models import Memory, MemoryEvent
from memory_core.rls import tenant_atomic

logger = logging.getLogger(__name__)

# The memories of ``{status}`` that ``{condition}`` selects, each with its moment
# (``{moment}``), the versions it supersedes (nearest first: one recursive walk for all of
# them, which never leaves the row's tenant) and the action, reason code and task digest of
# its last event of ``{actions}`` (``details``: its ``task_sha256``, a replayed close's, or
# its ``task_id`` hashed as ``ledger.task_digest`` does; ``{digest}``, the row's own, first),
# oldest first. The deletion sweep's catch-up and the
# after-commit append read this database with it, ``replay.ledger_from_database`` another one
# (as old as migration 0005: no newer column outside ``{condition}``).
_CHAINED_SQL = """
    WITH RECURSIVE picked AS (
        SELECT id, tenant_id, subject_id, {moment} AS moment, {digest} AS digest, supersedes_id
        FROM memory_core_memory
        WHERE status = '{status}' AND {condition}
    ), chain(root, tenant_id, id, supersedes_id, depth) AS (
        SELECT r.id, r.tenant_id, m.id, m.supersedes_id, 1
        FROM picked r
        JOIN memory_core_memory m ON m.id = r.supersedes_id AND m.tenant_id = r.tenant_id
        UNION ALL
        SELECT c.root, c.tenant_id, m.id, m.supersedes_id, c.depth + 1
        FROM memory_core_memory m
        JOIN chain c ON m.id = c.supersedes_id AND m.tenant_id = c.tenant_id
        WHERE c.depth < 100000
    )
    SELECT r.id, r.tenant_id, r.subject_id, r.moment,
           coalesce((SELECT array_agg(c.id ORDER BY c.depth) FROM chain c WHERE c.root = r.id),
                    '{{}}'),
           e.action, e.reason_code, coalesce(r.digest, e.task_sha256)
    FROM picked r
    LEFT JOIN LATERAL (
        SELECT action, reason_code,
               coalesce(details ->> 'task_sha256',
                        encode(sha256(convert_to(details ->> 'task_id', 'UTF8')), 'hex'))
                   AS task_sha256
        FROM memory_core_memoryevent
        WHERE memory_id = r.id AND tenant_id = r.tenant_id AND action IN ({actions})
        ORDER BY created_at DESC, id DESC LIMIT 1
    ) e ON true
    ORDER BY r.moment
"""


def _chained_sql(
    status: str, condition: str, actions: str, *, moment="updated_at", digest="NULL::text"
) -> str:
    return _CHAINED_SQL.format(
        status=status, condition=condition, actions=actions, moment=moment, digest=digest
    )


def revoked_memories_sql(revoked: str) -> str:
    """Return the query of the revoked memories whose condition is ``revoked`` (SQL after
    ``WHERE status = 'revoked' AND``, with ``%s`` parameters; it may end with an ORDER BY
    and a LIMIT): rows ``memory_revocation_entry_of_row`` reads. Its line's moment is the
    row's ``updated_at``: set by the revocation, a revoked row changes no more. A row revoked
    with no revoking event (an import's) has no action: "revoked"."""
    return _chained_sql("revoked", revoked, "'revoked', 'consent_withdrawn'")


def memory_revocation_entry_of_row(row) -> dict:
    """Return the journal line of a row of ``revoked_memories_sql``."""
    memory_id, tenant_id, subject_id, revoked_at, chain, action, reason_code, _ = row
    return memory_revocation_entry(
        memory_id=memory_id,
        tenant_id=tenant_id,
        subject_id=subject_id,
        revoked_at=revoked_at,
        action=action or MemoryEvent.Action.REVOKED,
        reason_code=reason_code or action or "revoked",
        supersedes_ids=chain,
    )


# The rejected memories ``{rejected}`` selects (after ``WHERE status = 'rejected' AND``;
# ordered only as it says: the sweep's oldest first). Its line's moment is the row's
# ``updated_at``: set by the rejection, a rejected row changes no more (a deletion scrubs it:
# then it is no longer rejected). Read by the same callers as ``_CHAINED_SQL``, and
# as old a database.
_REJECTED_MEMORIES_SQL = """
    SELECT id, tenant_id, subject_id, updated_at FROM memory_core_memory
    WHERE status = 'rejected' AND {rejected}
"""


def rejected_memories_sql(rejected: str) -> str:
    """Return the query of the rejected memories whose condition is ``rejected`` (SQL after
    ``WHERE status = 'rejected' AND``, with ``%s`` parameters; it may end with an ORDER BY
    and a LIMIT): rows ``memory_rejection_entry_of_row`` reads."""
    return _REJECTED_MEMORIES_SQL.format(rejected=rejected)


def memory_rejection_entry_of_row(row) -> dict:
    """Return the journal line of a row of ``rejected_memories_sql``."""
    memory_id, tenant_id, subject_id, rejected_at = row
    return memory_rejection_entry(
        memory_id=memory_id, tenant_id=tenant_id, subject_id=subject_id, rejected_at=rejected_at
    )


def expired_memories_sql(expired: str) -> str:
    """Return the query of the expired memories whose condition is ``expired`` (SQL after
    ``WHERE status = 'expired' AND``, with ``%s`` parameters; it may end with an ORDER BY
    and a LIMIT): rows ``memory_task_close_entry_of_row`` reads. Only a task's close owes a
    line: an expiry by ``valid_until`` is made again by the retention sweep of any restored
    database, whose row holds its ``valid_until``. Its line's moment is the row's
    ``updated_at``, set by the close (an expired row changes no more)."""
    return _chained_sql("expired", expired, "'expired'")


def memory_task_close_entry_of_row(row) -> dict | None:
    """Return the journal line of a row of ``expired_memories_sql``, or None if it owes none
    (expired by its ``valid_until``, or imported expired)."""
    _, _, _, _, _, _, reason_code, task_sha256 = row
    if reason_code != TASK_CLOSED or not task_sha256:
        return None
    return _task_close_line(row)


def _task_close_line(row) -> dict:
    """The ``memory_task_closed`` line of a row of ``_CHAINED_SQL`` (its moment the close's,
    its task digest the close's task)."""
    memory_id, tenant_id, subject_id, closed_at, chain, _, _, task_sha256 = row
    return memory_task_close_entry(
        memory_id=memory_id,
        tenant_id=tenant_id,
        subject_id=subject_id,
        closed_at=closed_at,
        task_sha256=task_sha256,
        supersedes_ids=chain,
    )


def replaced_memories_sql(replaced: str) -> str:
    """Return the query of the superseded versions a task's close named (``task_closed_at``
    set) whose condition is ``replaced`` (SQL after ``WHERE status = 'superseded' AND``, as
    ``expired_memories_sql``'s): rows ``memory_task_replaced_entry_of_row`` reads. Its line's
    moment and task are the row's ``task_closed_at`` and ``task_closed_sha256``, set by the
    close (a newer close of a task it is bound to sets them again)."""
    return _chained_sql(
        "superseded",
        f"task_closed_at IS NOT NULL AND {replaced}",
        "''",  # no event: the row holds its task's digest
        moment="task_closed_at",
        digest="task_closed_sha256",
    )


def memory_task_replaced_entry_of_row(row) -> dict:
    """Return the journal line of a row of ``replaced_memories_sql``: a close's, as for a
    memory it expired, so that the replay expires it if a restored database holds it in use
    (``tasks.task_close_replayed``)."""
    return _task_close_line(row)


@dataclass(frozen=True)
class _Kind:
    """A memory's governance action journaled by this module: a revocation, a rejection, an
    expiry by its task's close, a replaced version named by its task's close."""

    name: str  # in log lines
    sql: Callable[[str], str]  # condition -> query of its rows (id and tenant first)
    entry_of_row: Callable[[tuple], dict | None]  # None: the row owes no line
    moment: str = "updated_at"  # the column of the line's moment, which the sweep reads by


_REVOCATION = _Kind("revocation", revoked_memories_sql, memory_revocation_entry_of_row)
_REJECTION = _Kind("rejection", rejected_memories_sql, memory_rejection_entry_of_row)
_TASK_CLOSE = _Kind("task close", expired_memories_sql, memory_task_close_entry_of_row)
_TASK_REPLACED = _Kind(
    "task close (a version it found replaced)",
    replaced_memories_sql,
    memory_task_replaced_entry_of_row,
    moment="task_closed_at",
)


@dataclass
class _Read:
    """The rows of a kind read for the journal: the lines they owe, and every row read
    (``(tenant id, memory id)``: those that owe none are recorded too, as settled)."""

    entries: list[dict]
    rows: list[tuple]


def _read(kind: _Kind, condition: str, params: list) -> _Read:
    """Read the memories of this database of ``kind`` that ``condition`` selects, as the
    scope the caller set lets it see them."""
    with connection.cursor() as cursor:
        cursor.execute(kind.sql(condition), params)
        fetched = cursor.fetchall()
    entries = [entry for entry in map(kind.entry_of_row, fetched) if entry is not None]
    return _Read(entries=entries, rows=[(row[1], row[0]) for row in fetched])


def memory_revocation_journal_on_commit(memory: Memory) -> None:
    """Journal the revocation of ``memory`` once the current transaction commits."""
    after_commit(partial(_journal_after_commit, _REVOCATION, [memory.pk], memory.tenant_id))


def memory_rejection_journal_on_commit(memory: Memory) -> None:
    """Journal the rejection of ``memory`` once the current transaction commits."""
    after_commit(partial(_journal_after_commit, _REJECTION, [memory.pk], memory.tenant_id))


def memory_task_close_journal_on_commit(memory_ids: list, tenant_id) -> None:
    """Journal the expiry of ``memory_ids`` (of tenant ``tenant_id``) by their task's close
    once the current transaction commits: one append for all of them."""
    after_commit(partial(_journal_after_commit, _TASK_CLOSE, list(memory_ids), tenant_id))


def memory_task_replaced_journal_on_commit(memory_ids: list, tenant_id) -> None:
    """Journal, once the current transaction commits, the versions ``memory_ids`` (of tenant
    ``tenant_id``, superseded) that a task's close found bound to it and marked
    (``Memory.task_closed_at``): a ``memory_task_closed`` line each, with the versions it
    supersedes, as for a memory the close expired, so the replay expires whichever of them a
    restored database holds in use (``tasks.task_close_replayed``). An append that fails is
    made by the deletion sweep (``memory_task_replaced_journal``)."""
    if memory_ids:
        after_commit(partial(_journal_after_commit, _TASK_REPLACED, list(memory_ids), tenant_id))


def _record(rows: list[tuple]) -> None:
    """Record the rows ``rows`` (``(tenant id, memory id)``) as journaled: one UPDATE, each
    row named with its tenant (the sweep's runs in platform mode, the after-commit one in
    the tenant's transaction).

    One column for every kind, ``revocation_journaled_at``: a row is revoked, rejected or
    expired, one of them (each leaves only a row in use or waiting for a reviewer), so it
    says whether the line of the one it is reached the journal, or that it owes none.
    """
    by_tenant = defaultdict(list)
    for tenant_id, memory_id in rows:
        by_tenant[tenant_id].append(memory_id)
    condition = reduce(or_, (Q(tenant_id=t, pk__in=ids) for t, ids in by_tenant.items()))
    Memory.objects.filter(condition, revocation_journaled_at=None).update(
        revocation_journaled_at=timezone.now()
    )


def _journal_after_commit(kind: _Kind, memory_ids: list, tenant_id) -> bool:
    """Append a committed action's journal lines and record them; return whether they were.
    A failure is logged, never raised (the action is done; the sweep appends them later).

    The lines are read after the commit, in a transaction of the memories' tenant (a
    request's own tenant setting ended with its transaction).
    """
    named = f"{memory_ids[0]}" + (f" (and {len(memory_ids) - 1} more)" if memory_ids[1:] else "")
    try:
        with tenant_atomic(tenant_id):
            read = _read(kind, "id = ANY(%s) AND tenant_id = %s", [memory_ids, tenant_id])
        if not read.rows:
            return False
        ledger_write_many(read.entries)
    except SoftTimeLimitExceeded:
        raise  # a task's time is up (the retention sweep expires memories): it ends
    except Exception:
        logger.exception(
            "memory %s: the journal append of its %s failed; the deletion sweep tries again",
            named,
            kind.name,
        )
        return False
    try:
        with tenant_atomic(tenant_id):
            _record(read.rows)
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        # Appended again by the sweep: a duplicate line is harmless.
        logger.warning("memory %s: %s journaled, but not recorded", named, kind.name, exc_info=True)
    return True


def _catch_up(kind: _Kind, *, older_than: float, limit: int) -> int:
    """Append and record the lines of ``kind`` not recorded (``memory_revocations_journal``);
    record the rows read that owe none. Return how many lines were appended."""
    moment = kind.moment
    # Both bounds on the database's clock (``statement_timestamp()``, the ORM's ``Now()``),
    # not this host's: a sweep host fast by more than ``older_than`` appended the lines of
    # actions whose own after-commit append was still to run, a second time, and one slow by
    # an hour left a failed append's line unwritten an hour longer (stop 66).
    read = _read(
        kind,
        "revocation_journaled_at IS NULL"
        f" AND {moment} >= statement_timestamp() - %s::interval"
        f" AND {moment} <= statement_timestamp() - %s::interval"
        f" ORDER BY {moment} LIMIT %s",
        [backups_age(), timedelta(seconds=older_than), limit],
    )
    if not read.rows:
        return 0
    if read.entries:
        ledger_catch_up(read.entries)
    try:
        _record(read.rows)
    except SoftTimeLimitExceeded:
        raise  # the sweep's time is up, not a failed record (stop 61's review)
    except Exception:
        # Appended again by the next sweep: a duplicate line is harmless.
        logger.warning(
            "%d memory %s(s) journaled, but not recorded",
            len(read.entries),
            kind.name,
            exc_info=True,
        )
    return len(read.entries)


def memory_revocations_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the memories revoked more than ``older_than`` seconds ago
    whose line is not recorded (an append that failed, or a memory revoked before
    revocations were journaled: migration 0027), at most ``limit``, oldest first; return how
    many were appended. Raise LedgerAppendFailed if the journal cannot be written.

    Platform work, memories of every tenant, in three statements whatever their number: one
    reads the lines (``revoked_memories_sql``, along the index
    ``memory_revocation_unjournaled``), one write appends them (one lock, one fsync), one
    UPDATE records them. A memory revoked before the oldest backup kept
    (``ledger.backups_cutoff``) needs no line, every backup holding it revoked: it is left
    unrecorded, and the index range read starts after it.
    """
    return _catch_up(_REVOCATION, older_than=older_than, limit=limit)


def memory_rejections_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the sensitive writes rejected more than ``older_than``
    seconds ago whose line is not recorded (an append that failed, or a write rejected
    before rejections were journaled: migration 0028), as ``memory_revocations_journal``
    does the revocations' (along the index ``memory_rejection_unjournaled``)."""
    return _catch_up(_REJECTION, older_than=older_than, limit=limit)


def memory_task_closes_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the memories expired by their task's close more than
    ``older_than`` seconds ago whose line is not recorded (an append that failed, or a task
    closed before closes were journaled: migration 0031), as ``memory_revocations_journal``
    does the revocations' (along the index ``memory_expiry_unjournaled``). A row expired
    otherwise (an import's) owes no line, and is recorded as settled."""
    return _catch_up(_TASK_CLOSE, older_than=older_than, limit=limit)


def memory_task_replaced_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the replaced versions a task's close named more than
    ``older_than`` seconds ago whose line is not recorded (an append that failed), as
    ``memory_task_closes_journal`` does the expired rows' (along the index
    ``memory_replaced_unjournaled``)."""
    return _catch_up(_TASK_REPLACED, older_than=older_than, limit=limit)
