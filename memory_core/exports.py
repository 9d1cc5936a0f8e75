"""A subject's "export everything": a JSON file under MEMLEDGER_EXPORT_DIR, recorded as an Export.

Exports are a derived store: deletion rewrites every export that holds a deleted memory (and
removes a subject's exports when the whole subject is deleted), then proves that no export
row or file still names it (``memory_core.deletion.stores.ExportsStore``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.db import transaction
from django.db.models import BooleanField, DateTimeField, OuterRef
from django.db.models.expressions import RawSQL
from django.utils import timezone

from memory_core.exceptions import ExportUnavailable, NotFound, ValidationFailed
from memory_core.files import replacing
from memory_core.locks import subject_shared_lock
from memory_core.models import (
    Export,
    Memory,
    MemoryEvent,
    Status,
    Subject,
    Tombstone,
)
from memory_core.policy_check import REVOKED_RULE, InUse, memory_expiry
from memory_core.principals import SubjectPrincipal
from memory_core.selectors.policy import active_retention
from memory_core.selectors.writers import memory_writers

logger = logging.getLogger(__name__)

EXPORT_FORMAT = "memledger.export.v1"

_FIELDS = (
    "memory_type",
    "memory_class",
    "memory_key",
    "content",
    "value",
    "authority",
    "source_type",
    "consent",
    "sensitivity",
    "confidence",
    "status",
    "version",
    "environment",  # "" applies in every environment
    # Where it came from, as the portal's memory page shows it.
    "source_conversation_id",
    "source_message_id",
    "source_tool",
    "session_id",
    "task_id",
)
# The other columns a record reads (the vector is never exported, nor read for it). A column
# a record reads and the query defers costs one query per memory.
_OTHER_FIELDS = (
    "scope_kind",
    "scope_ref",
    "supersedes_id",
    "agent_id",
    "valid_from",
    "valid_until",
    "created_at",
    "updated_at",
)
# Rows fetched at a time while an export is written.
EXPORT_CHUNK = 2000


def export_dir() -> Path:
    return Path(settings.MEMLEDGER_EXPORT_DIR)


class ExportPathRefused(Exception):
    """An export's path that would name a file outside the export folder: absolute, holding
    ``..``, or reaching out through a symbolic link. Nothing is read, served or removed."""

    def __init__(self, relative: str):
        super().__init__(
            f"the export path {relative!r} is not a file inside MEMLEDGER_EXPORT_DIR: "
            "nothing was read or removed"
        )
        self.relative = relative


def export_file(relative: str) -> Path:
    """Return the file of an export's ``relative`` path (``Export.path``), below the export
    folder; raise ``ExportPathRefused`` for one that is empty, absolute, holds ``..`` or
    resolves, links followed, outside the folder (or to the folder itself).

    Every file made of an export row's path is made here (the download, the retention sweep,
    a deletion's exports step): a restored or edited row naming ``/etc/passwd`` or
    ``../x`` would otherwise be served by the portal and unlinked by the sweep (stop 69).
    Migration 0057 refuses the first two in the table too."""
    if not relative or relative.startswith("/") or ".." in relative or "\x00" in relative:
        raise ExportPathRefused(relative)
    root = export_dir()
    path = root / relative
    try:
        resolved, inside = path.resolve(), root.resolve()
    except (OSError, RuntimeError) as error:  # a loop of links
        raise ExportPathRefused(relative) from error
    if resolved == inside or not resolved.is_relative_to(inside):
        raise ExportPathRefused(relative)
    return path


def export_path(export: Export) -> Path:
    """Return the absolute path of ``export``'s file (``export_file``)."""
    return export_file(export.path)


def _memory_record(
    memory: Memory,
    exported: set,
    *,
    use: InUse,
    writers: dict | None = None,
) -> dict:
    """The record of ``memory`` as it stands at ``use.now``; ``exported``: the ids of the
    versions it may name as the one it supersedes (those the export holds: a deleted version
    leaves no id behind, as rewriting an export after a deletion clears it, ``ExportsStore``);
    ``use``: the tenant's active retention at that moment, by which it expires; ``writers``:
    ``{memory_id: name}`` of the agents that wrote the memories. ``memory.chain_ended_at``
    (``_CHAIN_ENDED_SQL``), where the row has it, is when the sweep's revoked rule made it due."""
    record = {"id": str(memory.id)}
    record.update({name: getattr(memory, name) for name in _FIELDS})
    # As the portal shows it (``InUse.state``): an active row past its valid_until is expired,
    # one past its class's retention past_retention (it said "active", though no agent is
    # given it: stop 51's audit of time), before the retention sweep reaches it.
    record["status"] = use.state(memory)
    record["scope"] = memory.scope
    record["supersedes"] = str(memory.supersedes_id) if memory.supersedes_id in exported else None
    # The agent it is private to; null: shared by the tenant's agents.
    record["agent_id"] = str(memory.agent_id) if memory.agent_id else None
    for name in ("valid_from", "valid_until", "created_at", "updated_at"):
        value = getattr(memory, name)
        record[name] = value.isoformat() if value else None
    # When it stops being used, as the portal says it (``policy_check.memory_expiry``): the
    # earlier of valid_until and the day the retention sweep deletes it by the tenant's
    # active policy. The export gave valid_until alone, null for a row the sweep deletes.
    expiry = memory_expiry(
        memory, use.retention, revoked_at=getattr(memory, "chain_ended_at", None)
    )
    record["expires_at"] = expiry.at.isoformat() if expiry.at else None
    record["expires_by_retention"] = expiry.by_retention
    # The agent whose write it is (its admission decision); null: a person, an import or
    # memledger itself wrote it.
    record["written_by_agent"] = (writers or {}).get(memory.id)
    return record


# When the retention sweep's "retention:revoked" rule takes each of the subject's rows at its
# next run, read in the rows' own statement: a revoke committed between a statement that read
# the chains and the one that read the rows left the older versions saying they had no end
# (stop 53's audits; stop 56 closed it). The rule takes a revoked preference with every
# version below it, so a row is due from the revocation of its chain's head; and an older
# superseded preference that an earlier sweep left behind (its revoked head deleted alone,
# before stop 45's chains) is due from that deletion, when every version between it and the
# deleted one is a superseded preference too (the sweep takes them a level at a time). A
# proposal is no version of the chain. A chain stays with its tenant and subject (migration
# 0002's trigger).
#
# The chains are walked once per statement, down from those heads (an uncorrelated subquery:
# PostgreSQL runs it once, before the first row), into one object of ``{id: when}`` that each
# row looks itself up in. A walk up from each row through every newer version of its chain
# (until stop 62) cost a chain of N versions N^2/2 steps: 24 s for an export of a task state
# saved 2,000 times (stop 62's audit of policies).
_CHAIN_ENDED_SQL = """
    ((WITH RECURSIVE heads (supersedes_id, ended_at, through) AS (
        SELECT head.supersedes_id,
               CASE WHEN head.status = 'revoked' THEN head.updated_at ELSE t.deleted_at END,
               head.status = 'deleted'
          FROM memory_core_memory head
          LEFT JOIN memory_core_tombstone t ON t.memory_id = head.id AND head.status = 'deleted'
          LEFT JOIN memory_core_deletionoperation o
                 ON o.id = t.operation_id AND o.reason_code = %s
         WHERE head.tenant_id = %s AND head.subject_id = %s AND head.supersedes_id IS NOT NULL
           AND ((head.status = 'revoked' AND head.memory_class = 'preference')
                OR (head.status = 'deleted' AND o.id IS NOT NULL))
    ), down (id, supersedes_id, status, ended_at, through) AS (
        SELECT below.id, below.supersedes_id, below.status, heads.ended_at, heads.through
          FROM heads JOIN memory_core_memory below ON below.id = heads.supersedes_id
         WHERE NOT heads.through
               OR (below.status = 'superseded' AND below.memory_class = 'preference')
        UNION ALL
        SELECT below.id, below.supersedes_id, below.status, down.ended_at, down.through
          FROM down JOIN memory_core_memory below ON below.id = down.supersedes_id
         WHERE NOT (down.status IN ('pending_approval', 'rejected'))
           AND (NOT down.through
                OR (below.status = 'superseded' AND below.memory_class = 'preference'))
    )
    SELECT jsonb_object_agg(ends.id, ends.ended_at)
      FROM (SELECT id, min(ended_at) AS ended_at FROM down GROUP BY id) ends
    ) ->> memory_core_memory.id::text)::timestamptz
"""


def _events_by_memory(tenant_id, memories) -> dict:
    """Return the events (oldest first) of each of ``memories``, those its row was read with
    (``event_ids``: the events made up to the export's start that the row's snapshot saw), as
    an export shows them: what happened, when, by which kind of actor and why.

    Never another memory's id (an event's ``successor``, ``supersedes`` or ``winner``):
    deleting one version of a chain must leave no trace of it in the export of the versions
    kept, and rewriting an export removes whole records only."""
    events: dict = {memory.id: [] for memory in memories}
    event_ids = [event_id for memory in memories for event_id in memory.event_ids]
    rows = (
        MemoryEvent.objects.filter(tenant_id=tenant_id)
        .filter(RawSQL("id = ANY(%s::bigint[])", (event_ids,), output_field=BooleanField()))
        .order_by("created_at", "id")
        .values_list(
            "memory_id",
            "created_at",
            "action",
            "actor_type",
            "reason_code",
            "policy_version",
            "details",
        )
    )
    for memory_id, at, action, actor_type, reason_code, policy_version, details in rows:
        event = {
            "at": at.isoformat(),
            "action": action,
            "actor_type": actor_type,
            "reason_code": reason_code,
            "policy_version": policy_version,
        }
        for key in ("rule_codes", "reason"):  # the admission's codes, the writer's reason
            if isinstance(details, dict) and key in details:
                event[key] = details[key]
        events[memory_id].append(event)
    return events


def write_json_atomic(path: Path, document, *, items_key: str = "", items=()) -> str:
    """Write ``document`` to ``path`` (``files.replacing``); return its SHA-256.

    With ``items_key``, the list at that key of ``document`` is written from ``items`` (any
    iterable, e.g. a queryset's iterator), one item at a time: the file is the one
    ``json.dumps`` makes of the whole document, but one item at a time is held as text (an
    export of 70,000 memories held every row, the whole document and its 45 MB of text at
    once).
    """
    digest = hashlib.sha256()
    with replacing(path) as handle:

        def write(text: str) -> None:
            data = text.encode()
            digest.update(data)
            handle.write(data)

        if not items_key:
            write(_dumps(document))
        else:
            # The document with an empty list, cut where the list is: the keys are sorted
            # and JSON escapes every quote inside a string, so the marker is the key's.
            marker = f"{json.dumps(items_key)}: []"
            head, _, tail = _dumps({**document, items_key: []}).partition(marker)
            write(head + marker[:-1])
            count = 0
            for item in items:
                text = _dumps(item).replace("\n", "\n    ")
                write(("," if count else "") + "\n    " + text)
                count += 1
            write(("\n  ]" if count else "]") + tail)
    return digest.hexdigest()


def write_text_atomic(path: Path, text: str) -> str:
    """Write ``text`` to ``path`` (``files.replacing``); return its SHA-256."""
    data = text.encode()
    with replacing(path) as handle:
        handle.write(data)
    return hashlib.sha256(data).hexdigest()


def _dumps(document) -> str:
    return json.dumps(document, indent=2, sort_keys=True, default=str)


def _export_subject(principal, subject_id) -> Subject:
    if isinstance(principal, SubjectPrincipal):
        if subject_id is not None and str(subject_id) != str(principal.subject_id):
            raise NotFound("No subject with this id.")
        subject_id = principal.subject_id
    if subject_id is None:
        raise ValidationFailed("Name the subject to export.", code="subject_required")
    subject = Subject.objects.filter(tenant_id=principal.tenant_id, pk=subject_id).first()
    if subject is None:
        raise NotFound("No subject with this id.")
    return subject


def _records(principal, subject: Subject, now, *, digest, memory_ids: list):
    """Yield the record of each of ``subject``'s memories (every status but deleted) that an
    export for ``principal`` holds at ``now``, oldest first; add each to ``digest`` (the
    subject first) and its id to ``memory_ids``. The digest is of what the file holds but its
    own id and time: ``Export.state_sha256``."""
    listed = Memory.objects.visible_to(principal).filter(subject=subject)
    listed = listed.exclude(status=Status.DELETED)
    memories = (
        listed.order_by("created_at", "id")
        .only("id", *_FIELDS, *_OTHER_FIELDS)
        # Which events each row shows, read with the row, in the cursor's one snapshot: read
        # a chunk later, an event committed meanwhile contradicted the row (a version shown
        # "active" with the event that superseded it: stop 51's audit of races). Events are
        # appended, never changed, so reading them by id later adds nothing the row did not see.
        # Not bounded by the document's time either: a revoke committed between that moment
        # and the cursor's snapshot showed "revoked" without its event (stop 52's audit of
        # exports).
        .annotate(
            event_ids=ArraySubquery(
                MemoryEvent.objects.filter(
                    tenant_id=subject.tenant_id, memory_id=OuterRef("pk")
                ).values("id")
            ),
            chain_ended_at=RawSQL(  # noqa: S611 - a constant statement; the values are bound
                _CHAIN_ENDED_SQL,
                (REVOKED_RULE, subject.tenant_id, subject.id),
                output_field=DateTimeField(),
            ),
        )
    )
    use = InUse.of(active_retention(subject.tenant_id), now, tenant_id=subject.tenant_id)

    def with_events(chunk):
        if not chunk:
            return
        ids = [memory.id for memory in chunk]
        events = _events_by_memory(subject.tenant_id, chunk)
        writers = {
            pk: writer.agent
            for pk, writer in memory_writers(tenant_id=subject.tenant_id, memory_ids=ids).items()
        }
        linked = [memory.supersedes_id for memory in chunk if memory.supersedes_id]
        exported = set(listed.filter(pk__in=linked).values_list("pk", flat=True))
        for memory in chunk:
            memory_ids.append(memory.id)
            record = _memory_record(memory, exported, use=use, writers=writers)
            record["events"] = events[memory.id]
            digest.update(_dumps(record).encode())
            yield record

    digest.update(_dumps(_subject_entry(subject)).encode())
    # A server-side cursor, a chunk at a time: the rows are never all in memory. Each chunk's
    # events are read in one query.
    chunk = []
    for memory in memories.iterator(chunk_size=EXPORT_CHUNK):
        chunk.append(memory)
        if len(chunk) == EXPORT_CHUNK:
            yield from with_events(chunk)
            chunk = []
    yield from with_events(chunk)


def _subject_entry(subject: Subject) -> dict:
    return {"id": str(subject.id), "external_id": subject.external_id}


def export_create(*, principal, subject_id=None) -> Export:
    """Write the subject's memories (every status but deleted) to a JSON file; record it.

    An end user exports their own subject; a reviewer or the system names ``subject_id``.
    A file that cannot be written (a full disk) raises ``ExportUnavailable``, leaving no file
    and no row.
    """
    subject = _export_subject(principal, subject_id)
    # A deletion of the subject requested meanwhile waits for this export to commit, so its
    # exports step finds the row (and one requested before is committed when we read).
    subject_shared_lock(subject.id)
    export_id = uuid.uuid4()
    started = timezone.now()  # the document's time
    relative = f"{subject.tenant_id}/{subject.id}/{export_id}.json"
    document = {
        "format": EXPORT_FORMAT,
        "export_id": str(export_id),
        "tenant_id": str(subject.tenant_id),
        "subject": _subject_entry(subject),
        "created_at": started.isoformat(),
    }
    try:
        path = export_file(relative)
    except ExportPathRefused as error:  # the tenant's or subject's folder links outside
        logger.error("the export %s was not written: %s", relative, error)
        raise ExportUnavailable() from error
    memory_ids = []
    contents = hashlib.sha256()
    records = _records(principal, subject, started, digest=contents, memory_ids=memory_ids)
    try:
        digest = write_json_atomic(path, document, items_key="memories", items=records)
    except OSError as error:
        # A full or read-only export disk: a part that is down, answered as one (the portal
        # says nothing was exported and to try again), not a failure of the request. Until
        # stop 63 nothing caught it, and the person got the bare 500 page. No row was made,
        # and no file stays: ``replacing`` removes its new file, but renames it into place
        # before it fsyncs the folder, whose failure left the whole copy (stop 63's review).
        logger.warning("the export %s could not be written: %s", path, error)
        path.unlink(missing_ok=True)
        raise ExportUnavailable() from error
    try:
        with transaction.atomic():
            export = Export.objects.create(
                id=export_id,
                tenant_id=subject.tenant_id,
                subject=subject,
                path=relative,
                memory_ids=memory_ids,
                sha256=digest,
                state_sha256=contents.hexdigest(),
                requested_by_type=principal.actor_type,
                requested_by_id=principal.actor_id,
            )
            # A deletion that committed while the file was being written: its exports step
            # may have looked before this row existed, so drop what the ledger has
            # tombstoned ourselves.
            deleted = set(
                Tombstone.objects.filter(memory_id__in_array=export.memory_ids).values_list(
                    "memory_id", flat=True
                )
            )
            if deleted:
                locked = Export.objects.select_for_update().get(pk=export.pk)
                export_remove_memories(export=locked, memory_ids=deleted)
                export.refresh_from_db()
    except BaseException:
        # No row names the file (the tenant was deleted meanwhile, the server went away, a
        # lock wait ran out): leave no file either. Only the row's insert was covered, and a
        # failure of the tombstone check after it left a full copy of the subject's memories
        # that no row named (stop 47's audit). A request that fails after this returns
        # rolls the row back and leaves the file to the retention sweep's orphan removal
        # (``export_files_orphaned_remove``, after ``MEMLEDGER_EXPORT_RETENTION_HOURS``).
        path.unlink(missing_ok=True)
        raise
    return export


def export_holds_now(export: Export, *, principal) -> bool:
    """Return whether ``export``'s file holds what exporting its subject for ``principal``
    would hold now: its records made again (each memory's status and end as of now, its
    events, its writer's name) to the same digest as the file's, ``state_sha256``. It costs
    an export's reads, not its file."""
    if not export.state_sha256:
        return False
    now = hashlib.sha256()
    for _record in _records(principal, export.subject, timezone.now(), digest=now, memory_ids=[]):
        pass
    return now.hexdigest() == export.state_sha256


def export_remove_memories(*, export: Export, memory_ids) -> bool:
    """Rewrite ``export`` without ``memory_ids``; return whether anything changed. Idempotent."""
    drop = {str(memory_id) for memory_id in memory_ids}
    path = export_path(export)
    changed = False
    data = path.read_bytes() if path.exists() else b""
    text = data.decode()
    if any(memory_id in text for memory_id in drop):
        document = json.loads(text)
        kept = [m for m in document.get("memories", []) if m.get("id") not in drop]
        # A kept row may point at a deleted one through ``supersedes``.
        for memory in kept:
            if memory.get("supersedes") in drop:
                memory["supersedes"] = None
        document["memories"] = kept
        document["rewritten_at"] = timezone.now().isoformat()
        export.sha256 = write_json_atomic(path, document)
        changed = True
    elif data:
        # Rewritten by a run whose transaction then rolled back (a worker killed in the
        # files phase): the row's hash is of the file before; it follows the file again.
        export.sha256 = hashlib.sha256(data).hexdigest()
    remaining = [m for m in export.memory_ids if str(m) not in drop]
    if changed or len(remaining) != len(export.memory_ids):
        export.memory_ids = remaining
        export.rewritten_at = timezone.now()
        # It was a digest of the removed memories' ids too, and no longer says what the file
        # holds: the file is not given again for a form sent twice.
        export.state_sha256 = ""
        export.save(update_fields=["memory_ids", "sha256", "state_sha256", "rewritten_at"])
        changed = True
    return changed


def export_delete(*, export: Export) -> None:
    """Remove ``export``'s file and row (a whole subject's deletion). Idempotent."""
    export_path(export).unlink(missing_ok=True)
    export.delete()
