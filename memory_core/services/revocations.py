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
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial, reduce
from operator import or_

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.deletion.ledger import (
    backups_cutoff,
    ledger_catch_up,
    ledger_write_many,
    memory_rejection_entry,
    memory_revocation_entry,
)
from memory_core.models import Memory, MemoryEvent
from memory_core.rls import tenant_atomic

logger = logging.getLogger(__name__)

# The revoked memories ``{revoked}`` selects (after ``WHERE status = 'revoked' AND``), each
# with the versions it supersedes (nearest first: one recursive walk for all of them, which
# never leaves the row's tenant) and the action and reason of its last revoking event (a row
# revoked with no such event, an import's, has none: "revoked"), oldest first. Its line's
# moment is the row's ``updated_at``: set by the revocation, a revoked row changes no more.
# The deletion sweep's catch-up and the after-commit append read this database with it,
# ``replay.ledger_from_database`` another one (as old as migration 0005: no newer column
# outside ``{revoked}``).
_REVOKED_MEMORIES_SQL = """
    WITH RECURSIVE revoked AS (
        SELECT id, tenant_id, subject_id, updated_at, supersedes_id FROM memory_core_memory
        WHERE status = 'revoked' AND {revoked}
    ), chain(root, tenant_id, id, supersedes_id, depth) AS (
        SELECT r.id, r.tenant_id, m.id, m.supersedes_id, 1
        FROM revoked r
        JOIN memory_core_memory m ON m.id = r.supersedes_id AND m.tenant_id = r.tenant_id
        UNION ALL
        SELECT c.root, c.tenant_id, m.id, m.supersedes_id, c.depth + 1
        FROM memory_core_memory m
        JOIN chain c ON m.id = c.supersedes_id AND m.tenant_id = c.tenant_id
        WHERE c.depth < 100000
    )
    SELECT r.id, r.tenant_id, r.subject_id, r.updated_at,
           coalesce((SELECT array_agg(c.id ORDER BY c.depth) FROM chain c WHERE c.root = r.id),
                    '{{}}'),
           e.action, e.reason_code
    FROM revoked r
    LEFT JOIN LATERAL (
        SELECT action, reason_code FROM memory_core_memoryevent
        WHERE memory_id = r.id AND tenant_id = r.tenant_id
          AND action IN ('revoked', 'consent_withdrawn')
        ORDER BY created_at DESC, id DESC LIMIT 1
    ) e ON true
    ORDER BY r.updated_at
"""


def revoked_memories_sql(revoked: str) -> str:
    """Return the query of the revoked memories whose condition is ``revoked`` (SQL after
    ``WHERE status = 'revoked' AND``, with ``%s`` parameters; it may end with an ORDER BY
    and a LIMIT): rows ``memory_revocation_entry_of_row`` reads."""
    return _REVOKED_MEMORIES_SQL.format(revoked=revoked)


def memory_revocation_entry_of_row(row) -> dict:
    """Return the journal line of a row of ``revoked_memories_sql``."""
    memory_id, tenant_id, subject_id, revoked_at, chain, action, reason_code = row
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
# then it is no longer rejected). Read by the same callers as ``_REVOKED_MEMORIES_SQL``, and
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


@dataclass(frozen=True)
class _Kind:
    """A memory's governance action journaled by this module: a revocation, a rejection."""

    name: str  # in log lines
    sql: Callable[[str], str]  # condition -> query of its rows
    entry_of_row: Callable[[tuple], dict]
    id_field: str  # the line's field naming the memory


_REVOCATION = _Kind(
    "revocation", revoked_memories_sql, memory_revocation_entry_of_row, "revoked_memory_id"
)
_REJECTION = _Kind(
    "rejection", rejected_memories_sql, memory_rejection_entry_of_row, "rejected_memory_id"
)


def _entries(kind: _Kind, condition: str, params: list) -> list[dict]:
    """Return the journal lines of the memories of this database of ``kind`` that
    ``condition`` selects, as the scope the caller set lets it see them."""
    with connection.cursor() as cursor:
        cursor.execute(kind.sql(condition), params)
        return [kind.entry_of_row(row) for row in cursor.fetchall()]


def memory_revocation_journal_on_commit(memory: Memory) -> None:
    """Journal the revocation of ``memory`` once the current transaction commits."""
    transaction.on_commit(
        partial(_journal_after_commit, _REVOCATION, memory.pk, memory.tenant_id), robust=True
    )


def memory_rejection_journal_on_commit(memory: Memory) -> None:
    """Journal the rejection of ``memory`` once the current transaction commits."""
    transaction.on_commit(
        partial(_journal_after_commit, _REJECTION, memory.pk, memory.tenant_id), robust=True
    )


def _entry_of(kind: _Kind, memory_id, tenant_id) -> dict | None:
    entries = _entries(kind, "id = %s AND tenant_id = %s", [memory_id, tenant_id])
    return entries[0] if entries else None


def memory_revocation_entry_of(memory_id, tenant_id) -> dict | None:
    """Return the journal line of the revoked memory ``memory_id`` of tenant ``tenant_id``
    read from this database (its chain, the action of its last revoking event), or None if
    it is not revoked (any more: deleted since, say). Run in a scope that sees its tenant."""
    return _entry_of(_REVOCATION, memory_id, tenant_id)


def memory_rejection_entry_of(memory_id, tenant_id) -> dict | None:
    """Return the journal line of the rejected memory ``memory_id`` of tenant ``tenant_id``
    read from this database, or None if it is not rejected (any more). Run in a scope that
    sees its tenant."""
    return _entry_of(_REJECTION, memory_id, tenant_id)


def _record(kind: _Kind, entries: list[dict]) -> None:
    """Record the lines ``entries`` as journaled on their rows: one UPDATE, each row named
    with its tenant (the sweep's runs in platform mode, the after-commit one in the tenant's
    transaction).

    One column for both kinds, ``revocation_journaled_at``: a row is revoked or rejected,
    never both (each leaves only a row in use or waiting for a reviewer), so it says whether
    the line of the one it is reached the journal.
    """
    by_tenant = defaultdict(list)
    for entry in entries:
        by_tenant[entry["tenant_id"]].append(entry[kind.id_field])
    rows = reduce(or_, (Q(tenant_id=t, pk__in=ids) for t, ids in by_tenant.items()))
    Memory.objects.filter(rows, revocation_journaled_at=None).update(
        revocation_journaled_at=timezone.now()
    )


def _journal_after_commit(kind: _Kind, memory_id, tenant_id) -> bool:
    """Append a committed action's journal line and record it; return whether it was.
    A failure is logged, never raised (the action is done; the sweep appends it later).

    The line is read after the commit, in a transaction of the memory's tenant (a request's
    own tenant setting ended with its transaction).
    """
    try:
        with tenant_atomic(tenant_id):
            entry = _entry_of(kind, memory_id, tenant_id)
        if entry is None:
            return False
        ledger_write_many([entry])
    except Exception:
        logger.exception(
            "memory %s: the journal append of its %s failed; the deletion sweep tries again",
            memory_id,
            kind.name,
        )
        return False
    try:
        with tenant_atomic(tenant_id):
            _record(kind, [entry])
    except Exception:
        # Appended again by the sweep: a duplicate line is harmless.
        logger.warning(
            "memory %s: %s journaled, but not recorded", memory_id, kind.name, exc_info=True
        )
    return True


def _catch_up(kind: _Kind, *, older_than: float, limit: int) -> int:
    """Append and record the lines of ``kind`` not recorded (``memory_revocations_journal``)."""
    before = timezone.now() - timedelta(seconds=older_than)
    entries = _entries(
        kind,
        "revocation_journaled_at IS NULL AND updated_at >= %s AND updated_at <= %s "
        "ORDER BY updated_at LIMIT %s",
        [backups_cutoff(), before, limit],
    )
    if not entries:
        return 0
    ledger_catch_up(entries)
    try:
        _record(kind, entries)
    except Exception:
        # Appended again by the next sweep: a duplicate line is harmless.
        logger.warning(
            "%d memory %s(s) journaled, but not recorded", len(entries), kind.name, exc_info=True
        )
    return len(entries)


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
