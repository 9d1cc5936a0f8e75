"""Replaying deletions after a backup restore: forget again what was deleted after the backup.

The journal (``ledger.py``) or another database's ledger lists every operation requested
after the backup. For each, the restored database gets the operation (same id), its
tombstones and steps again, the rows are scrubbed, and every step is run and verified
in-process, exactly as the worker would. Replaying twice changes nothing more.

Before the deletions, the governance actions taken since the backup are applied again: API
keys revoked, agents deactivated, portal logins' access taken away (memberships removed,
logins deactivated or their staff status cleared, a restored older password made unusable,
each only on the login its line names by id and username), agents' grants and keys'
expiries set (the newest line of each), tenants' retention narrowed to their newest policy
line, then memories revoked (or whose consent was withdrawn), sensitive writes rejected and
memories expired by their task's close.
"""

from __future__ import annotations

import copy
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from memory_core.deletion.ledger import (
    AGENT_DEACTIVATED,
    AGENT_GRANT_SET,
    GOVERNANCE_TARGETS,
    GRANT_FIELDS,
    KEY_EXPIRY_SET,
    KEY_REVOKED,
    LOGIN_DEACTIVATED,
    MEMBERSHIP_REMOVED,
    MEMORY_REJECTED,
    MEMORY_REVOKED,
    MEMORY_TASK_CLOSED,
    PASSWORD_CHANGED,
    POLICY_RETENTION_SET,
    agent_deactivation_entry,
    agent_grant_entry,
    journaled_spellings,
    key_expiry_entry,
    key_revocation_entry,
    memory_key_digest,
    password_digest,
    policy_retention_entry,
    queued_entry,
    user_id_named,
    username_digest,
)
from memory_core.deletion.runner import deletion_reset, deletion_run
from memory_core.deletion.services import (
    queued_marks_clear,
    queued_subjects_lock,
    tenant_and_memories_lock,
)
from memory_core.deletion.stores import active_stores, scrub_memories
from memory_core.exceptions import Conflict, SubjectBeingDeleted, ValidationFailed
from memory_core.exports import export_dir
from memory_core.json_types import json_loads
from memory_core.locks import subject_deletion_lock
from memory_core.models import (
    Agent,
    ApiKey,
    DeletionOperation,
    DeletionStep,
    Memory,
    MemoryEvent,
    PolicyVersion,
    PortalMembership,
    RetrievalTrace,
    Status,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.models.choices import SENSITIVITY_RANK
from memory_core.policy_check import RETENTION_MAX, retention_as_swept
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.logins import logins_sessions_end
from memory_core.services.policy import policy_publish
from memory_core.services.reviews import memory_reject_replayed
from memory_core.services.revocations import (
    expired_memories_sql,
    memory_rejection_entry_of_row,
    memory_revocation_entry_of_row,
    memory_task_close_entry_of_row,
    memory_task_replaced_entry_of_row,
    rejected_memories_sql,
    replaced_memories_sql,
    revoked_memories_sql,
)
from memory_core.services.tasks import task_close_replayed
from memory_core.services.writes import memory_revoke_replayed
from memory_core.text import content_hash

# A database's rows say when a request began (requested_at, revoked_at, deletion_queued_at),
# not when it committed: one that began before a dump and committed after its snapshot (a
# large subject's request takes seconds, a command's minutes) is missing from the backup. So
# a database's ledger is read from this much before ``since``; replaying more is harmless.
# An operation is also read when it reached the journal at or after ``since``
# (``journaled_at``, as the journal's ``written_at``): a queued deletion the worker made long
# after it was queued is requested when it was queued.
DATABASE_MARGIN = timedelta(hours=1)


def ledger_from_database(*, dbname: str, since: datetime) -> list[dict]:
    """Return the ledger entries of database ``dbname`` (same server) requested since
    ``since`` less ``DATABASE_MARGIN`` or journaled since ``since`` (operations only, as the
    journal's reader takes them), its queued deletions (of whole subjects and of keys),
    its keys' revocations, its agents' deactivations, its agents' grants and keys' expiries
    set, its tenants' active policy versions published since, its memories' revocations,
    its sensitive writes' rejections and its memories' expiries by their task's close among
    them, and its logins' access taken away since, oldest first."""
    import psycopg
    from django.db import connection

    # Connected as the service's connection is, TLS (sslmode, certificates), server options
    # and timeout included: only host, port, user and password were kept, and the read fell
    # back to an unchecked certificate (stop 60's audit of backups). Not Django's adapters
    # (they load jsonb as text) nor its cursor class: the rows are read as psycopg reads them.
    params = connection.get_connection_params()
    params.pop("context", None)
    params.pop("cursor_factory", None)
    try:
        after = since - DATABASE_MARGIN
    except OverflowError:  # since the first day of year 1 (an operator's "everything")
        after = datetime.min.replace(tzinfo=since.tzinfo)
    with psycopg.connect(**{**params, "dbname": dbname}) as conn:
        # Every tenant's operations: platform mode for this read-only connection.
        conn.execute("SELECT set_config('memledger.platform', 'on', false)")
        # When an operation reached the journal: a database from before migration 0009 has no
        # such column (and recorded no such moment), read by ``requested_at`` alone.
        journaled = conn.execute(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = "
            "'memory_core_deletionoperation'::regclass AND attname = 'journaled_at' "
            "AND NOT attisdropped"
        ).fetchone()[0]
        # A whole subject's operation names the person by the digest a replay recorded on it
        # (its subject's row made back, named by its own id: ``ledger.user_id_named``), read
        # from the row's JSON: a database from before migration 0050 has no such column.
        rows = conn.execute(
            f"""
            SELECT o.id, o.tenant_id, o.subject_id, o.target, o.requested_at, o.reason_code,
                   coalesce(json_agg(json_build_object(
                       'memory_id', t.memory_id, 'subject_id', t.subject_id,
                       'content_hash', t.content_hash)) FILTER (WHERE t.id IS NOT NULL), '[]'),
                   s.external_id, coalesce(to_jsonb(o) ->> 'user_id_sha256', '')
            FROM memory_core_deletionoperation o
            LEFT JOIN memory_core_tombstone t ON t.operation_id = o.id
            LEFT JOIN memory_core_subject s ON s.id = o.subject_id
            WHERE o.requested_at >= %s
               OR {"o.journaled_at" if journaled else "NULL::timestamptz"} >= %s
            GROUP BY o.id, s.external_id ORDER BY o.requested_at
            """,  # noqa: S608 (a column name, not a value)
            [after, since],
        ).fetchall()
        # A queued deletion the worker had not made yet (ledger.queued_entry). The key read
        # from the row's JSON: a database from before migration 0023 has no such column
        # (every queued deletion there is a whole subject's).
        # Keys revoked since (ledger.key_revocation_entry): the restored database has them
        # as the backup had them, usable.
        revoked = conn.execute(
            "SELECT k.id, a.tenant_id, k.revoked_at FROM memory_core_apikey k "
            "JOIN memory_core_agent a ON a.id = k.agent_id WHERE k.revoked_at >= %s",
            [after],
        ).fetchall()
        queued = conn.execute(
            "SELECT tenant_id, id, deletion_queued_at, "
            "coalesce(to_jsonb(s) ->> 'deletion_queued_key', ''), external_id "
            "FROM memory_core_subject s "
            "WHERE deletion_queued_at >= %s ORDER BY deletion_queued_at",
            [after],
        ).fetchall()
        # Agents inactive there (ledger.agent_deactivation_entry). When, read from the row's
        # JSON: a database from before migration 0027 has no such column, and there, as for
        # an agent deactivated before it or by its tenant's deletion, it is not known: every
        # such agent is deactivated again (the old database is the later state).
        inactive = conn.execute(
            "SELECT id, tenant_id, (to_jsonb(a) ->> 'deactivated_at')::timestamptz "
            "FROM memory_core_agent a WHERE NOT is_active"
        ).fetchall()
        # Memories revoked since (ledger.memory_revocation_entry), with their chains: as the
        # deletion sweep reads this database's (``services.revocations``).
        revoked_memories = conn.execute(
            revoked_memories_sql("updated_at >= %s"), [after]
        ).fetchall()
        # Sensitive writes rejected since (ledger.memory_rejection_entry).
        rejected_memories = conn.execute(
            rejected_memories_sql("updated_at >= %s"), [after]
        ).fetchall()
        # Memories expired since, those by their task's close (ledger.memory_task_close_entry).
        expired_memories = conn.execute(
            expired_memories_sql("updated_at >= %s"), [after]
        ).fetchall()
        # And the replaced versions a close named since (``Memory.task_closed_at``): a
        # database from before migration 0045 has no such column, and recorded none.
        marked = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = "
            "'memory_core_memory'::regclass AND attname = 'task_closed_at' AND NOT attisdropped)"
        ).fetchone()[0]
        replaced_memories = (
            conn.execute(replaced_memories_sql("task_closed_at >= %s"), [after]).fetchall()
            if marked
            else []
        )
        # Agents' grants and keys' expiries set since (ledger.agent_grant_entry,
        # key_expiry_entry), with their values now. When, read from the row's JSON: a database
        # from before migration 0029 has no such column (and no such line: nothing recorded
        # when a grant was set).
        grants = conn.execute(
            "SELECT * FROM (SELECT id, tenant_id, (to_jsonb(a) ->> 'grant_changed_at')"
            "::timestamptz AS changed_at, write_types, read_types, max_sensitivity, "
            "any_subject, issues_subject_tokens FROM memory_core_agent a) grants "
            "WHERE changed_at >= %s",
            [after],
        ).fetchall()
        expiries = conn.execute(
            "SELECT * FROM (SELECT k.id, a.tenant_id, (to_jsonb(k) ->> 'expiry_changed_at')"
            "::timestamptz AS changed_at, k.expires_at FROM memory_core_apikey k "
            "JOIN memory_core_agent a ON a.id = k.agent_id) expiries WHERE changed_at >= %s",
            [after],
        ).fetchall()
        # Logins' access taken away since (ledger.membership_removal_entry, and the others of
        # ``services.logins``): the lines their changes owed, recorded or not. A database from
        # before migration 0051 has no such table (and journaled no such change).
        owed = conn.execute("SELECT to_regclass('memory_core_loginaccessline')").fetchone()[0]
        login_lines = (
            conn.execute(
                "SELECT entry FROM memory_core_loginaccessline WHERE created_at >= %s", [after]
            ).fetchall()
            if owed
            else []
        )
        # Each tenant's active policy version, if published since
        # (ledger.policy_retention_entry): the newest, which the replay applies alone.
        policies = conn.execute(
            "SELECT id, tenant_id, version, created_at, document FROM memory_core_policyversion "
            "WHERE is_active AND created_at >= %s",
            [after],
        ).fetchall()
    entries = [
        {
            "operation_id": str(op_id),
            "tenant_id": str(tenant_id),
            "subject_id": str(subject_id) if subject_id else None,
            "target": target,
            "requested_at": requested_at.isoformat(),
            "reason_code": reason,
            "tombstones": tombstones,
        }
        | user_id_named(target, external_id, recorded)
        for (
            op_id,
            tenant_id,
            subject_id,
            target,
            requested_at,
            reason,
            tombstones,
            external_id,
            recorded,
        ) in rows
    ]
    entries += [
        queued_entry(
            tenant_id=tenant_id,
            subject_id=subject_id,
            queued_at=queued_at,
            memory_key=key,
            external_id=external_id,
        )
        for tenant_id, subject_id, queued_at, key, external_id in queued
    ]
    entries += [
        key_revocation_entry(key_id=key_id, tenant_id=tenant_id, revoked_at=revoked_at)
        for key_id, tenant_id, revoked_at in revoked
    ]
    entries += [
        agent_deactivation_entry(
            agent_id=agent_id, tenant_id=tenant_id, deactivated_at=deactivated_at or since
        )
        for agent_id, tenant_id, deactivated_at in inactive
        if deactivated_at is None or deactivated_at >= after
    ]
    entries += [
        agent_grant_entry(
            agent_id=agent_id,
            tenant_id=tenant_id,
            changed_at=changed_at,
            grant=dict(zip(GRANT_FIELDS, grant, strict=True)),
        )
        for agent_id, tenant_id, changed_at, *grant in grants
    ]
    entries += [
        key_expiry_entry(
            key_id=key_id, tenant_id=tenant_id, changed_at=changed_at, expires_at=expires_at
        )
        for key_id, tenant_id, changed_at, expires_at in expiries
    ]
    entries += [
        policy_retention_entry(
            version_id=version_id,
            tenant_id=tenant_id,
            version=version,
            published_at=published_at,
            document=document,
        )
        for version_id, tenant_id, version, published_at, document in policies
    ]
    entries += [entry for (entry,) in login_lines]
    entries += [memory_revocation_entry_of_row(row) for row in revoked_memories]
    entries += [memory_rejection_entry_of_row(row) for row in rejected_memories]
    entries += [entry for entry in map(memory_task_close_entry_of_row, expired_memories) if entry]
    entries += [memory_task_replaced_entry_of_row(row) for row in replaced_memories]
    return sorted(entries, key=lambda entry: datetime.fromisoformat(entry["requested_at"]))


@transaction.atomic
def _restore_operation(entry: dict) -> DeletionOperation | None:
    """Write the entry's operation, tombstones and steps into this database; scrub the rows."""
    tenant_id = uuid.UUID(entry["tenant_id"])
    tenant = Tenant.objects.filter(pk=tenant_id).first()
    if tenant is None:
        return None  # the tenant came after the backup: nothing of it was restored
    subject_id = entry.get("subject_id")
    # The operation's subject: a row of this database, which the line's may not be.
    operation_subject = subject_id
    user_id_sha256 = ""  # the person's digest, where the subject's row cannot give it
    if subject_id and not Subject.objects.filter(pk=subject_id).exists():
        named_back = entry["target"] == DeletionOperation.Target.SUBJECT or entry.get(
            "memory_key_sha256"
        )
        if named_back and tenant.deleted_at is None:
            # Made after the backup: the operation names its row back, as a deleted identity's
            # (its own id for its name), so that its steps reach what no restored row names
            # (its export folder). A queued line holds no tombstones to name it by, and its
            # exports step scanned no folder (left open until stop 50; for a key's queued
            # line, until stop 56's audit of backups).
            Subject.objects.create(pk=subject_id, tenant_id=tenant_id, external_id=subject_id)
            # The operation keeps the line's digest of the person's user id, which the row
            # made back no longer holds: its run journals it again, and that line (with the
            # tombstones found here, the one the reader keeps) named the digest of the row's
            # id, by which a later restore's replay claimed none of the person's traces
            # (stop 63's audit of backups).
            user_id_sha256 = entry.get("user_id_sha256") or ""
            _traces_claim(tenant_id, subject_id, user_id_sha256)
        else:
            # A memory's line names no row back, and a tenant deleted here takes none
            # (migration 0011): the second replay, from the damaged database, made one back
            # in the tenant the journal's replay had just deleted, the trigger refused it,
            # and every later line was left unreplayed (stop 59's audit of backups). The
            # operation names no subject; its tombstones name the line's (below), whose
            # export folder its steps scan.
            operation_subject = None
    memory_ids = {uuid.UUID(t["memory_id"]) for t in entry["tombstones"]}
    exported: dict[uuid.UUID, str] = {}
    if entry["target"] != DeletionOperation.Target.TENANT:
        _lock_subjects(subject_id, memory_ids)
    if entry["target"] == DeletionOperation.Target.SUBJECT and subject_id and entry.get("queued"):
        # A queued request's line (``ledger.queued_entry``, from the journal or the damaged
        # database) names no memory: every one the subject has, as the worker's request would
        # have taken them (none is written about it while it is queued). Any other line
        # deletes the memories its tombstones name, none for an operation that held none: it
        # took every live memory of the subject, those written about it after the request
        # too, which nobody asked to delete (stop 54's audit of deletion and its review).
        memory_ids |= set(
            Memory.objects.filter(subject_id=subject_id)
            .exclude(status=Status.DELETED)
            .values_list("pk", flat=True)
        )
        # And every one the subject's export files hold (below): those written after the
        # backup are no restored row, and their ids and words reached no step's search (the
        # exports step removed the files unread, and the evaluation files kept their copies
        # until stop 59's audit of backups).
        exported = _exported(tenant_id, subject_id)
    elif entry.get("memory_key_sha256") and subject_id:
        # A key's queued line (ledger.queued_entry): the subject's memories on the key it names
        # by its digest, as the worker's request would have taken them.
        on_key = (
            Memory.objects.filter(subject_id=subject_id)
            .exclude(status=Status.DELETED)
            .exclude(memory_key="")
            .values_list("pk", "memory_key")
        )
        memory_ids |= {
            pk
            for pk, key in on_key
            if entry["memory_key_sha256"]
            in {memory_key_digest(spelt) for spelt in journaled_spellings(key)}
        }
        # And those on the key the subject's export files hold (below).
        exported = _exported(tenant_id, subject_id, entry["memory_key_sha256"])
    elif entry["target"] == DeletionOperation.Target.TENANT:
        # As the request does: the rows of its subjects whose deletion is queued, its rows,
        # then the tenant row FOR UPDATE, which waits for a transaction that already inserted
        # a row of the tenant (the UPDATE below alone, FOR NO KEY UPDATE, did not: that
        # write's memory committed after the replay, active).
        queued = queued_subjects_lock(tenant_id)
        tenant_and_memories_lock(tenant_id, every_row=True)
        # Their marks cleared, as the request clears them: left as restored, the sweep sent
        # their tasks and a worker made a deletion in the deleted tenant (stop 60's audit of
        # backups).
        queued_marks_clear(queued)
        memory_ids |= set(
            Memory.objects.filter(tenant_id=tenant_id)
            .exclude(status=Status.DELETED)
            .values_list("pk", flat=True)
        )
        # Closed again before its memories' tombstones are written: from here on the
        # restored tenant takes no new rows (migration 0011) and its keys no requests.
        Tenant.objects.filter(pk=tenant_id, deleted_at=None).update(
            deleted_at=datetime.fromisoformat(entry["requested_at"])
        )
        ApiKey.objects.filter(agent__tenant_id=tenant_id, revoked_at=None).update(
            revoked_at=timezone.now()
        )
    # The exported memories the restored database lacks (written after the backup): no row
    # names them, so the exports step, which finds a file's records by the operation's ids,
    # left their words in the files, and the evaluation step, by ids and content hashes, their
    # copies.
    restored_ids = Memory.objects.filter(pk__in=list(exported)).values_list("pk", flat=True)
    for pk in restored_ids:  # found above, or left out above (deleted already)
        del exported[pk]
    memory_ids |= set(exported)
    operation, created = DeletionOperation.objects.get_or_create(
        pk=entry["operation_id"],
        defaults={
            "tenant_id": tenant_id,
            "subject_id": operation_subject,
            "target": entry["target"],
            "memory_ids": sorted(memory_ids),
            "requested_by_type": "system",
            "requested_by_id": "replay_deletions",
            "reason_code": entry.get("reason_code") or "replay",
            "requested_at": datetime.fromisoformat(entry["requested_at"]),
            "user_id_sha256": user_id_sha256,
        },
    )
    if not created:
        operation.memory_ids = sorted(set(operation.memory_ids) | memory_ids)
        operation.save(update_fields=["memory_ids"])
        deletion_reset(operation=operation)
    present = set(
        Tombstone.objects.filter(memory_id__in_array=operation.memory_ids).values_list(
            "memory_id", flat=True
        )
    )
    restored = {
        pk: (subject_id, content_hash, memory_key_digest(key) if key else "")
        for pk, subject_id, content_hash, key in Memory.objects.filter(
            pk__in_array=operation.memory_ids
        ).values_list("pk", "subject_id", "content_hash", "memory_key")
    }
    # The ledger's digest of each memory's key (``Tombstone.memory_key_sha256``): a restored
    # row's, "" once deleted (no journal line names a memory's key); one the exports alone
    # hold is on the key whose digest a key's line names ("" for a whole subject's: none).
    exported_key = {str(pk): entry.get("memory_key_sha256", "") for pk in exported}
    hashes = {str(pk): digest for pk, digest in exported.items()}
    hashes.update({t["memory_id"]: t.get("content_hash", "") for t in entry["tombstones"]})
    # A memory the restored database does not hold (made after the backup) is the journal's
    # subject's: its tombstone names that subject, whose export folder the steps then scan
    # (no row of the subject was restored either, so the operation names none). With no
    # subject, the exports step scanned no folder and verified a file that still held it.
    journal_subjects = {t["memory_id"]: t.get("subject_id") for t in entry["tombstones"]}
    tombstones = []
    for memory_id in operation.memory_ids:
        if memory_id in present:
            continue
        subject_id, content_hash, key_digest = restored.get(memory_id, (None, "", ""))
        subject_id = (
            subject_id or journal_subjects.get(str(memory_id)) or entry.get("subject_id") or None
        )
        # The journal's hash, else the restored row's (a queued line has no tombstones, and a
        # subject's or tenant's rows the journal did not list have none there): the
        # evaluation step finds verbatim copies by these hashes.
        content_hash = hashes.get(str(memory_id)) or content_hash
        tombstones.append(
            Tombstone(
                tenant_id=tenant_id,
                subject_id=subject_id,
                memory_id=memory_id,
                content_hash=content_hash,
                memory_key_sha256=key_digest or exported_key.get(str(memory_id), ""),
                operation=operation,
            )
        )
    Tombstone.objects.bulk_create(tombstones)
    existing = set(operation.steps.values_list("store", flat=True))
    DeletionStep.objects.bulk_create(
        [
            DeletionStep(operation=operation, store=store.name)
            for store in active_stores(operation.target)
            if store.name not in existing
        ]
    )
    # The rows in id order before the scrub, as a deletion request takes them: the scrub's
    # one UPDATE takes them in the table's order, and a resolution of a conflict (or a write)
    # holding a row of a smaller id while waiting for one the UPDATE held closed a cycle.
    list(
        Memory.objects.filter(pk__in_array=operation.memory_ids)
        .select_for_update()
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    scrub_memories(operation.memory_ids)
    return operation


def _traces_claim(tenant_id, subject_id, user_id_sha256: str | None) -> None:
    """Name by the subject's row made back the restored traces of retrievals for it made before
    it was known (no subject; its user id's digest, which a whole subject's line holds:
    ``ledger.user_id_named``). The operation's traces step finds those by its subjects'
    external ids, and the row made back is named by its own id: they survived the replay
    (stop 58's review)."""
    if user_id_sha256:
        RetrievalTrace.objects.filter(
            tenant_id=tenant_id, subject__isnull=True, user_id_sha256=user_id_sha256
        ).update(subject_id=subject_id)


def _exported(tenant_id, subject_id, key_sha256: str | None = None) -> dict[uuid.UUID, str]:
    """Return the memories the subject's export files hold (only those on the key whose
    digest is ``key_sha256``, if given), by id, with the content hash of each record's
    content ("" for none).

    Every file of the subject's folder is read, those a restored row describes too (their
    memories are restored rows, found anyway). A file that is not an export's JSON is left
    to the exports step, whose verification names it.
    """
    folder = export_dir() / str(tenant_id) / str(subject_id)
    found: dict[uuid.UUID, str] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.iterdir()):
        try:
            document = json_loads(path.read_bytes().decode()) if path.is_file() else None
        except (OSError, ValueError):
            continue
        records = document.get("memories") if isinstance(document, dict) else None
        for record in records if isinstance(records, list) else []:
            if not isinstance(record, dict):
                continue
            key = record.get("memory_key")
            if key_sha256 and not (
                isinstance(key, str)
                and key_sha256 in {memory_key_digest(spelt) for spelt in journaled_spellings(key)}
            ):
                continue
            try:
                memory_id = uuid.UUID(str(record.get("id")))
            except ValueError:
                continue
            content = record.get("content")
            found[memory_id] = content_hash(content) if isinstance(content, str) and content else ""
    return found


def _lock_subjects(subject_id, memory_ids) -> None:
    """Take the subjects' deletion locks, as a deletion request does, before any row lock.

    A retrieval or a write of the subject in flight finishes first (its trace or its new
    version is then in the database for the steps to find), and none starts until the
    replayed operation's rows are scrubbed: services may run while a replay does. A whole
    tenant takes none: it locks its queued subjects' rows, its rows and its tenant row as its
    request does (``services.tenant_and_memories_lock``), and its keys are revoked in the same
    transaction.
    """
    subjects = set(
        Memory.objects.filter(pk__in_array=list(memory_ids)).values_list("subject_id", flat=True)
    )
    if subject_id:
        subjects.add(uuid.UUID(str(subject_id)))
    for subject in sorted(subjects, key=str):
        subject_deletion_lock(subject)


def _key_revoke(entry: dict) -> int:
    """Revoke again the key a revocation's line names (absent: made after the backup, and
    unknown here); return 1 if it was usable."""
    return ApiKey.objects.filter(pk=entry["revoked_key_id"], revoked_at=None).update(
        revoked_at=datetime.fromisoformat(entry["requested_at"])
    )


def _agent_deactivate(entry: dict) -> int:
    """Deactivate again the agent a deactivation's line names (absent: made after the
    backup, and unknown here); return 1 if it was active. Its keys stay as they are: every
    one of them is refused while the agent is inactive. Not journaled again here: the deletion
    sweep appends the line of the agent, whose restored row records none."""
    return Agent.objects.filter(pk=entry["deactivated_agent_id"], is_active=True).update(
        is_active=False, deactivated_at=datetime.fromisoformat(entry["requested_at"])
    )


def _named_login(user, entry: dict) -> bool:
    """Whether ``user`` (None: this database lacks the login) is the login a line names: by
    its id and its username's digest. A restore hands the id out again (the sequence comes
    back with the backup), and a replay run again once logins were made since deactivated
    another, or made its password unusable, where the line matched the id alone (stop 64's
    review of backups)."""
    return user is not None and username_digest(user.get_username()) == entry.get("username_sha256")


def _membership_remove(entry: dict) -> int:
    """Delete again the portal membership a removal's line names, if the restored database
    holds it as the line names it (the same row, of the same login, tenant, role and
    subject); return 1 if it did. A membership added since, the same login's to the same
    place too, is another row: left as it is."""
    membership = (
        PortalMembership.objects.select_related("user")
        .filter(
            pk=int(entry["removed_membership_id"]),
            user_id=int(entry["user_id"]),
            tenant_id=entry["tenant_id"],
            role=entry["role"],
            subject_id=entry["subject_id"],
        )
        .first()
    )
    if membership is None or not _named_login(membership.user, entry):
        return 0
    membership.delete()
    return 1


def _login_deactivate(entry: dict) -> int | None:
    """Clear again the flags a deactivation's line names (``ledger.LOGIN_FLAGS``) on the
    login it names (absent: made after the backup, or deleted); return its id if one was
    set. Not journaled again: the line stays in the journal."""
    user = get_user_model().objects.filter(pk=int(entry["deactivated_user_id"])).first()
    if not _named_login(user, entry):
        return None
    cleared = [flag for flag in entry["flags"] if getattr(user, flag)]
    if not cleared:
        return None
    for flag in cleared:
        setattr(user, flag, False)
    user.save(update_fields=cleared)
    return user.pk


def _passwords_replay(lines: dict[str, dict]) -> list[str]:
    """Make unusable the password of each login whose newest password line names another
    hash than the restored database's (the restore brought back an older password, one that
    leaked, say); return their ids. A login set a password since that line holds that line's
    hash, and one this database lacks (or another login holding its id), or whose password
    is unusable already, is left."""
    users = get_user_model().objects.in_bulk([int(pk) for pk in lines])
    unusable = []
    for pk, line in sorted(lines.items()):
        user = users.get(int(pk))
        if not _named_login(user, line) or not user.has_usable_password():
            continue
        if password_digest(user.password) == line["password_hash_sha256"]:
            continue
        user.set_unusable_password()
        user.save(update_fields=["password"])
        unusable.append(pk)
    return unusable


@dataclass
class SettingsRestored:
    """What the replay of a kind of setting (agents' grants, keys' expiries) did."""

    restored: int = 0  # rows narrowed to their newest line's values (they were wider)
    skipped: int = 0  # rows a line names that this database does not hold
    not_widened: list[str] = field(default_factory=list)  # rows a line would have widened


def _newest(entries: list[dict], target: str, row: str) -> dict[str, dict]:
    """Return the newest line of ``target`` of each row its lines name (the field ``row``):
    the one that set the row last, which the replay applies alone."""
    newest: dict[str, dict] = {}
    for entry in entries:
        if entry["target"] != target:
            continue
        kept = newest.get(entry[row])
        moment = datetime.fromisoformat(entry["requested_at"])
        if kept is None or moment >= datetime.fromisoformat(kept["requested_at"]):
            newest[entry[row]] = entry
    return newest


def _settings_replay(
    lines: dict[str, dict], model, moment: str, journaled: str, values, narrowed
) -> SettingsRestored:
    """Narrow each row of ``model`` the newest ``lines`` name to what its line allows, and set
    ``moment`` to the line's moment, where the row allows more and was not set later itself (a
    line older than the backup's own setting of it, read with a ``--since`` before the
    backup's time); count the rows it lacks (made after the backup).

    ``values(line)`` reads a line's fields (field: value); ``narrowed(values, row)`` returns
    the row's fields at the least of the two: the replay only ever takes access away, as
    every other line's does. What a line allows beyond the row (a grant widened, an expiry
    removed or put off since the backup) is not given back from a file: the row is named in
    ``not_widened``, for an administrator to set again. Not journaled again here: the
    deletion sweep appends the line of a row whose ``journaled`` is empty."""
    result = SettingsRestored()
    rows = model.objects.in_bulk([uuid.UUID(pk) for pk in lines])
    for pk, line in lines.items():
        row = rows.get(uuid.UUID(pk))
        if row is None:
            result.skipped += 1
            continue
        at = datetime.fromisoformat(line["requested_at"])
        if getattr(row, moment) is not None and getattr(row, moment) > at:
            continue
        asked = values(line)
        new = narrowed(asked, row)
        if not all(_same(new[name], value) for name, value in asked.items()):
            result.not_widened.append(pk)
        if all(_same(getattr(row, name), value) for name, value in new.items()):
            continue
        model.objects.filter(pk=row.pk).update(**new, **{moment: at, journaled: None})
        result.restored += 1
    return result


def _same(value, other) -> bool:
    """Whether a row's value is a line's: lists (a grant's types) as sets."""
    if isinstance(value, list) and isinstance(other, list):
        return set(value) == set(other)
    return value == other


def _grant_of(line: dict) -> dict:
    return {name: line[name] for name in GRANT_FIELDS}


def _grant_narrowed(grant: dict, agent: Agent) -> dict:
    """The least of the agent's grant and ``grant``: the types both allow, the lower
    sensitivity, each flag only if both set it (an issuer of tokens acts for any subject in
    both, so in the result too)."""
    least = {}
    for name in ("write_types", "read_types"):
        least[name] = sorted(set(getattr(agent, name)) & set(grant[name]))
    least["max_sensitivity"] = min(
        agent.max_sensitivity, grant["max_sensitivity"], key=lambda s: SENSITIVITY_RANK[s]
    )
    for name in ("any_subject", "issues_subject_tokens"):
        least[name] = bool(getattr(agent, name)) and bool(grant[name])
    return least


def _expiry_of(line: dict) -> dict:
    expires_at = line["expires_at"]
    return {"expires_at": None if expires_at is None else datetime.fromisoformat(expires_at)}


def _expiry_narrowed(expiry: dict, key: ApiKey) -> dict:
    """The earlier of the key's expiry and ``expiry``'s (none: never)."""
    times = [t for t in (key.expires_at, expiry["expires_at"]) if t is not None]
    return {"expires_at": min(times) if times else None}


@dataclass
class PoliciesRestored:
    """What the replay of tenants' policy retention lines did."""

    restored: int = 0  # tenants given a new version, their retention narrowed to the line's
    skipped: int = 0  # lines that changed nothing (tenant unknown, as short, older)
    not_widened: dict[str, list[str]] = field(default_factory=dict)  # tenant: keys kept shorter
    not_restored: dict[str, str] = field(default_factory=dict)  # tenant: why (no publish)


def _newest_policies(entries: list[dict]) -> dict[str, dict]:
    """Return the newest policy retention line of each tenant: by when its version was
    published (``requested_at``), then by its version number."""
    newest: dict[str, dict] = {}
    for entry in entries:
        if entry["target"] != POLICY_RETENTION_SET:
            continue
        tenant_id = str(uuid.UUID(entry["tenant_id"]))
        kept = newest.get(tenant_id)
        if kept is None or _published(entry) >= _published(kept):
            newest[tenant_id] = entry
    return newest


def _published(entry: dict) -> tuple[datetime, int]:
    return datetime.fromisoformat(entry["requested_at"]), entry["version"]


def _longer(value: int | None, other: int | None) -> bool:
    """Whether the retention period ``value`` keeps longer than ``other`` (None: forever)."""
    return other is not None and (value is None or value > other)


def _policies_replay(lines: dict[str, dict]) -> PoliciesRestored:
    """Narrow each tenant's retention to its newest line's, key by key: where the line's
    period is shorter than the restored active policy's as the sweep reads it
    (``retention_as_swept``; a key the document lacks at its default, null no limit), a new
    version is published (``policy_publish``: journaled again as it commits) whose document
    is the restored active one with those keys set to the line's, stamped with the line's
    time, as ``_settings_replay`` stamps a row. A key the line keeps longer (a retention
    lengthened, or its limit removed, since the backup) is not given back from a file: the
    tenant is named in ``not_widened`` with those keys, for an administrator to publish
    again. Only the line's tenant is read or written, in its own scope.

    Skipped (nothing written): a tenant this database lacks (made after the backup) or
    deleted, a line published before the restored active version (read with a ``--since``
    before the backup's time: the backup's own later version stands) or before the line an
    earlier replay's version came from, and a line no shorter on any key. A restored
    document ``policy_publish`` refuses (stored before a bound of ``policy_errors``) is named
    in ``not_restored``, nothing published.
    """
    result = PoliciesRestored()
    for tenant_id, line in sorted(lines.items()):
        tenant = Tenant.objects.filter(pk=tenant_id, deleted_at=None).first()
        if tenant is None:
            result.skipped += 1
            continue
        published_at = datetime.fromisoformat(line["requested_at"])
        with tenant_scope(tenant.pk):
            active = PolicyVersion.objects.filter(tenant=tenant, is_active=True).first()
            if active is not None and active.created_at > published_at:
                result.skipped += 1
                continue
            # No active version: the sweep reads no retention at all (it limits nothing).
            restored = (
                retention_as_swept(active.document) if active else dict.fromkeys(RETENTION_MAX)
            )
            # Read as the sweep reads it too: a class's 0 of a line journaled before stop 51
            # (refused since) is 1, as the restored version's is; compared raw, it was
            # "shorter", and its publication refused: the tenant kept the backup's longer
            # retention (stop 51's audit of an upgrade).
            asked = retention_as_swept({"retention": line["retention"]})
            wider = [key for key in RETENTION_MAX if _longer(asked[key], restored[key])]
            if wider:
                result.not_widened[tenant_id] = wider
            narrower = {
                key: asked[key] for key in RETENTION_MAX if _longer(restored[key], asked[key])
            }
            if not narrower:
                result.skipped += 1
                continue
            document = copy.deepcopy(active.document) if active else {}
            if not isinstance(document, dict):
                result.not_restored[tenant_id] = "the restored policy is not a JSON object"
                continue
            retention = document.get("retention")
            retention = dict(retention) if isinstance(retention, dict) else {}
            # Without a version the document is the line's retention whole: a key it leaves
            # out would be read at its default (trace_days), shorter than the line's null.
            retention.update(narrower if active else asked)
            document["retention"] = retention
            try:
                # Stamped with the line's time, not the replay's: the second replay, from the
                # damaged database, compares its line with this version's time, and a
                # retention shortened after this line (its append failed) was skipped as
                # older than the replay, the tenant left with the longer one (stop 63's audit
                # of backups).
                policy_publish(
                    tenant=tenant,
                    document=document,
                    note=(
                        f"retention of version {line['version']} restored by "
                        "replay_deletions from the journal"
                    ),
                    published_at=published_at,
                )
            except ValidationFailed as exc:
                paths = ", ".join(sorted(exc.details or {})) or exc.message
                result.not_restored[tenant_id] = f"the restored policy is invalid: {paths}"
                continue
            result.restored += 1
    return result


# What a memory's replayed revocation may record: the revoking services' actions and reason
# codes (a line is read from a file: anything else is recorded as a plain revoke).
_REVOKE_ACTIONS = {MemoryEvent.Action.REVOKED, MemoryEvent.Action.CONSENT_WITHDRAWN}
_REVOKE_REASONS = {"revoked", "consent_withdrawn", "conflict_lost"}


@dataclass
class MemoryRevocations:
    """What the replay of memory revocations did."""

    revoked: int = 0  # memories in use (or waiting for a reviewer) revoked again
    pending: int = 0  # of which were waiting for a reviewer: their review item resolved
    skipped: dict = field(default_factory=dict)  # memory id: why it was not revoked


def _memory_revoke(entry: dict, result: MemoryRevocations) -> None:
    """Revoke again the memory a revocation's line names, or the versions of its chain the
    backup holds in use (``supersedes_ids``: a revoked correction written after the backup
    is unknown here, and the version it corrected is in use again).

    A version the backup holds waiting for a reviewer is revoked too, its review item
    resolved as a revoke resolves it: in the database the line came from it was revoked, or
    approved and superseded since, and never in use at the end; a reviewer approving it now
    would put it in use. One whose subject (or key) has a deletion queued is left to that
    deletion and named (``subject_being_deleted``); a tenant deleted here has nothing in
    use. Each revoke is a service call in the memory's tenant (events, review items,
    conflicts settled, journaled again as it commits).
    """
    tenant_id = uuid.UUID(entry["tenant_id"])
    if not Tenant.objects.filter(pk=tenant_id, deleted_at=None).exists():
        return  # made after the backup, or deleted: nothing of it is in use
    action = entry.get("action")
    action = action if action in _REVOKE_ACTIONS else MemoryEvent.Action.REVOKED
    reason = entry.get("reason_code")
    reason = reason if reason in _REVOKE_REASONS else "revoked"
    ids = [entry["revoked_memory_id"], *entry.get("supersedes_ids", [])]
    principal = SystemPrincipal(tenant_id=tenant_id, name="replay_deletions")
    with tenant_scope(tenant_id):
        in_use = list(
            Memory.objects.filter(
                tenant_id=tenant_id,
                pk__in=ids,
                status__in=(Status.ACTIVE, Status.PENDING_APPROVAL),
            )
            .order_by("pk")
            .values_list("pk", "status")
        )
        for memory_id, status in in_use:
            try:
                memory_revoke_replayed(
                    principal=principal,
                    memory_id=memory_id,
                    action=action,
                    reason_code=reason,
                    operation_id=entry["operation_id"],
                )
            except SubjectBeingDeleted:
                result.skipped[str(memory_id)] = "subject_being_deleted"
                continue
            except Conflict:
                continue  # revoked (or deleted) meanwhile: not in use
            result.revoked += 1
            result.pending += status == Status.PENDING_APPROVAL


@dataclass
class MemoryRejections:
    """What the replay of sensitive writes' rejections did."""

    rejected: int = 0  # writes waiting for a reviewer rejected again
    skipped: dict = field(default_factory=dict)  # memory id: why it was not rejected


def _memory_reject(entry: dict, result: MemoryRejections) -> None:
    """Reject again the sensitive write a rejection's line names if the restored database
    holds it waiting for a reviewer (``reviews.memory_reject_replayed``: its review item
    resolved as rejected, journaled again as it commits). One already rejected, absent
    (written after the backup) or no longer pending is left as it is; one whose subject (or
    key) has a deletion queued is left to that deletion and named
    (``subject_being_deleted``); a tenant deleted here has no queue."""
    tenant_id = uuid.UUID(entry["tenant_id"])
    if not Tenant.objects.filter(pk=tenant_id, deleted_at=None).exists():
        return
    principal = SystemPrincipal(tenant_id=tenant_id, name="replay_deletions")
    memory_id = entry["rejected_memory_id"]
    with tenant_scope(tenant_id):
        if not Memory.objects.filter(
            tenant_id=tenant_id, pk=memory_id, status=Status.PENDING_APPROVAL
        ).exists():
            return
        try:
            memory_reject_replayed(
                principal=principal, memory_id=memory_id, operation_id=entry["operation_id"]
            )
        except SubjectBeingDeleted:
            result.skipped[str(memory_id)] = "subject_being_deleted"
            return
        except Conflict:
            return  # decided (or deleted) meanwhile: not waiting any more
        result.rejected += 1


@dataclass
class TaskCloses:
    """What the replay of memories expired by their task's close did."""

    expired: int = 0  # memories in use (or waiting for a reviewer) expired again
    skipped: dict = field(default_factory=dict)  # memory id: why it was not expired


def _task_close(entry: dict, result: TaskCloses) -> None:
    """Expire again the memory a task close's line names, or the version of its chain the
    backup holds in use (``supersedes_ids``: one written after the backup is unknown here),
    if it is still bound to the task the line names by its digest
    (``tasks.task_close_replayed``: review items resolved, events, conflicts settled,
    journaled again as it commits). One whose subject (or key) has a deletion queued is left
    to that deletion and named (``subject_being_deleted``); a tenant deleted here has
    nothing in use."""
    tenant_id = uuid.UUID(entry["tenant_id"])
    if not Tenant.objects.filter(pk=tenant_id, deleted_at=None).exists():
        return
    principal = SystemPrincipal(tenant_id=tenant_id, name="replay_deletions")
    with tenant_scope(tenant_id):
        try:
            expired = task_close_replayed(
                principal=principal,
                memory_ids=[entry["expired_memory_id"], *entry.get("supersedes_ids", [])],
                task_sha256=entry.get("task_sha256", ""),
                operation_id=entry["operation_id"],
            )
        except SubjectBeingDeleted:
            result.skipped[entry["expired_memory_id"]] = "subject_being_deleted"
            return
    result.expired += len(expired)


# How many progress lines a replay's deletions log (one every 5 % of them).
PROGRESS_PARTS = 20


def replay_deletions(*, entries: list[dict], log=None) -> dict:
    """Re-apply every entry to this database and run its steps; return the counts.

    ``log(message)`` is told when the governance lines are applied, then the deletion lines
    replayed every 5 % of them (``PROGRESS_PARTS``): each runs its steps here, some 80 ms a
    line of one memory, and a replay of weeks of deletions said nothing of how far it had got
    until its end (stop 68's audit of the commands)."""
    log = log or (lambda message: None)
    started = time.monotonic()
    # Keys, agents and logins first: cheap, independent, and the most urgent (a leaked key, a
    # misbehaving agent, a departed reviewer); then the memories revoked, the writes rejected
    # and the memories expired by their task's close, in the journal's order, each a short
    # transaction. A deletion that raises stops the loop, and what it left in use (or waiting
    # for a reviewer) would stay so.
    keys_revoked = sum(_key_revoke(entry) for entry in entries if entry["target"] == KEY_REVOKED)
    agents_deactivated = sum(
        _agent_deactivate(entry) for entry in entries if entry["target"] == AGENT_DEACTIVATED
    )
    memberships_removed = sum(
        _membership_remove(entry) for entry in entries if entry["target"] == MEMBERSHIP_REMOVED
    )
    deactivated = {
        _login_deactivate(entry) for entry in entries if entry["target"] == LOGIN_DEACTIVATED
    } - {None}
    unusable = _passwords_replay(_newest(entries, PASSWORD_CHANGED, "password_user_id"))
    # Their sessions were made with the access the restore brought back.
    sessions_ended = logins_sessions_end(deactivated | {int(pk) for pk in unusable})
    grants = _settings_replay(
        _newest(entries, AGENT_GRANT_SET, "grant_agent_id"),
        Agent,
        "grant_changed_at",
        "grant_journaled_at",
        _grant_of,
        _grant_narrowed,
    )
    expiries = _settings_replay(
        _newest(entries, KEY_EXPIRY_SET, "expiry_key_id"),
        ApiKey,
        "expiry_changed_at",
        "expiry_journaled_at",
        _expiry_of,
        _expiry_narrowed,
    )
    policies = _policies_replay(_newest_policies(entries))
    memories, rejections, closes = MemoryRevocations(), MemoryRejections(), TaskCloses()
    for entry in entries:
        if entry["target"] == MEMORY_REVOKED:
            _memory_revoke(entry, memories)
        elif entry["target"] == MEMORY_REJECTED:
            _memory_reject(entry, rejections)
        elif entry["target"] == MEMORY_TASK_CLOSED:
            _task_close(entry, closes)
    deletions = [entry for entry in entries if entry["target"] not in GOVERNANCE_TARGETS]
    if deletions:  # a replay of governance lines alone is over now: its report follows
        log(
            f"replay: {len(entries) - len(deletions)} governance line(s) applied "
            f"({time.monotonic() - started:.0f} s); {len(deletions)} deletion line(s) to replay"
        )
    replayed, skipped, statuses = 0, 0, {}
    every = -(-len(deletions) // PROGRESS_PARTS)  # rounded up: at most PROGRESS_PARTS lines
    for done, entry in enumerate(deletions, start=1):
        operation = _restore_operation(entry)
        if operation is None:
            skipped += 1
        else:
            statuses[str(operation.id)] = deletion_run(operation_id=operation.id)
            replayed += 1
        if done % every == 0 or done == len(deletions):
            unfinished = sum(s != DeletionOperation.State.COMPLETED for s in statuses.values())
            log(
                f"replay: {done}/{len(deletions)} deletion line(s) done, {unfinished} not "
                f"completed so far ({time.monotonic() - started:.0f} s)"
            )
    incomplete = {k: v for k, v in statuses.items() if v != DeletionOperation.State.COMPLETED}
    return {
        "replayed": replayed,
        "skipped": skipped,
        "keys_revoked": keys_revoked,
        "agents_deactivated": agents_deactivated,
        "memberships_removed": memberships_removed,
        "logins_deactivated": len(deactivated),
        "passwords_made_unusable": unusable,
        "login_sessions_ended": sessions_ended,
        "agent_grants_restored": grants.restored,
        "agent_grants_skipped": grants.skipped,
        "key_expiries_restored": expiries.restored,
        "key_expiries_skipped": expiries.skipped,
        "agent_grants_not_widened": sorted(grants.not_widened),
        "key_expiries_not_widened": sorted(expiries.not_widened),
        "policies_restored": policies.restored,
        "policies_skipped": policies.skipped,
        "policies_not_widened": policies.not_widened,
        "policies_not_restored": policies.not_restored,
        "memories_revoked": memories.revoked,
        "memories_revoked_pending": memories.pending,
        "memories_skipped": memories.skipped,
        "memories_rejected": rejections.rejected,
        "memories_rejected_skipped": rejections.skipped,
        "memories_task_closed": closes.expired,
        "memories_task_closed_skipped": closes.skipped,
        "incomplete": incomplete,
    }
