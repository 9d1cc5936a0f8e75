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
from datetime import timedelta
from functools import partial

from django.db import transaction
from django.utils import timezone

from memory_core.deletion.ledger import ledger_write, memory_revocation_entry
from memory_core.models import Memory, MemoryEvent, Status
from memory_core.rls import tenant_atomic
from memory_core.selectors.memories import memory_chain_ids

logger = logging.getLogger(__name__)

# The revoking events, newest first, name the action a line records (a row revoked with no
# such event, an import's, is "revoked").
_ACTIONS = (MemoryEvent.Action.REVOKED, MemoryEvent.Action.CONSENT_WITHDRAWN)


def memory_revocation_journal_on_commit(memory: Memory) -> None:
    """Journal the revocation of ``memory`` once the current transaction commits."""
    transaction.on_commit(
        partial(_journal_memory_revocation, memory.pk, memory.tenant_id), robust=True
    )


def memory_revocation_entry_of(memory_id) -> dict | None:
    """Return the journal line of the revoked memory ``memory_id`` read from this database
    (its chain, the action of its last revoking event), or None if it is not revoked (any
    more: deleted since, say). Run in a scope that sees its tenant."""
    memory = (
        Memory.objects.filter(pk=memory_id, status=Status.REVOKED)
        .only("pk", "tenant_id", "subject_id", "updated_at")
        .first()
    )
    if memory is None:
        return None
    chain = memory_chain_ids(memory)  # oldest first; a revoked row is its chain's last
    event = (
        MemoryEvent.objects.filter(memory_id=memory_id, action__in=_ACTIONS)
        .order_by("-created_at", "-id")
        .values("action", "reason_code")
        .first()
    ) or {"action": MemoryEvent.Action.REVOKED, "reason_code": "revoked"}
    return memory_revocation_entry(
        memory_id=memory.pk,
        tenant_id=memory.tenant_id,
        subject_id=memory.subject_id,
        revoked_at=memory.updated_at,  # set by the revocation; a revoked row changes no more
        action=event["action"],
        reason_code=event["reason_code"] or event["action"],
        supersedes_ids=list(reversed(chain[: chain.index(memory.pk)])),
    )


def _journal_memory_revocation(memory_id, tenant_id) -> bool:
    """Append a committed revocation's journal line and record it; return whether it was.
    A failure is logged, never raised (the memory is revoked; the sweep appends it later).

    The line is read after the commit, in a transaction of the memory's tenant (a request's
    own tenant setting ended with its transaction).
    """
    try:
        with tenant_atomic(tenant_id):
            entry = memory_revocation_entry_of(memory_id)
        if entry is None:
            return False
        ledger_write(entry)
    except Exception:
        logger.exception(
            "memory %s: the journal append of its revocation failed; the deletion sweep "
            "tries again",
            memory_id,
        )
        return False
    try:
        with tenant_atomic(tenant_id):
            Memory.objects.filter(pk=memory_id, revocation_journaled_at=None).update(
                revocation_journaled_at=timezone.now()
            )
    except Exception:
        # Appended again by the sweep: a duplicate line is harmless.
        logger.warning(
            "memory %s: revocation journaled, but not recorded", memory_id, exc_info=True
        )
    return True


def memory_revocations_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal line of each memory revoked more than ``older_than`` seconds ago
    whose line is not recorded (an append that failed, or a memory revoked before
    revocations were journaled: migration 0027); return how many were appended. Platform
    work: memories of every tenant (index ``memory_revocation_unjournaled``)."""
    before = timezone.now() - timedelta(seconds=older_than)
    pending = (
        Memory.objects.filter(
            status=Status.REVOKED, revocation_journaled_at=None, updated_at__lte=before
        )
        .order_by("updated_at")
        .values_list("pk", "tenant_id")[:limit]
    )
    return sum(_journal_memory_revocation(pk, tenant_id) for pk, tenant_id in list(pending))
