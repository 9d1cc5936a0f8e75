"""The deletion journal outside the database: what a restored backup must forget again.

The Tombstone table is the ledger inside the database; a backup restore rolls it back along
with everything else. So every operation is also appended, as one JSON line of ids and hashes
(never content), to MEMLEDGER_DELETION_LEDGER, which lives outside the database and its
backups. ``replay_deletions --since`` reads it (or another database's Tombstone table).

The governance actions a restore would undo are journaled beside the deletions, one line of
ids each: an API key's revocation (``KEY_REVOKED``), an agent's deactivation
(``AGENT_DEACTIVATED``), a memory's revocation or consent withdrawal (``MEMORY_REVOKED``),
a reviewer's rejection of a sensitive write (``MEMORY_REJECTED``), an agent's grant set
(``AGENT_GRANT_SET``, with the grant's values), a key's expiry set (``KEY_EXPIRY_SET``,
with the new ``expires_at``), a tenant's policy version published
(``POLICY_RETENTION_SET``, with its retention as the sweep reads it), and a portal login's
access taken away: its membership removed (``MEMBERSHIP_REMOVED``), the login deactivated or
its staff or superuser status cleared (``LOGIN_DEACTIVATED``, with the flags cleared) or its
password changed (``PASSWORD_CHANGED``, the new hash's digest), each naming the login by its
id and its username's digest. The replay applies them again before the deletions.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import time
import unicodedata
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Now
from django.utils import timezone

from memory_core.files import replacing
from memory_core.models import (
    DeletionOperation,
    MemoryType,
    PortalMembership,
    Sensitivity,
    Subject,
    Tombstone,
)
from memory_core.policy_check import RETENTION_MAX, retention_as_swept
from memory_core.retrieval.traces import user_id_digest
from memory_core.rls import file_lock_wait

logger = logging.getLogger(__name__)


def ledger_path() -> Path:
    return Path(settings.MEMLEDGER_DELETION_LEDGER)


def ledger_folder_missing(path: Path) -> bool:
    """Whether the folder of the journal ``path`` is missing where it cannot be made.

    Inside MEMLEDGER_DATA_DIR (the default ``.data``) it is memledger's own, made on the first
    append, as the evaluation folders are (``stores.eval_dirs_missing``). Elsewhere it is the
    mount point of storage apart from the database's: missing, the volume is not mounted, and
    a folder made in its place took the lines on the local disk, every deletion completed
    while a restore would find no journal to replay (stop 58's audit of failures).
    """
    folder = path.parent
    own = Path(settings.DATA_DIR).resolve()
    return not folder.is_dir() and not folder.resolve().is_relative_to(own)


def _ledger_folder_ensure(path: Path) -> None:
    """Make the journal's folder if it is memledger's own; raise FileNotFoundError naming it
    if it is missing elsewhere (``ledger_folder_missing``)."""
    if ledger_folder_missing(path):
        raise FileNotFoundError(
            errno.ENOENT,
            "the deletion journal's folder does not exist (is its volume mounted?)",
            str(path.parent),
        )
    path.parent.mkdir(parents=True, exist_ok=True)


def ledger_entry(operation: DeletionOperation, tombstones=None) -> dict:
    """Return the journal line of ``operation``: ids and hashes only.

    ``tombstones``: its (memory_id, subject_id, content_hash) rows when the caller has them
    (the request that wrote them); read from the database otherwise.
    """
    if tombstones is None:
        tombstones = Tombstone.objects.filter(operation=operation).values_list(
            "memory_id", "subject_id", "content_hash"
        )
    external_id = None
    if operation.target == DeletionOperation.Target.SUBJECT:
        subject = Subject.objects.filter(pk=operation.subject_id)
        external_id = subject.values_list("external_id", flat=True).first()
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
    } | user_id_named(operation.target, external_id, operation.user_id_sha256)


def user_id_named(target: str, external_id: str | None, recorded: str = "") -> dict:
    """The part of a whole subject's deletion line that names the subject's user id, by its
    SHA-256 (``user_id_sha256``, as ``RetrievalTrace.user_id_sha256`` names it): a replay
    that makes the subject's row back, named by its own id, finds by it the restored traces
    of retrievals for the subject made before it was known (``replay._traces_claim``).
    Without it, they survived the replay (stop 58's review). Nothing for another target.

    ``recorded``: the digest the operation holds (``DeletionOperation.user_id_sha256``), named
    as it is: the operation of a row the replay made back, whose ``external_id`` is the row's
    own id. Its run's line named the digest of that id, and a later replay, keeping that line
    (it has the most tombstones), claimed none of the person's traces (stop 63's audit of
    backups)."""
    if target != DeletionOperation.Target.SUBJECT:
        return {}
    digest = recorded or (user_id_digest(external_id) if external_id else "")
    return {"user_id_sha256": digest} if digest else {}


# Names the operation a queued deletion (a whole subject's or a key's) becomes (uuid5 of the
# subject and the moment it was queued): the journal, another database's queued marks
# (``replay.ledger_from_database``) and the worker's operation then name it alike, and a
# replay makes it once.
QUEUED_NAMESPACE = uuid.UUID("3f0c1f6e-6d1e-4f7a-9c47-0d3c2a8f5b21")


def queued_operation_id(subject_id, queued_at: datetime) -> uuid.UUID:
    """The id of the operation a subject's queued deletion becomes: the journal's
    line names it, the API answers it when it queues the request, and the worker's request
    creates its operation under it (``services.queued_subject_deletion_run``)."""
    moment = queued_at.astimezone(UTC).isoformat()  # as stored, whatever the reader's zone
    return uuid.uuid5(QUEUED_NAMESPACE, f"{subject_id}/{moment}")


def journaled_spellings(text: str) -> set[str]:
    """``text`` (an id as stored now) and its NFD spelling: the ones a journal line may name
    it by. Ids are stored in NFC since stop 51 (migration 0038); a line written before named
    one as its client spelt it (NFD from a macOS client), and a replay into a restored and
    migrated database compares the digests of both, or it deleted or expired nothing (stop
    51's audit of an upgrade)."""
    return {text, unicodedata.normalize("NFD", text)}


def memory_key_digest(memory_key: str) -> str:
    """The SHA-256 (hex) of a memory_key: how the journal names a queued key's deletion, since
    it keeps ids and hashes only (the key names what was deleted: ``health.notes``)."""
    return hashlib.sha256(memory_key.encode()).hexdigest()


def queued_entry(
    *, tenant_id, subject_id, queued_at: datetime, memory_key: str = "", external_id: str = ""
) -> dict:
    """Return the journal line of a subject's queued deletion
    (``services.subject_deletion_queue``): a whole-subject operation, or a key's (the key's
    digest, ``memory_key_sha256``), with no tombstones yet. ``external_id``: the subject's,
    named by its digest on a whole subject's line (``user_id_named``).

    Without it, until the worker makes the request, the queued mark would live in the
    database only, and a backup restored from before it would lose the request. Replayed,
    the line deletes every memory the subject has in the restored database (on the key whose
    digest it holds), as the request would have. The worker's operation, under the same id,
    is journaled again with its tombstones when it is made.
    """
    entry = {
        "operation_id": str(queued_operation_id(subject_id, queued_at)),
        "tenant_id": str(tenant_id),
        "subject_id": str(subject_id),
        "target": DeletionOperation.Target.SUBJECT,
        "requested_at": queued_at.astimezone(UTC).isoformat(),
        "reason_code": "requested",
        "queued": True,
        "tombstones": [],
    }
    if memory_key:
        entry["target"] = DeletionOperation.Target.MEMORY_KEY
        entry["memory_key_sha256"] = memory_key_digest(memory_key)
    return entry | user_id_named(entry["target"], external_id)


# A key revocation's journal line: no operation, so its id is made from the key and the moment
# (the reader keeps one line per id). Replayed, it revokes the key again (``replay.py``).
KEY_REVOKED = "api_key_revoked"
REVOCATION_NAMESPACE = uuid.UUID("9e345145-91bb-4519-88cc-ab881ec6fde6")


def _governance_entry(
    namespace: uuid.UUID,
    *,
    target: str,
    row: tuple[str, object],
    tenant_id,
    at: datetime,
    reason_code: str,
    subject_id=None,
    **extra,
) -> dict:
    """Return the journal line of a governance action on one row (``row``: the line's field
    naming it and its id) at ``at``: ids only, its operation id derived from the row and the
    moment, so the same action journaled twice (a sweep's catch-up after an append that did
    land) is one operation to the replay."""
    field, row_id = row
    moment = at.astimezone(UTC).isoformat()
    return {
        "operation_id": str(uuid.uuid5(namespace, f"{row_id}/{moment}")),
        "tenant_id": str(tenant_id),
        "subject_id": str(subject_id) if subject_id else None,
        "target": target,
        "requested_at": moment,
        "reason_code": reason_code,
        field: str(row_id),
        **extra,
        "tombstones": [],
    }


def key_revocation_entry(*, key_id, tenant_id, revoked_at: datetime) -> dict:
    """Return the journal line of an API key's revocation (``api_key_revoke``): ids only.

    A backup taken before it holds the key unrevoked, so a restore would let it in again
    (a leaked key, say); the replay revokes it again.
    """
    return _governance_entry(
        REVOCATION_NAMESPACE,
        target=KEY_REVOKED,
        row=("revoked_key_id", key_id),
        tenant_id=tenant_id,
        at=revoked_at,
        reason_code="key_revoked",
    )


# An agent's deactivation (``services.api_keys.agent_deactivate``): replayed, the agent is
# deactivated again, and every key of it refused. Its reactivation is not journaled: a
# restore that brings an agent back inactive errs on the safe side.
AGENT_DEACTIVATED = "agent_deactivated"
DEACTIVATION_NAMESPACE = uuid.UUID("5b0d8f6a-3c1e-4d2b-9a7f-2e6c41d8b903")


def agent_deactivation_entry(*, agent_id, tenant_id, deactivated_at: datetime) -> dict:
    """Return the journal line of an agent's deactivation: ids only."""
    return _governance_entry(
        DEACTIVATION_NAMESPACE,
        target=AGENT_DEACTIVATED,
        row=("deactivated_agent_id", agent_id),
        tenant_id=tenant_id,
        at=deactivated_at,
        reason_code="agent_deactivated",
    )


# A memory's revocation (``memory_revoke``, ``consent_withdraw``, a conflict's loser):
# replayed, the memory is revoked again, or, when it was written after the backup, the
# backup's version in use of its chain (``supersedes_ids``).
MEMORY_REVOKED = "memory_revoked"
MEMORY_REVOCATION_NAMESPACE = uuid.UUID("c7a2e914-58d3-4f0b-8e61-9d4b3a2f7c15")


def memory_revocation_entry(
    *,
    memory_id,
    tenant_id,
    subject_id,
    revoked_at: datetime,
    action: str,
    reason_code: str,
    supersedes_ids=(),
) -> dict:
    """Return the journal line of a memory's revocation: ids, the action and when, never
    the memory's content, key or hash (the journal must not become a copy of what is
    remembered: a memory deleted later leaves these ids only, as its deletion's line does).

    ``supersedes_ids``: the versions the revoked one supersedes, nearest first. A version
    written after a backup (a correction) is unknown to the restored database; the replay
    revokes the backup's version in use among these instead.
    """
    return _governance_entry(
        MEMORY_REVOCATION_NAMESPACE,
        target=MEMORY_REVOKED,
        row=("revoked_memory_id", memory_id),
        tenant_id=tenant_id,
        subject_id=subject_id,
        at=revoked_at,
        reason_code=reason_code,
        action=action,
        supersedes_ids=[str(pk) for pk in supersedes_ids],
    )


# A reviewer's rejection of a sensitive write (``reviews.review_reject``): a backup taken
# before it holds the write waiting for a reviewer, who could approve it into use after a
# restore; replayed, it is rejected again and its review item resolved.
MEMORY_REJECTED = "memory_rejected"
MEMORY_REJECTION_NAMESPACE = uuid.UUID("0e6b1d3a-7f25-4c89-b4d2-5a13c8e9f047")


def memory_rejection_entry(*, memory_id, tenant_id, subject_id, rejected_at: datetime) -> dict:
    """Return the journal line of a sensitive write's rejection: ids and when, never the
    memory's content, key or hash, nor the reviewer's reason (a person's words about it)."""
    return _governance_entry(
        MEMORY_REJECTION_NAMESPACE,
        target=MEMORY_REJECTED,
        row=("rejected_memory_id", memory_id),
        tenant_id=tenant_id,
        subject_id=subject_id,
        at=rejected_at,
        reason_code="review.rejected",
    )


# A memory expired by its task's close (``services.tasks.task_close``): a backup taken before
# it holds the task's state in use (or waiting for a reviewer), and an agent would be given the
# closed task's decisions again after a restore; replayed, it is expired again, or, when it was
# written after the backup, the backup's version in use of its chain (``supersedes_ids``)
# still bound to the task.
MEMORY_TASK_CLOSED = "memory_task_closed"
TASK_CLOSED = "task_closed"  # the close's reason code, on its events and review items
TASK_CLOSE_NAMESPACE = uuid.UUID("3d6f0c52-8b1e-4a97-a4c3-71e5b2d90f6e")


def task_digest(task_id: str) -> str:
    """The SHA-256 (hex) of a task id: how the journal names the task a close expired a
    memory with (an agent's own identifier, which may say what the task was about)."""
    return hashlib.sha256(task_id.encode()).hexdigest()


def memory_task_close_entry(
    *, memory_id, tenant_id, subject_id, closed_at: datetime, task_sha256: str, supersedes_ids=()
) -> dict:
    """Return the journal line of a memory expired by the close of the task whose digest is
    ``task_sha256`` (``task_digest``): ids, the digest and when, never the memory's content,
    key or hash, nor the task id.

    ``supersedes_ids``: the versions the expired one supersedes, nearest first; the replay
    expires the backup's version in use among these, if it is bound to the same task.
    """
    return _governance_entry(
        TASK_CLOSE_NAMESPACE,
        target=MEMORY_TASK_CLOSED,
        row=("expired_memory_id", memory_id),
        tenant_id=tenant_id,
        subject_id=subject_id,
        at=closed_at,
        reason_code=TASK_CLOSED,
        task_sha256=task_sha256,
        supersedes_ids=[str(pk) for pk in supersedes_ids],
    )


# An agent's grant set (``services.api_keys.agent_grant_set``: the admin's agent form): a
# backup taken before it holds the grant as it was, and a grant narrowed since would be wide
# again after a restore; replayed, the newest line of each agent sets its grant again.
AGENT_GRANT_SET = "agent_grant_set"
GRANT_NAMESPACE = uuid.UUID("8c4da908-c718-4fe6-b15c-b936d89b3b41")
GRANT_FIELDS = (
    "write_types",
    "read_types",
    "max_sensitivity",
    "any_subject",
    "issues_subject_tokens",
)


def agent_grant_entry(*, agent_id, tenant_id, changed_at: datetime, grant: dict) -> dict:
    """Return the journal line of an agent's grant set at ``changed_at``: ids and the grant's
    values (``GRANT_FIELDS``: the types in order, the sensitivity, the two flags), nothing
    else (no name, no key)."""
    return _governance_entry(
        GRANT_NAMESPACE,
        target=AGENT_GRANT_SET,
        row=("grant_agent_id", agent_id),
        tenant_id=tenant_id,
        at=changed_at,
        reason_code="agent_grant_set",
        write_types=sorted(grant["write_types"]),
        read_types=sorted(grant["read_types"]),
        max_sensitivity=grant["max_sensitivity"],
        any_subject=bool(grant["any_subject"]),
        issues_subject_tokens=bool(grant["issues_subject_tokens"]),
    )


# A key's expiry set (``services.api_keys.api_key_expiry_set``: the admin's key form): a
# backup taken before it holds the key without it, usable past the expiry the operator set;
# replayed, the newest line of each key sets its ``expires_at`` again.
KEY_EXPIRY_SET = "api_key_expiry_set"
EXPIRY_NAMESPACE = uuid.UUID("54c59a92-fb12-4d6f-916a-ca4fc9a10d95")


def key_expiry_entry(*, key_id, tenant_id, changed_at: datetime, expires_at) -> dict:
    """Return the journal line of a key's expiry set at ``changed_at``: ids and the new
    ``expires_at`` (null: the key was made not to expire), never the key or its hash."""
    return _governance_entry(
        EXPIRY_NAMESPACE,
        target=KEY_EXPIRY_SET,
        row=("expiry_key_id", key_id),
        tenant_id=tenant_id,
        at=changed_at,
        reason_code="key_expiry_set",
        expires_at=None if expires_at is None else expires_at.astimezone(UTC).isoformat(),
    )


# A tenant's policy version published (``services.policy.policy_publish``, and version 1 of
# the defaults, ``policy_ensure``): a backup taken before it holds the version active then,
# and a retention shortened since would be long again after a restore, keeping rows the
# tenant said to delete; replayed, the newest line of each tenant narrows the retention of
# the restored policy to it (never widens it). Its other sections are not journaled.
POLICY_RETENTION_SET = "policy_retention_set"
POLICY_NAMESPACE = uuid.UUID("e9743ef1-f6d6-4d01-bdd4-0d035508a3ed")


def policy_retention_entry(
    *, version_id, tenant_id, version: int, published_at: datetime, document
) -> dict:
    """Return the journal line of a tenant's policy version ``version`` (row ``version_id``)
    published at ``published_at`` (its ``created_at``, the line's ``requested_at``): ids and
    the retention of ``document`` as the retention sweep reads it, every key of
    ``RETENTION_MAX`` a whole number or null (no limit: ``policy_check.retention_as_swept``),
    nothing else of the document (no note, no admission rule, no category name)."""
    return _governance_entry(
        POLICY_NAMESPACE,
        target=POLICY_RETENTION_SET,
        row=("policy_version_id", version_id),
        tenant_id=tenant_id,
        at=published_at,
        reason_code="policy_retention_set",
        version=int(version),
        retention=retention_as_swept(document),
    )


# A portal login's access taken away (``services.logins``): a portal membership removed, a
# login deactivated, a password changed. A backup taken before it holds the membership, the
# active login or the old password, and a restore gave a departed reviewer the review queue
# back (stop 63's audit of backups); replayed, the access is taken away again. A login is a
# row of Django's user table, named by its whole-number id and the digest of its username
# (``username_digest``); one with no membership (staff) has no tenant, and its lines name
# ``NO_TENANT_ID``.
MEMBERSHIP_REMOVED = "portal_membership_removed"
LOGIN_DEACTIVATED = "login_deactivated"
PASSWORD_CHANGED = "login_password_changed"  # noqa: S105 (a line's target, no password)
# The flags of a login that give access, cleared by a deactivation's line: "Active", and the
# admin's "Staff status" and "Superuser status".
LOGIN_FLAGS = ("is_active", "is_staff", "is_superuser")
MEMBERSHIP_NAMESPACE = uuid.UUID("a41f6c2e-3d59-4b7e-8f10-6c2b9e5d7a83")
LOGIN_DEACTIVATION_NAMESPACE = uuid.UUID("d2c8e5b1-7a46-4f39-b0e2-91f4c6a3d58e")
PASSWORD_NAMESPACE = uuid.UUID("6e9b3f70-c1d4-4a82-9e5f-2b7d08c4e1a6")
NO_TENANT_ID = uuid.UUID(int=0)


def username_digest(username: str) -> str:
    """The SHA-256 (hex) of a login's username: how a login's line names it beside its id,
    which a restore hands out again (the id sequence comes back with the backup), so that
    the replay takes access away from that login only. Never the username itself, often an
    email, which outlived the login's tenant in the lines (stop 64's review of backups)."""
    return hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()


def membership_removal_entry(
    *, membership_id, user_id, username: str, tenant_id, role: str, subject_id, removed_at
) -> dict:
    """Return the journal line of a portal membership removed: its id, its login (id and
    ``username_digest``), tenant, role and subject (an end user's), nothing else."""
    return _governance_entry(
        MEMBERSHIP_NAMESPACE,
        target=MEMBERSHIP_REMOVED,
        row=("removed_membership_id", membership_id),
        tenant_id=tenant_id,
        subject_id=subject_id,
        at=removed_at,
        reason_code="membership_removed",
        user_id=str(user_id),
        username_sha256=username_digest(username),
        role=role,
    )


def login_deactivation_entry(
    *, user_id, username: str, tenant_id, deactivated_at, flags=("is_active",)
) -> dict:
    """Return the journal line of a login's ``flags`` cleared (of ``LOGIN_FLAGS``: by
    default, the login deactivated): its id and ``username_digest``, and the flags."""
    return _governance_entry(
        LOGIN_DEACTIVATION_NAMESPACE,
        target=LOGIN_DEACTIVATED,
        row=("deactivated_user_id", user_id),
        tenant_id=tenant_id,
        at=deactivated_at,
        reason_code="login_deactivated",
        username_sha256=username_digest(username),
        flags=list(flags),
    )


def password_digest(password_hash: str) -> str:
    """The SHA-256 (hex) of a login's password hash (``User.password``, as the hasher wrote
    it): how the journal names a password set, never the password or its hash. Its salt makes
    the hash unguessable, so the digest tells nothing of the password."""
    return hashlib.sha256(password_hash.encode()).hexdigest()


def password_change_entry(
    *, user_id, username: str, tenant_id, password_hash: str, changed_at
) -> dict:
    """Return the journal line of a login's password set: its id and ``username_digest``, and
    the digest of the new hash (``password_digest``), by which the replay knows a restored
    older one."""
    return _governance_entry(
        PASSWORD_NAMESPACE,
        target=PASSWORD_CHANGED,
        row=("password_user_id", user_id),
        tenant_id=tenant_id,
        at=changed_at,
        reason_code="password_changed",
        username_sha256=username_digest(username),
        password_hash_sha256=password_digest(password_hash),
    )


# The journal lines that are no deletion: the replay applies each kind with its own step.
GOVERNANCE_TARGETS = frozenset(
    {
        KEY_REVOKED,
        AGENT_DEACTIVATED,
        MEMORY_REVOKED,
        MEMORY_REJECTED,
        MEMORY_TASK_CLOSED,
        AGENT_GRANT_SET,
        KEY_EXPIRY_SET,
        POLICY_RETENTION_SET,
        MEMBERSHIP_REMOVED,
        LOGIN_DEACTIVATED,
        PASSWORD_CHANGED,
    }
)


def ledger_append(operation: DeletionOperation) -> None:
    """Append ``operation`` to the journal (fsynced). Replays skip duplicates."""
    ledger_write(ledger_entry(operation))


def ledger_write(entry: dict) -> None:
    """Append the journal line ``entry`` and fsync it; on failure leave the file as it was
    (``ledger_write_many`` of one line)."""
    ledger_write_many([entry])


def ledger_appended(entry: dict, row: str, action: str) -> bool:
    """Append the journal line ``entry`` of ``row``'s ``action``; return whether it was. A
    failure is logged, never raised: the action is committed, and the deletion sweep appends
    its line later."""
    try:
        ledger_write(entry)
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception(
            "%s: the journal append of its %s failed; the deletion sweep tries again", row, action
        )
        return False
    return True


def ledger_write_many(entries: list[dict]) -> None:
    """Append the journal lines ``entries`` in one write under one lock and fsync them once;
    on failure leave the file as it was (none of them appended). Nothing for no entries.

    An append that fails half way (a full disk: ENOSPC after part of the lines) is cut off
    again, so the next append does not continue a torn line. A file that does not end with
    a newline (a process killed mid-write, or a journal written before this was so) gets one
    first: a torn line then stays alone on its line, and the reader skips it.

    Each line says when it was written (``written_at``): after its operation committed, so
    later than the snapshot of any dump that missed it, though its ``requested_at`` may be
    earlier (the request locks and scrubs its rows first: seconds for a large subject).
    """
    if not entries:
        return
    path = ledger_path()
    _ledger_folder_ensure(path)
    with _locked(path, "a+b") as handle:
        written_at = timezone.now().isoformat()
        data = b"".join(
            (json.dumps({**entry, "written_at": written_at}, sort_keys=True) + "\n").encode()
            for entry in entries
        )
        size = os.fstat(handle.fileno()).st_size
        if size:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":
                data = b"\n" + data
        try:
            view = memoryview(data)
            while view:
                view = view[handle.write(view) :]
            os.fsync(handle.fileno())
        except BaseException:
            try:
                handle.truncate(size)
            except OSError:
                logger.exception("cannot cut the failed append off the journal %s", path)
            raise


class LedgerAppendFailed(Exception):
    """The deletion sweep could not append ``lines`` journal lines (``__cause__``: why)."""

    def __init__(self, lines: int):
        super().__init__(f"{lines} journal line(s) not appended")
        self.lines = lines


def ledger_catch_up(entries: list[dict]) -> None:
    """Append the lines the deletion sweep found missing (``ledger_write_many``); raise
    LedgerAppendFailed if they could not be, for the sweep to log one error for all its
    batches (a missing volume made every row of every batch log its own stack trace)."""
    try:
        ledger_write_many(entries)
    except SoftTimeLimitExceeded:
        raise  # the sweep's time is up, not the journal's volume
    except Exception as exc:
        raise LedgerAppendFailed(len(entries)) from exc


def backups_age() -> timedelta:
    """Return how long ago a governance action was taken that needs no journal line: it
    committed before the oldest backup kept was taken (``MEMLEDGER_BACKUP_RETENTION_DAYS``
    ago), so every backup holds it and no restore undoes it. ``PRUNE_MARGIN`` longer: a row
    records when its action began, not when it committed. Raw SQL subtracts it from
    ``statement_timestamp()`` (``services.revocations``); the ORM uses ``backups_cutoff``."""
    return timedelta(days=settings.MEMLEDGER_BACKUP_RETENTION_DAYS) + PRUNE_MARGIN


def backups_cutoff() -> CombinedExpression:
    """Return the moment before which a governance action needs no journal line
    (``backups_age`` ago), as an expression of the database's clock (``Now()``, its
    ``statement_timestamp()``) that the statement comparing a row's moment with it evaluates.

    Not this host's ``timezone.now()``: the database's clock is the one every host of a
    deployment reads alike (``memory_core.clock``), and on a sweep host fast by more than
    ``PRUNE_MARGIN`` an action taken after the oldest backup kept read as older, and its line
    was never appended; a smaller skew ate into the margin (stop 66). An expression, not a
    moment read first: the sweep's 11 catch-ups would each read the clock in a query of its
    own.
    """
    return Now() - backups_age()


@contextlib.contextmanager
def _locked(path: Path, mode: str):
    """Open the journal ``path`` unbuffered and hold its lock (flock) in the block.

    ``ledger_prune`` replaces the file while it holds the old one's lock; a process that was
    waiting for that lock then holds a file no longer at ``path``, and whatever it wrote
    there would be lost. So the lock counts only on the file ``path`` names when it is
    taken: otherwise the new file is opened and locked instead.
    """
    while True:
        handle = open(path, mode, buffering=0)  # noqa: SIM115 (closed below or by the caller)
        try:
            _lock(handle, path)
            try:
                current = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                current = False
        except BaseException:
            handle.close()
            raise
        if current:
            break
        handle.close()
    with handle:
        yield handle


# How often a bounded wait for the journal's lock tries it again, in seconds.
LOCK_POLL = 0.05


def _lock(handle, path: Path) -> None:
    """Take the journal's lock on ``handle``: waiting as long as it takes, but in a scope
    that bounds lock waits (``rls.request_lock_scope``: a request's after-commit work) only
    so long, then raise TimeoutError. A blocking flock is beyond ``lock_timeout``: held by a
    prune rewriting a large journal (or an append stuck on shared storage), a revoke's
    answer waited as long as the holder (stop 64's review of failures); its hook logs the
    error and the deletion sweep appends the line."""
    wait = file_lock_wait()
    if wait is None:
        fcntl.flock(handle, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the journal {path} stayed locked for {wait:g} s") from None
            time.sleep(min(LOCK_POLL, left))


@dataclass
class LedgerPrune:
    """What ``ledger_prune`` dropped and kept."""

    dropped: int = 0  # entries requested before the cutoff
    kept: int = 0  # entries requested at or after it (or the last older, see ledger_prune)
    unreadable_kept: int = 0  # lines that are not entries: kept as they are, for a reader
    bytes_before: int = 0
    bytes_after: int = 0


# Entries requested this long before the cutoff are kept too: an operation is journaled with
# the moment it was requested (or queued), which can precede the commit a backup missed, and
# operators replay from "a little before" the dump's start (docs/operations.md).
PRUNE_MARGIN = timedelta(days=1)


def ledger_prune(*, before: datetime, path: Path | None = None, dry_run: bool = False):
    """Drop the journal's entries requested (and written down: ``entry_moment``) more than
    ``PRUNE_MARGIN`` before ``before``; return a ``LedgerPrune``.

    Nothing a replay after restoring a backup taken at or after ``before`` reads is dropped:
    a replay reads the entries requested or written down at or after the backup's time.
    Lines that are not entries are kept as they are (``replay_deletions`` names them), and
    with them, when they would be all that is left, the last entry of those older. The
    journal is replaced (``files.replacing``: its mode and owner kept) under the lock appends
    take; a reader sees the old file or the new one, never a part. With ``dry_run`` nothing
    changes.
    """
    path = path or ledger_path()
    result = LedgerPrune()
    if not path.exists():
        return result
    try:
        cutoff = before - PRUNE_MARGIN
    except OverflowError:  # a day after the first day of year 1: nothing is older
        cutoff = datetime.min.replace(tzinfo=before.tzinfo)
    with _locked(path, "rb") as handle:
        journal = handle.read()
        result.bytes_before = len(journal)
        lines = [raw for raw in journal.split(b"\n") if raw.strip()]
        entries = [_entry_of(raw.decode("utf-8", errors="replace")) for raw in lines]
        old = [n for n, entry in enumerate(entries) if entry and entry_moment(entry) < cutoff]
        result.unreadable_kept = entries.count(None)
        result.kept = len(entries) - result.unreadable_kept - len(old)
        if old and result.unreadable_kept and not result.kept:
            # A journal of lines that are not entries only is refused by ``replay_deletions``
            # as another file given by mistake: left so (a torn line, after a quiet month),
            # the restore stopped on the right journal (stop 60's audit of backups).
            old.pop()
            result.kept = 1
        result.dropped = len(old)
        dropped = set(old)
        data = b"".join(raw + b"\n" for n, raw in enumerate(lines) if n not in dropped)
        result.bytes_after = len(data)
        if dry_run or not result.dropped:
            return result
        with replacing(path) as new:
            new.write(data)
    return result


# Every line starts so (json.dumps with sort_keys): where a torn line's successor begins.
_LINE_START = '{"operation_id": '
_REQUIRED = ("operation_id", "requested_at", "tenant_id", "target", "tombstones")
# The targets a line may have, and the columns a deletion's line is written into
# (``replay._restore_operation``): another target, or a longer value, ended the replay in an
# IntegrityError or a DataError.
_TARGETS = frozenset(DeletionOperation.Target.values) | GOVERNANCE_TARGETS
_REASON_CODE_MAX = DeletionOperation._meta.get_field("reason_code").max_length
_CONTENT_HASH_MAX = Tombstone._meta.get_field("content_hash").max_length
_SHA256 = re.compile(r"[0-9a-f]{64}")  # as hexdigest writes it


@dataclass
class LedgerScan:
    """The journal's operations since a moment, and the lines that could not be read."""

    entries: list[dict] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)  # line numbers, skipped
    recovered: list[int] = field(default_factory=list)  # a torn prefix dropped, entry kept


def _parse(line: str) -> dict:
    """Return the entry of one journal line; raise ValueError if it is not one."""
    entry = json.loads(line)
    if not isinstance(entry, dict) or any(key not in entry for key in _REQUIRED):
        raise ValueError("not a journal entry")
    _moment(entry["requested_at"], "requested_at")
    if not isinstance(entry["tombstones"], list):
        raise ValueError("tombstones is not a list")
    # The ids every replay reads, each a UUID: a list or a bad id there raised in the middle
    # of a replay, after the governance lines before it were applied (stop 47's audit).
    _uuid(entry["operation_id"])
    _uuid(entry["tenant_id"])
    if entry.get("subject_id") is not None:
        _uuid(entry["subject_id"])
    # So did a target no line has, a value longer than its column, a key's digest or a
    # revocation's action that is not text (stop 55's audit of backup): every value the
    # replay writes or compares is checked here, where a line that fails is skipped and
    # named, not half way through the replay.
    if not isinstance(entry["target"], str) or entry["target"] not in _TARGETS:
        raise ValueError("target is no operation's nor governance line's")
    for tombstone in entry["tombstones"]:
        if not isinstance(tombstone, dict):
            raise ValueError("a tombstone is not an object of ids and a hash")
        _uuid(tombstone.get("memory_id"))
        if tombstone.get("subject_id") is not None:
            _uuid(tombstone["subject_id"])
        _text(tombstone.get("content_hash", ""), "content_hash", _CONTENT_HASH_MAX, null=False)
    if entry["target"] not in GOVERNANCE_TARGETS:  # a deletion's: the operation's values
        _text(entry.get("reason_code"), "reason_code", _REASON_CODE_MAX)
        if not isinstance(entry.get("queued", False), bool):
            raise ValueError("queued is not true or false")
        if entry.get("memory_key_sha256") is not None:
            _digest(entry["memory_key_sha256"], "memory_key_sha256")
        if entry.get("user_id_sha256") is not None:
            _digest(entry["user_id_sha256"], "user_id_sha256")
    # ValueError if a governance line names no row of its kind.
    if entry["target"] == KEY_REVOKED:
        _uuid(entry.get("revoked_key_id"))
    elif entry["target"] == AGENT_DEACTIVATED:
        _uuid(entry.get("deactivated_agent_id"))
    elif entry["target"] == MEMORY_REVOKED:
        _uuid(entry.get("revoked_memory_id"))
        _chain(entry)
        _text(entry.get("action"), "action")
        _text(entry.get("reason_code"), "reason_code")
    elif entry["target"] == MEMORY_REJECTED:
        _uuid(entry.get("rejected_memory_id"))
    elif entry["target"] == MEMORY_TASK_CLOSED:
        _uuid(entry.get("expired_memory_id"))
        _chain(entry)
        if entry.get("task_sha256") is not None:
            _digest(entry["task_sha256"], "task_sha256")
    elif entry["target"] == AGENT_GRANT_SET:
        _uuid(entry.get("grant_agent_id"))
        check_grant(entry)
    elif entry["target"] == KEY_EXPIRY_SET:
        _uuid(entry.get("expiry_key_id"))
        if entry.get("expires_at") is not None:  # present: null is a key made not to expire
            _moment(entry["expires_at"], "expires_at")
        elif "expires_at" not in entry:
            raise ValueError("no expires_at")
    elif entry["target"] == POLICY_RETENTION_SET:
        _uuid(entry.get("policy_version_id"))
        check_policy_retention(entry)
    elif entry["target"] == MEMBERSHIP_REMOVED:
        _row_id(entry.get("removed_membership_id"), "removed_membership_id")
        _row_id(entry.get("user_id"), "user_id")
        _digest(entry.get("username_sha256"), "username_sha256")
        if entry.get("role") not in PortalMembership.Role.values:
            raise ValueError("role is no portal role")
    elif entry["target"] == LOGIN_DEACTIVATED:
        _row_id(entry.get("deactivated_user_id"), "deactivated_user_id")
        _digest(entry.get("username_sha256"), "username_sha256")
        flags = entry.get("flags")
        if not isinstance(flags, list) or not flags or any(f not in LOGIN_FLAGS for f in flags):
            raise ValueError("flags are not a login's")
    elif entry["target"] == PASSWORD_CHANGED:
        _row_id(entry.get("password_user_id"), "password_user_id")
        _digest(entry.get("username_sha256"), "username_sha256")
        _digest(entry.get("password_hash_sha256"), "password_hash_sha256")
    return entry


def _moment(value, name: str) -> None:
    """Raise ValueError unless ``value`` is a time with a zone that falls within years 1 to
    9999 in UTC: the replay writes it into a row, and PostgreSQL stored one past them
    (``9999-12-31T23:59:59-14:00``) that psycopg then could not read back, every read of the
    row failing (a key's: its authentication, the admin, the sweep; stop 60's audit of
    backups)."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"{name} has no time zone")
    try:
        moment.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"{name} is outside years 1 to 9999 in UTC") from exc


def _uuid(value) -> None:
    """Raise ValueError unless ``value`` is a UUID's string."""
    if not isinstance(value, str):
        raise ValueError(f"{type(value).__name__} is not an id")
    uuid.UUID(value)


_ROW_ID = re.compile(r"0|[1-9][0-9]{0,18}", re.ASCII)  # as str(int) writes it


def _row_id(value, name: str) -> None:
    """Raise ValueError unless ``value`` is the string of a whole-number id (a login's, a
    membership's) that a ``bigint`` holds: the replay looks the row up by it."""
    if not isinstance(value, str) or not _ROW_ID.fullmatch(value) or int(value) >= 2**63:
        raise ValueError(f"{name} is not a row's id")


def _text(value, name: str, most: int | None = None, *, null: bool = True) -> None:
    """Raise ValueError unless ``value`` is a string of at most ``most`` characters (or None,
    with ``null``: a field the replay reads with a default)."""
    if value is None and null:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a string")
    if most is not None and len(value) > most:
        raise ValueError(f"{name} is longer than {most} characters")


def _digest(value, name: str) -> None:
    """Raise ValueError unless ``value`` is a SHA-256 as ``hexdigest`` writes it: the replay
    compares it with the digests it makes (a list there raised TypeError)."""
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise ValueError(f"{name} is not a SHA-256 in hex")


def _chain(entry: dict) -> None:
    """Raise ValueError unless the line's ``supersedes_ids`` (absent: none) is a list of ids."""
    chain = entry.get("supersedes_ids", [])
    if not isinstance(chain, list):
        raise ValueError("supersedes_ids is not a list")
    for pk in chain:
        _uuid(pk)


def check_grant(entry: dict) -> None:
    """Raise ValueError unless ``entry`` (a grant line, or the grant ``agent_grant_set`` is
    about to write) holds a grant an agent row may have: the replay writes a line's values
    into the row, and a line is read from a file."""
    for name in ("write_types", "read_types"):
        types = entry.get(name)
        if not isinstance(types, list) or not set(types) <= set(MemoryType.values):
            raise ValueError(f"{name} is not a list of memory types")
    if entry.get("max_sensitivity") not in Sensitivity.values:
        raise ValueError("max_sensitivity is no sensitivity")
    flags = (entry.get("any_subject"), entry.get("issues_subject_tokens"))
    if not all(isinstance(flag, bool) for flag in flags):
        raise ValueError("any_subject and issues_subject_tokens must be true or false")
    if flags == (False, True):  # the agent_token_issuer_any_subject constraint
        raise ValueError("an issuer of subject tokens acts for any subject")


def check_policy_retention(entry: dict) -> None:
    """Raise ValueError unless ``entry`` (a policy retention line) names a tenant and a version
    and holds every retention key of ``RETENTION_MAX``, each a whole number within its bounds
    or null: the replay publishes a line's values into a tenant's policy, and a line is read
    from a file."""
    uuid.UUID(str(entry.get("tenant_id")))
    version = entry.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError("version is not a version number")
    retention = entry.get("retention")
    if not isinstance(retention, dict):
        raise ValueError("retention is not an object")
    for key, most in RETENTION_MAX.items():
        if key not in retention:
            raise ValueError(f"retention.{key} is missing")
        value = retention[key]
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise ValueError(f"retention.{key} is not a whole number from 0 to {most}, or null")


def entry_moment(entry: dict) -> datetime:
    """Return the later of when the entry's operation was requested and when its line was
    written (``written_at``; a line written before it was recorded, or one whose time cannot
    be read, has only the first): what a replay ``--since`` a dump's start compares."""
    requested = datetime.fromisoformat(entry["requested_at"])
    try:
        written = datetime.fromisoformat(entry.get("written_at") or "")
    except (TypeError, ValueError):
        return requested
    return requested if written.tzinfo is None else max(requested, written)


def _entry_of(line: str) -> dict | None:
    """Return the entry of a journal line, or of the whole entry after a torn prefix on it;
    None if it holds none."""
    try:
        return _parse(line)
    except (ValueError, TypeError):
        start = line.rfind(_LINE_START)
        if start <= 0:
            return None
        try:
            return _parse(line[start:])
        except (ValueError, TypeError):
            return None


def ledger_scan(*, since: datetime, path: Path | None = None) -> LedgerScan:
    """Read the journal: its operations requested or written down at or after ``since``
    (``entry_moment``), oldest first, once each, and the numbers of the lines that are not
    entries (skipped, logged).

    A line that is a torn append followed by a whole one on the same line (written before
    appends cut a failed write off) keeps the whole one (``recovered``). Of an operation's
    several lines the one with the most tombstones is kept: a queued deletion is
    journaled when queued, with none yet, and again when the worker makes it.
    """
    path = path or ledger_path()
    scan = LedgerScan()
    if not path.exists():
        return scan
    entries: dict[str, dict] = {}
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            continue
        try:
            entry = _parse(line)
        except (ValueError, TypeError):
            entry = _entry_of(line)
            if entry is None:
                scan.unreadable.append(number)
                continue
            scan.recovered.append(number)
        if entry_moment(entry) >= since:
            kept = entries.get(entry["operation_id"])
            if kept is None or len(entry["tombstones"]) > len(kept["tombstones"]):
                entries[entry["operation_id"]] = entry
    if scan.unreadable or scan.recovered:
        logger.warning(
            "deletion journal %s: %d unreadable line(s) skipped (%s), %d torn prefix(es) "
            "dropped (%s)",
            path,
            len(scan.unreadable),
            line_numbers(scan.unreadable),
            len(scan.recovered),
            line_numbers(scan.recovered),
        )
    scan.entries = sorted(entries.values(), key=lambda e: datetime.fromisoformat(e["requested_at"]))
    return scan


def ledger_read(*, since: datetime, path: Path | None = None) -> list[dict]:
    """Return the journal's operations requested or written down at or after ``since``,
    oldest first, once each (lines that are not entries are skipped: ``ledger_scan``
    reports them)."""
    return ledger_scan(since=since, path=path).entries


def line_numbers(numbers: list[int], shown: int = 20) -> str:
    """Return the first ``shown`` line numbers, comma-separated ("..." if there are more): a
    file given as the journal by mistake has thousands."""
    text = ", ".join(map(str, numbers[:shown]))
    return text + (", ..." if len(numbers) > shown else "")
