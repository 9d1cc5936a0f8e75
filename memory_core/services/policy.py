"""Versioned policy documents: one active version per tenant.

A version's retention is journaled as it is published (the deletion journal,
``ledger.policy_retention_entry``): a restore from an older backup makes the version active
then the tenant's policy again, a retention shortened since long again (rows the tenant said
to delete kept longer), and ``replay_deletions`` narrows it again. An append that fails is
made by the deletion sweep (``policies_journal``).
"""

import copy
import logging
from datetime import datetime, timedelta
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from memory_core.commit_hooks import after_commit
from memory_core.deletion.ledger import (
    backups_cutoff,
    ledger_catch_up,
    ledger_write,
    policy_retention_entry,
)
from memory_core.exceptions import ValidationFailed
from memory_core.models import PolicyVersion, Tenant
from memory_core.policy_check import policy_errors
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.rls import tenant_atomic

logger = logging.getLogger(__name__)

_TICK = timedelta(microseconds=1)


@transaction.atomic
def policy_ensure(*, tenant: Tenant) -> PolicyVersion:
    """Return the tenant's active policy, creating version 1 from the defaults if none exists
    (journaled as it commits, as a published version is).

    Created under the tenant's row lock (``_lock_versions``), so that two first uses of a
    tenant at once (two agents' keys made together) make one version 1, not a second that
    breaks ``policy_unique_version``."""
    active = PolicyVersion.objects.filter(tenant=tenant, is_active=True).first()
    if active:
        return active
    _lock_versions(tenant)
    active = PolicyVersion.objects.filter(tenant=tenant, is_active=True).first()
    if active:
        return active  # made by the transaction this one waited for
    version = PolicyVersion.objects.create(
        tenant=tenant,
        version=1,
        document=copy.deepcopy(DEFAULT_POLICY),
        is_active=True,
        note="defaults",
    )
    _journal_on_commit(version)
    return version


@transaction.atomic
def policy_publish(
    *, tenant: Tenant, document: dict, note: str = "", published_at: datetime | None = None
) -> PolicyVersion:
    """Publish ``document`` as the tenant's next policy version and make it the active one.

    A document with errors (``policy_errors``) is refused (ValidationFailed, nothing changes).
    The version's retention is journaled as it commits (``_policy_journal``), and
    ``journaled_at`` recorded.

    ``published_at``: when the version counts as published (its ``created_at``, its journal
    line's ``requested_at``), now by default. A restore's replay gives the time of the
    journal line whose retention it publishes again (``replay._policies_replay``): stamped
    with the replay's own time, the version made every later line of the tenant look older
    than it, and the second replay, from the damaged database, skipped a retention shortened
    after the journal's line (stop 63's audit of backups).
    """
    errors = policy_errors(document)
    if errors:
        raise ValidationFailed(
            "The policy document is invalid; see details for each key.",
            code="invalid_policy",
            details={path: [{"code": "invalid", "message": m}] for path, m in errors.items()},
        )
    _lock_versions(tenant)
    current = PolicyVersion.objects.filter(tenant=tenant).order_by("-version").first()
    PolicyVersion.objects.filter(tenant=tenant, is_active=True).update(is_active=False)
    # Later than the version before, whatever this host's clock says: the replay applies each
    # tenant's newest line, and a skewed clock must not make the later version the older.
    at = published_at or timezone.now()
    if current is not None and at <= current.created_at:
        at = current.created_at + _TICK
    version = PolicyVersion.objects.create(
        tenant=tenant,
        version=(current.version + 1) if current else 1,
        document=document,
        is_active=True,
        note=note,
        created_at=at,
    )
    _journal_on_commit(version)
    return version


def _lock_versions(tenant: Tenant) -> None:
    """Make the transactions that number a version of ``tenant`` take turns: lock its tenant
    row (``FOR NO KEY UPDATE``: the key-share lock of the tenant's inserts does not wait for
    it) until the transaction ends.

    The row, not the newest version: two publishers that locked the newest version both read
    the same one (the second, let in once the first committed, re-reads that row, not which
    is newest now) and numbered theirs alike, and the second failed on
    ``policy_unique_version``; nor could an absent version 1 be locked. The statement after
    the wait reads the versions committed meanwhile.
    """
    Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).values_list("pk").first()


def _entry(version: PolicyVersion) -> dict:
    return policy_retention_entry(
        version_id=version.pk,
        tenant_id=version.tenant_id,
        version=version.version,
        published_at=version.created_at,
        document=version.document,
    )


def _journal_on_commit(version: PolicyVersion) -> None:
    after_commit(partial(_policy_journal, version.pk, version.tenant_id))


def _policy_journal(version_id, tenant_id) -> bool:
    """Append a published version's journal line and record it; return whether it was. A
    failure is logged, never raised (the version is published; the sweep appends it later).

    Read and recorded in a transaction of the version's tenant: the table is under row-level
    security, and a request's own tenant setting ended with its transaction.
    """
    try:
        with tenant_atomic(tenant_id):
            version = PolicyVersion.objects.filter(pk=version_id, tenant_id=tenant_id).first()
        if version is None:
            return False
        ledger_write(_entry(version))
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception(
            "policy version %s: the journal append of its retention failed; the deletion "
            "sweep tries again",
            version_id,
        )
        return False
    try:
        with tenant_atomic(tenant_id):
            PolicyVersion.objects.filter(pk=version_id, journaled_at=None).update(
                journaled_at=timezone.now()
            )
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        # Appended again by the sweep: a duplicate line is harmless (the same operation id).
        logger.warning("policy version %s: journaled, but not recorded", version_id, exc_info=True)
    return True


def policies_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the policy versions published more than ``older_than``
    seconds ago whose line is not recorded (an append that failed, or a version published
    before versions were journaled: migration 0030), at most ``limit``, oldest first; return
    how many were appended. Raise LedgerAppendFailed if the journal cannot be written.
    Platform work: versions of every tenant, one read, one write (one fsync) and one UPDATE.
    A version published before the oldest backup kept (``ledger.backups_cutoff``) needs no
    line: it is left unrecorded."""
    before = Now() - timedelta(seconds=older_than)  # the database's clock (stop 66)
    versions = list(
        PolicyVersion.objects.filter(
            created_at__gte=backups_cutoff(), created_at__lte=before, journaled_at=None
        )
        .order_by("created_at", "version")
        .only("pk", "tenant_id", "version", "created_at", "document")[:limit]
    )
    if not versions:
        return 0
    ledger_catch_up([_entry(version) for version in versions])
    PolicyVersion.objects.filter(
        pk__in=[version.pk for version in versions], journaled_at=None
    ).update(journaled_at=timezone.now())
    return len(versions)
