"""Celery tasks. They take ids, call a service, are idempotent and safe to run twice.

Every task: JSON arguments, ``acks_late`` with ``reject_on_worker_lost`` (a task whose worker
dies is handed to another) and time limits, all from the settings (``CELERY_TASK_*`` in
config/settings/base.py: a task repeating them here would win over the setting), and automatic
retries with exponential backoff and jitter for transient failures (``COMMON``). Tasks about
one memory derive from ``MemoryTask``, which checks the tombstone ledger before the task acts:
a task queued for a memory deleted meanwhile does nothing, and a transient database failure of
that check is retried with the same backoff.
"""

from __future__ import annotations

import functools
import logging

from celery import Task, shared_task
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError

from memory_core.backoff import FACTOR, MAXIMUM, backoff
from memory_core.exceptions import is_read_only_database
from memory_core.models import Memory, Tombstone
from memory_core.rls import platform_scope, tenant_scope

logger = logging.getLogger(__name__)


class DatabaseReadOnly(OperationalError):
    """The database takes no writes (a failover to a standby): transient, so retried."""


# DatabaseReadOnly is an OperationalError: a task that ``read_only_is_transient`` wraps retries
# a read-only database as it retries one that is down.
TRANSIENT = (OperationalError, InterfaceError)


def read_only_is_transient(run):
    """Wrap a task's function: a database that takes no writes (SQLSTATE 25006, an
    InternalError Django does not count as operational) is raised as ``DatabaseReadOnly``, so
    ``autoretry_for=TRANSIENT`` retries it with backoff. Unwrapped, a failover left the task
    failed at once, unretried (a deletion waited for the sweep; a re-embedding was lost)."""

    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        try:
            return run(*args, **kwargs)
        except DatabaseError as exc:
            if is_read_only_database(exc):
                raise DatabaseReadOnly(str(exc).strip()) from exc
            raise

    return wrapper


# The retries every task shares. Not acks_late, the serializer or the time limits: a task's own
# option wins over the setting, so a copy here made CELERY_TASK_TIME_LIMIT (and the rest) moot.
COMMON = {
    "retry_backoff": FACTOR,
    "retry_backoff_max": MAXIMUM,
    "retry_jitter": True,
}


def send(task, *args, **options):
    """Send ``task`` to this deployment's queue, failing fast when the broker is unreachable."""
    return task.apply_async(
        args=args,
        queue=settings.CELERY_TASK_DEFAULT_QUEUE,
        retry=True,
        retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2},
        **options,
    )


def tenant_of(model, pk):
    """Return the tenant of row ``pk`` of ``model`` (a platform read of one id), or None.

    A task receives ids only; under row-level security it must learn whose row it is before
    it may see it, then act in that tenant's scope alone.
    """
    with platform_scope(f"task: tenant of {model.__name__} {pk}"):
        return model.objects.filter(pk=pk).values_list("tenant_id", flat=True).first()


class DeletionIncomplete(Exception):
    """Some steps are not verified yet; the task retries once the operation's backoff ends."""


class MemoryTask(Task):
    """A task about one memory (first argument: its id) that never acts on a deleted one."""

    abstract = True
    tombstone_guarded = True

    def __call__(self, memory_id, *args, **kwargs):
        try:
            with platform_scope(f"task {self.name}: tombstone check"):
                tombstoned = Tombstone.objects.filter(memory_id=memory_id).exists()
            tenant_id = None if tombstoned else tenant_of(Memory, memory_id)
        except TRANSIENT as exc:
            # The check runs before ``run``, outside what autoretry_for wraps: without this a
            # database blip here would drop the task for good instead of retrying it, with
            # the countdown autoretry_for would give.
            raise self.retry(exc=exc, countdown=backoff(self.request.retries)) from exc
        if tombstoned:
            logger.info("%s skipped: memory %s is tombstoned", self.name, memory_id)
            return "tombstoned"
        if tenant_id is None:
            return "missing"
        with tenant_scope(tenant_id):
            return super().__call__(memory_id, *args, **kwargs)


@shared_task(
    bind=True,
    name="memory_core.tasks.deletion_run",
    autoretry_for=TRANSIENT,
    max_retries=10,
    **COMMON,
)
@read_only_is_transient
def deletion_run_task(self, operation_id: str) -> str:
    """Purge and verify the operation's steps; while some are unverified, retry when the
    operation's backoff ends (a copy delivered before then waits for it too, spending no run:
    ``runner.deletion_run``'s ``due_only``)."""
    from memory_core.deletion.runner import deletion_retry_in, deletion_run
    from memory_core.models import DeletionOperation

    tenant_id = tenant_of(DeletionOperation, operation_id)
    if tenant_id is None:
        return "missing"
    with tenant_scope(tenant_id):
        status = deletion_run(operation_id=operation_id, due_only=True)
        if status != DeletionOperation.State.PARTIAL:
            return status
        countdown = deletion_retry_in(operation_id=operation_id)
    incomplete = DeletionIncomplete(f"deletion {operation_id} is partial")
    raise self.retry(exc=incomplete, countdown=countdown)


@shared_task(
    name="memory_core.tasks.queued_subject_deletion",
    autoretry_for=TRANSIENT,
    max_retries=10,
    # The request a web request could not make in time: it grows with the subject (about
    # 0.1 ms a memory, docs/operations.md), so it gets an hour, not the usual five minutes.
    time_limit=3600,
    soft_time_limit=3300,
    **COMMON,
)
@read_only_is_transient
def queued_subject_deletion_task(subject_id: str) -> str:
    """Make a subject's queued deletion request, a whole subject's or a key's
    (``subject_deletion_queue``)."""
    from memory_core.deletion.services import queued_subject_deletion_run
    from memory_core.models import Subject

    tenant_id = tenant_of(Subject, subject_id)
    if tenant_id is None:
        return "missing"
    with tenant_scope(tenant_id):
        operation = queued_subject_deletion_run(subject_id)
    return "nothing queued" if operation is None else str(operation.pk)


@shared_task(name="memory_core.tasks.deletion_sweep", autoretry_for=TRANSIENT, **COMMON)
@read_only_is_transient
def deletion_sweep(stale_seconds: float | None = None) -> list[str]:
    """Re-drive deletions stuck in pending, running or partial (beat, every 30 s)."""
    from memory_core.deletion.ledger import LedgerAppendFailed, ledger_path
    from memory_core.deletion.services import queued_deletions_journal
    from memory_core.deletion.sweep import deletion_sweep as sweep
    from memory_core.services.api_keys import (
        deactivations_journal,
        expiries_journal,
        grants_journal,
        revocations_journal,
    )
    from memory_core.services.logins import logins_journal
    from memory_core.services.policy import policies_journal
    from memory_core.services.revocations import (
        memory_rejections_journal,
        memory_revocations_journal,
        memory_task_closes_journal,
        memory_task_replaced_journal,
    )

    stale = settings.MEMLEDGER_DELETION_STALE_SECONDS if stale_seconds is None else stale_seconds
    catch_ups = {
        "queued deletion(s)": queued_deletions_journal,
        "key revocation(s)": revocations_journal,
        "agent deactivation(s)": deactivations_journal,
        "memory revocation(s)": memory_revocations_journal,
        "memory rejection(s)": memory_rejections_journal,
        "task close(s)": memory_task_closes_journal,
        "replaced version(s) of a closed task": memory_task_replaced_journal,
        "agent grant(s)": grants_journal,
        "key expiry(ies)": expiries_journal,
        "policy version(s)": policies_journal,
        "login access change(s)": logins_journal,
    }
    journaled, failed = {}, []
    # Cross-tenant by design: it finds stuck operations of every tenant (ids only), then the
    # deletions queued for a worker, key revocations, agent deactivations, memory revocations
    # and rejections, memories expired by their task's close and the replaced versions it
    # named, agents' grants, keys' expiries,
    # tenants' policy versions and logins' access taken away whose journal line an append
    # failed to write (a queued deletion no worker made yet would be forgotten after a
    # restore, its memories back in use; revoked or deactivated after a backup, each would be
    # back in use, a rejected write back in the reviewers' queue, a closed task's state in use
    # again, a narrowed grant wide again, a key without its expiry, a shortened retention long
    # again, a removed membership or an old password back); each kind's batch is appended in
    # one write and recorded in one UPDATE.
    with platform_scope("deletion sweep"):
        redriven = sweep(stale_seconds=stale)
        for what, catch_up in catch_ups.items():
            try:
                journaled[what] = catch_up(older_than=stale)
            except LedgerAppendFailed as exc:
                failed.append(exc)
    for what, count in journaled.items():
        if count:
            logger.info("deletion sweep: %d %s journaled", count, what)
    if failed:
        # One error a sweep, not a stack trace a row: a missing volume fails them all alike.
        logger.error(
            "deletion sweep: the journal append of %d governance line(s) failed (%s); the "
            "next sweep tries again",
            sum(exc.lines for exc in failed),
            ledger_path(),
            exc_info=failed[0].__cause__,
        )
    return redriven


@shared_task(name="memory_core.tasks.retention_sweep", autoretry_for=TRANSIENT, **COMMON)
@read_only_is_transient
def retention_sweep() -> dict:
    """Expire memories past valid_until and delete what retention no longer allows (beat)."""
    from memory_core.deletion.retention import retention_apply

    # Cross-tenant by design: every tenant's policy and expired rows.
    with platform_scope("retention sweep"):
        return retention_apply()


@shared_task(
    base=MemoryTask,
    name="memory_core.tasks.reembed_memory",
    autoretry_for=TRANSIENT,
    max_retries=5,
    **COMMON,
)
@read_only_is_transient
def reembed_memory(memory_id: str) -> str:
    """Re-compute one memory's embedding (e.g. after a model change). Idempotent.

    ``manage.py reembed`` does the same for every stale memory, in batches.
    """
    from memory_core.services.memories import memory_reembed

    return memory_reembed(memory_id)


# Tasks that act on one memory; the queued_reprocessing step checks they are all guarded.
MEMORY_TASKS = [reembed_memory]
