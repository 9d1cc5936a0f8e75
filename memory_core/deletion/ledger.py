"""The deletion journal outside the database: what a restored backup must forget again.

The Tombstone table is the ledger inside the database; a backup restore rolls it back along
with everything else. So every operation is also appended, as one JSON line of ids and hashes
(never content), to MEMLEDGER_DELETION_LEDGER, which lives outside the database and its
backups. ``replay_deletions --since`` reads it (or another database's Tombstone table).
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime
from pathlib import Path

from django.conf import settings

from memory_core.models import DeletionOperation, Tombstone


def ledger_path() -> Path:
    return Path(settings.MEMLEDGER_DELETION_LEDGER)


def ledger_entry(operation: DeletionOperation) -> dict:
    """Return the journal line of ``operation``: ids and hashes only."""
    tombstones = Tombstone.objects.filter(operation=operation).values_list(
        "memory_id", "subject_id", "content_hash"
    )
    return {
        "operation_id": str(operation.id),
        "tenant_id": str(operation.tenant_id),
        "subject_id": str(operation.subject_id) if operation.subject_id else None,
        "target": operation.target,
        "requested_at": operation.requested_at.isoformat(),
        "reason_code": operation.reason_code,
        "tombstones": [
            {
                "memory_id": str(memory_id),
                "subject_id": str(subject_id) if subject_id else None,
                "content_hash": digest,
            }
            for memory_id, subject_id, digest in tombstones
        ],
    }


def ledger_append(operation: DeletionOperation) -> None:
    """Append ``operation`` to the journal (fsynced). Replays skip duplicates."""
    path = ledger_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(ledger_entry(operation), sort_keys=True) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def ledger_read(*, since: datetime, path: Path | None = None) -> list[dict]:
    """Return the journal's operations requested at or after ``since``, oldest first, once each."""
    path = path or ledger_path()
    if not path.exists():
        return []
    entries: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if datetime.fromisoformat(entry["requested_at"]) >= since:
            entries.setdefault(entry["operation_id"], entry)
    return sorted(entries.values(), key=lambda e: e["requested_at"])
