"""Memory revocations in the deletion journal: a restore must not put a revoked memory back in use.

A memory revoked (``memory_revoke``), whose consent was withdrawn (``consent_withdraw``) or
that lost a conflict (``conflict_resolve``) is never used again; a backup taken before that
holds it in use. So each revocation is appended to the deletion journal as it commits
(``ledger.memory_revocation_entry``: ids, the action and when, never content), recorded on
the row (``Memory.revocation_journaled_at``), and ``replay_deletions`` revokes it again after
a restore (``writes.memory_revoke_replayed``). An append that fails is logged and made by the
deletion sweep (``memory_revocations_journal``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
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


def _revocation_entries(revoked: str, params: list) -> list[dict]:
    """Return the journal lines of the revoked memories of this database that ``revoked``
    selects (``revoked_memories_sql``), as the scope the caller set lets it see them."""
    with connection.cursor() as cursor:
        cursor.execute(revoked_memories_sql(revoked), params)
        return [memory_revocation_entry_of_row(row) for row in cursor.fetchall()]


def memory_revocation_journal_on_commit(memory: Memory) -> None:
    """Journal the revocation of ``memory`` once the current transaction commits."""
    transaction.on_commit(
        partial(_journal_memory_revocation, memory.pk, memory.tenant_id), robust=True
    )


def memory_revocation_entry_of(memory_id, tenant_id) -> dict | None:
    """Return the journal line of the revoked memory ``memory_id`` of tenant ``tenant_id``
    read from this database (its chain, the action of its last revoking event), or None if
    it is not revoked (any more: deleted since, say). Run in a scope that sees its tenant."""
    entries = _revocation_entries("id = %s AND tenant_id = %s", [memory_id, tenant_id])
    return entries[0] if entries else None


def _revocations_record(entries: list[dict]) -> None:
    """Record the lines ``entries`` as journaled on their rows: one UPDATE, each row named
    with its tenant (the sweep's runs in platform mode, the after-commit one in the tenant's
    transaction)."""
    by_tenant = defaultdict(list)
    for entry in entries:
        by_tenant[entry["tenant_id"]].append(entry["revoked_memory_id"])
    rows = reduce(or_, (Q(tenant_id=t, pk__in=ids) for t, ids in by_tenant.items()))
    Memory.objects.filter(rows, revocation_journaled_at=None).update(
        revocation_journaled_at=timezone.now()
    )


def _journal_memory_revocation(memory_id, tenant_id) -> bool:
    """Append a committed revocation's journal line and record it; return whether it was.
    A failure is logged, never raised (the memory is revoked; the sweep appends it later).

    The line is read after the commit, in a transaction of the memory's tenant (a request's
    own tenant setting ended with its transaction).
    """
    try:
        with tenant_atomic(tenant_id):
            entry = memory_revocation_entry_of(memory_id, tenant_id)
        if entry is None:
            return False
        ledger_write_many([entry])
    except Exception:
        logger.exception(
            "memory %s: the journal append of its revocation failed; the deletion sweep "
            "tries again",
            memory_id,
        )
        return False
    try:
        with tenant_atomic(tenant_id):
            _revocations_record([entry])
    except Exception:
        # Appended again by the sweep: a duplicate line is harmless.
        logger.warning(
            "memory %s: revocation journaled, but not recorded", memory_id, exc_info=True
        )
    return True


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
    before = timezone.now() - timedelta(seconds=older_than)
    entries = _revocation_entries(
        "revocation_journaled_at IS NULL AND updated_at >= %s AND updated_at <= %s "
        "ORDER BY updated_at LIMIT %s",
        [backups_cutoff(), before, limit],
    )
    if not entries:
        return 0
    ledger_catch_up(entries)
    try:
        _revocations_record(entries)
    except Exception:
        # Appended again by the next sweep: a duplicate line is harmless.
        logger.warning(
            "%d memory revocation(s) journaled, but not recorded", len(entries), exc_info=True
        )
    return len(entries)
