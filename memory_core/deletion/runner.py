"""Running an operation: purge and verify each step, then settle the operation's status.

Exactly one process runs a given operation at a time: a PostgreSQL session advisory lock on
the operation id is taken for the whole run (released when the run ends or, if the worker is
killed, when its connection closes). A second worker, a re-delivered message or a sweep that
re-drives a running operation finds the lock taken and does nothing.

Each step commits on its own: a verified step is never re-run, and a step interrupted half
way is re-run from its idempotent purge. Statuses: pending -> running -> completed, or
partial (a step failed; the task retries once its backoff, ``next_run_at``, ends), or failed
(dead-lettered after MEMLEDGER_DELETION_MAX_ATTEMPTS runs). A run that finds the attempts used
up without a verdict (every earlier run was killed before it settled) dead-letters the
operation instead of starting another.

The request appends the operation to the deletion journal (``ledger.py``) as it commits;
every run first appends it too unless ``journaled_at`` says that (or an earlier run) did. An
operation completes only once journaled.
"""

from __future__ import annotations

import logging
import random
import time
from contextlib import contextmanager
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.db.models.functions import Now
from django.utils import timezone

from memory_core.backoff import MAXIMUM, backoff
from memory_core.clock import database_now
from memory_core.deletion.ledger import ledger_append
from memory_core.deletion.services import events_insert
from memory_core.deletion.stores import OPERATOR_DETAIL, REGISTRY, DeletionContext
from memory_core.models import DeletionOperation, DeletionStep, MemoryEvent, Subject, Tombstone

logger = logging.getLogger(__name__)

FINAL = (DeletionOperation.State.COMPLETED, DeletionOperation.State.FAILED)
LOCKED = "locked"
MISSING = "missing"
# Named among the unfinished steps while the operation is not in the journal yet.
JOURNAL = "journal"


@contextmanager
def operation_lock(operation_id, *, asynchronous: bool = False):
    """Hold a session advisory lock on the operation while the block runs; yield if acquired.

    With ``asynchronous``, the run's commits also skip the WAL flush wait (the request's own
    commit is synchronous). Safe here: WAL is written in order, so if a step's "verified"
    survives a server crash its purge does too; a lost tail only means the idempotent steps
    run again. The commit that completes the operation waits for the flush (``_settle``).
    (One round trip each way: lock and setting together.)
    """
    key = f"memledger.deletion:{operation_id}"
    commit_mode = "off" if asynchronous else "on"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)), "
            "current_setting('synchronous_commit'), set_config('synchronous_commit', %s, false)",
            [key, commit_mode],
        )
        acquired, previous, _ = cursor.fetchone()
    try:
        yield acquired
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT CASE WHEN %s THEN pg_advisory_unlock(hashtextextended(%s, 0)) END, "
                "set_config('synchronous_commit', %s, false)",
                [acquired, key, previous],
            )


def operation_context(operation: DeletionOperation) -> DeletionContext:
    """Return what the stores need: the memory ids and the subjects they belong to."""
    if operation.target == DeletionOperation.Target.TENANT:
        # Every subject, those without a memory too (their traces, exports, rejected writes).
        subjects = list(
            Subject.objects.filter(tenant_id=operation.tenant_id).values_list("pk", flat=True)
        )
    elif operation.subject_id:
        subjects = [operation.subject_id]
    else:
        subjects = list(
            Tombstone.objects.filter(operation=operation)
            .exclude(subject_id=None)
            .values_list("subject_id", flat=True)
            .distinct()
        )
    return DeletionContext(
        operation=operation, memory_ids=list(operation.memory_ids), subject_ids=subjects
    )


def _faults() -> dict[str, tuple[str, float]]:
    """Parse the test-only MEMLEDGER_DELETION_FAULTS ("store=sleep:30,store=fail:2")."""
    faults = {}
    for item in filter(None, getattr(settings, "MEMLEDGER_DELETION_FAULTS", "").split(",")):
        store, _, spec = item.partition("=")
        kind, _, amount = spec.partition(":")
        faults[store.strip()] = (kind, float(amount or 0))
    return faults


def _inject_fault(step: DeletionStep, run: int) -> None:
    fault = _faults().get(step.store)
    if not fault:
        return
    kind, amount = fault
    if kind == "sleep" and run == 1:  # the operation's first run only
        logger.warning("deletion fault: %s sleeps %ss", step.store, amount)
        time.sleep(amount)
    elif kind == "fail" and step.attempts <= amount:
        raise RuntimeError(f"injected failure of step {step.store} (attempt {step.attempts})")


STEP_FIELDS = ["attempts", "status", "verified_at", "evidence", "last_error"]


def _verdict(step: DeletionStep, ok: bool, purged: dict, evidence: dict, error: str) -> None:
    step.status = DeletionStep.State.VERIFIED if ok else DeletionStep.State.FAILED
    step.verified_at = timezone.now() if ok else None
    step.evidence = {**evidence, "purged": purged}
    step.last_error = error


def _kept(store: str, purged: dict) -> dict:
    """Return what of a step's ``purged`` record a run that failed keeps (``Store.recorded``)."""
    return {key: purged[key] for key in REGISTRY[store].recorded if key in purged}


def _run_phase(steps: list[DeletionStep], ctx: DeletionContext, progress=None) -> list[str]:
    """Run the steps of one phase in one transaction; return the stores not verified.

    Attempts, purges, verifications and verdicts commit together: a step is never marked
    verified without its purge, and a crash before the commit leaves the phase's steps
    pending, to be re-run (every purge is idempotent) by the next run. A step failing with a
    Python error is recorded and the phase goes on; a database error rolls the phase back,
    and so does the task's soft time limit, which ends the run rather than being recorded as
    the step's failure while every later phase ran into the hard kill (stop 61's audit).

    ``progress(step)``, if given, is called as each step's verdict is made, and
    ``progress(step, rolled_back=True)`` once more for each step of a phase that rolled back
    (its verdict then failed, its purge undone).

    A failed step's ``purged`` is ``{}`` but for its store's ``recorded`` keys: taken from
    this run's purge if it recorded them (its writes commit with the phase), else, and for a
    phase that rolled back, from the step's stored record. Until stop 69's review they were
    lost too: the identities step's record of the admin history entries of logins a committed
    purge deleted, which no later purge can find again, and its verification stopped
    checking them.
    """
    stored = {step.pk: (step.evidence or {}).get("purged") or {} for step in steps}
    try:
        with transaction.atomic():
            for step in steps:
                step.attempts += 1
                started = time.perf_counter()
                store = REGISTRY[step.store]
                try:
                    purged = store.purge(ctx)
                    _inject_fault(step, ctx.operation.attempts)
                    ok, evidence = store.verify(ctx)
                    # A store may say what is wrong (a folder that is not there), by path for
                    # the operator: in last_error, never in the evidence clients are shown.
                    detail = evidence.pop(OPERATOR_DETAIL, "")
                    problem = detail or evidence.get("problem", "verification found residue")
                    error = "" if ok else problem
                except (DatabaseError, SoftTimeLimitExceeded):
                    raise  # the phase rolls back; the task's time is up: it ends, retried later
                except Exception as exc:
                    logger.exception("deletion %s: step %s failed", ctx.operation.id, step.store)
                    ok, evidence = False, {}
                    purged = _kept(step.store, ctx.last_purge(step.store) if store.recorded else {})
                    error = f"{type(exc).__name__}: {exc}"[:2000]
                evidence["ms"] = round((time.perf_counter() - started) * 1000, 1)
                _verdict(step, ok, purged, evidence, error)
                if progress is not None:
                    progress(step)
            DeletionStep.objects.bulk_update(steps, STEP_FIELDS)
    except DatabaseError as exc:
        logger.exception("deletion %s: phase %s rolled back", ctx.operation.id, steps[0].store)
        ctx.purges_undone(step.store for step in steps)
        for step in steps:
            kept = _kept(step.store, stored[step.pk])
            _verdict(step, False, kept, {}, f"{type(exc).__name__}: {exc}"[:2000])
        DeletionStep.objects.bulk_update(steps, STEP_FIELDS)
        for step in steps if progress is not None else ():
            progress(step, rolled_back=True)
    return [step.store for step in steps if step.status != DeletionStep.State.VERIFIED]


def deletion_run(*, operation_id, due_only: bool = False, progress=None) -> str:
    """Run every unverified step of the operation; return its status (or locked / missing).

    With ``due_only`` (the task), an operation a run left partial is left as it is until its
    backoff ends (``next_run_at``): ``partial`` is returned and no run is spent. A command's
    ``--run`` runs it at once, and passes ``progress``, called with each step as its verdict
    is made (``_run_phase``): a large deletion's steps take minutes, and ``--run`` said
    nothing until they had all run (stop 68's audit of the commands).
    """
    with operation_lock(operation_id, asynchronous=True) as acquired:
        if not acquired:
            return LOCKED
        return _run(operation_id, due_only=due_only, progress=_harmless(progress))


def _harmless(progress):
    """Return ``progress`` made unable to stop the run, or None for none.

    It is called inside a phase's transaction: a report that raised (``--run``'s stderr, a
    pipe whose reader ended) rolled the phase back and ended the run with the operation left
    running, its steps undone (stop 69's review of the commands). The first report that
    fails is logged and the run goes on without reports; the task's soft time limit still
    ends the run."""
    if progress is None:
        return None
    failed = False

    def report(step: DeletionStep, **how) -> None:
        nonlocal failed
        if failed:
            return
        try:
            progress(step, **how)
        except SoftTimeLimitExceeded:
            raise
        except Exception:
            failed = True
            logger.warning(
                "deletion step %s: its report failed; the run goes on without reports",
                step.store,
                exc_info=True,
            )

    return report


# The time left of an operation's backoff, on the database's clock, on which ``_settle``
# writes ``next_run_at``: on each host's own, a run on a host an hour fast made every copy of
# the task, the sweep's too, wait that hour (stop 64's review of failures).
_BACKOFF_LEFT = F("next_run_at") - Now()


def deletion_retry_in(*, operation_id) -> float:
    """Return the seconds until the operation's backoff ends (``next_run_at``), 0 if it has
    (``_seconds_left``)."""
    left = (
        DeletionOperation.objects.filter(pk=operation_id)
        .values_list(_BACKOFF_LEFT, flat=True)
        .first()
    )
    return _seconds_left(left)


def _seconds_left(left: timedelta | None) -> float:
    """Return the seconds of a backoff's time ``left``: 0 for none, for one ended, and for one
    longer than the longest backoff (``backoff.MAXIMUM``), which no run writes (one written
    on a host's clock ahead, before stop 64's review): a countdown that long meets the
    broker's visibility timeout (an hour), and the task is delivered again."""
    seconds = left.total_seconds() if left is not None else 0.0
    return seconds if 0 < seconds <= MAXIMUM else 0.0


def _run(operation_id, *, due_only: bool, progress=None) -> str:
    """Run the operation's unverified steps (the caller holds its lock)."""
    operation = (
        DeletionOperation.objects.filter(pk=operation_id)
        .annotate(backoff_left=_BACKOFF_LEFT)
        .first()
    )
    if operation is None:
        return MISSING
    if operation.status in FINAL:
        return operation.status
    if due_only and _backing_off(operation):
        # A copy of the task (the sweep sends one each minute the operation waits in a
        # backlog) reached it right after a run left it partial: run at once, each copy spent
        # one of its runs, and eight dead-lettered it within a second (stop 64's audit).
        return operation.status
    if operation.attempts >= settings.MEMLEDGER_DELETION_MAX_ATTEMPTS:
        # Every run so far started and the last never settled (SIGKILL, the hard time limit,
        # the OOM killer): another one would most likely die the same way. Dead-letter it
        # first (the journal append itself may be what kills the run), then journal it.
        status = _dead_letter(operation, "ended without settling")
        journal_error = _journal(operation)
        if journal_error:
            operation.last_error += _journal_note(journal_error)
            operation.save(update_fields=["last_error"])
        return status
    # The database's clock: the traces and exports steps keep what was made since the first
    # run's start (``stores._made_before``), by rows other hosts stamped on that clock.
    now = database_now()
    operation.attempts += 1
    operation.status = DeletionOperation.State.RUNNING
    operation.started_at = operation.started_at or now
    operation.last_attempt_at = now
    operation.save(update_fields=["attempts", "status", "started_at", "last_attempt_at"])
    logger.info("deletion %s: run %d", operation.id, operation.attempts)
    journal_error = _journal(operation)
    ctx = operation_context(operation)
    phases: dict[str, list[DeletionStep]] = {}
    for step in operation.steps.exclude(status=DeletionStep.State.VERIFIED).order_by("id"):
        phases.setdefault(REGISTRY[step.store].phase, []).append(step)
    failed = [store for steps in phases.values() for store in _run_phase(steps, ctx, progress)]
    if journal_error:
        failed.append(JOURNAL)
    return _settle(operation, failed, journal_error)


def _journal(operation: DeletionOperation) -> str:
    """Append ``operation`` to the deletion journal unless it is recorded there; return an error.

    The append is recorded (``journaled_at``) only after the line is fsynced, so a run that
    fails or dies before that appends again next time (a duplicate line is harmless: the
    journal's reader keeps one line per operation). An append that fails is returned, not
    raised: the purges go on, and the operation cannot complete until a run has journaled it.
    """
    if operation.journaled_at is not None:
        return ""
    try:
        ledger_append(operation)
    except SoftTimeLimitExceeded:
        raise
    except Exception as exc:  # a full disk, a missing volume: the next run tries again
        logger.exception("deletion %s: the journal append failed", operation.id)
        return f"{type(exc).__name__}: {exc}"[:500]
    operation.journaled_at = timezone.now()
    operation.save(update_fields=["journaled_at"])
    return ""


@transaction.atomic
def _settle(operation: DeletionOperation, failed: list[str], journal_error: str = "") -> str:
    # The database's clock: an evaluation run's load compares ``completed_at`` with its own
    # start, taken on the command's host (``stores.evaluation_run_reached``).
    now = database_now()
    fields = ["status", "last_error"]
    if not failed:
        # The run commits without waiting for the WAL flush (``operation_lock``); "completed"
        # must not. A crash after the user was shown it would bring the run's purges back
        # with it. This flush makes every earlier commit of the run durable too.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = on")
        operation.status = DeletionOperation.State.COMPLETED
        operation.completed_at = now
        operation.last_error = ""
        fields.append("completed_at")
        events_insert(
            tenant_id=operation.tenant_id,
            memory_ids=_not_yet_deleted(operation),
            action=MemoryEvent.Action.DELETED,
            actor_type=MemoryEvent.ActorType.SYSTEM,
            actor_id="deletion",
            reason_code=operation.reason_code,
            policy_version=operation.policy_version,
            details={"operation": str(operation.id)},
            created_at=now,
        )
    elif operation.attempts >= settings.MEMLEDGER_DELETION_MAX_ATTEMPTS:
        return _dead_letter(operation, "failed", failed, journal_error)
    else:
        operation.status = DeletionOperation.State.PARTIAL
        operation.last_error = f"steps not verified yet: {failed}" + _journal_note(journal_error)
        operation.next_run_at = Now() + timedelta(seconds=_backoff(operation.attempts))
        fields.append("next_run_at")
    operation.save(update_fields=fields)
    return operation.status


def _backoff(attempts: int) -> float:
    """The seconds a partial operation waits after its run number ``attempts``: the tasks'
    backoff (``backoff``: 2 s doubling each run, at most 300 s), jittered over its upper
    half, never at once (Celery's full jitter may give 0 s)."""
    longest = backoff(attempts - 1, full_jitter=False)
    return longest * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not a secret


def _backing_off(operation: DeletionOperation) -> bool:
    """Whether a run left ``operation`` (loaded with its ``_BACKOFF_LEFT``) partial and its
    backoff has not ended."""
    return (
        operation.status == DeletionOperation.State.PARTIAL
        and _seconds_left(operation.backoff_left) > 0
    )


def _not_yet_deleted(operation: DeletionOperation) -> list:
    """Return the memories of ``operation`` that have no ``deleted`` event of it yet.

    A replay resets an operation the restored database holds completed (its purges undone)
    and runs it again, events and all: each of its memories was recorded deleted once more,
    and again by every later replay (stop 55's audit of backup). The trail keeps one
    ``deleted`` event per memory and operation; a memory a replay added to it gets its own.
    """
    if not operation.memory_ids:
        return []
    recorded = set(
        MemoryEvent.objects.filter(
            tenant_id=operation.tenant_id,
            memory_id__in_array=operation.memory_ids,
            action=MemoryEvent.Action.DELETED,
            details__operation=str(operation.id),
        ).values_list("memory_id", flat=True)
    )
    return [pk for pk in operation.memory_ids if pk not in recorded]


def _journal_note(journal_error: str) -> str:
    return f"; journal append failed: {journal_error}" if journal_error else ""


def _dead_letter(
    operation: DeletionOperation, how: str, failed: list[str] | None = None, journal_error=""
) -> str:
    """Give up on ``operation``: status failed, dead-lettered for a reviewer (deletion_retry)."""
    if failed is None:
        failed = list(
            operation.steps.exclude(status=DeletionStep.State.VERIFIED)
            .order_by("id")
            .values_list("store", flat=True)
        )
    operation.status = DeletionOperation.State.FAILED
    operation.dead_lettered_at = timezone.now()
    operation.last_error = (
        f"steps not verified after {operation.attempts} runs (the last {how}): {failed}"
        + _journal_note(journal_error)
    )
    operation.save(update_fields=["status", "dead_lettered_at", "last_error"])
    logger.error("deletion %s dead-lettered: %s", operation.id, operation.last_error)
    return operation.status


def deletion_reset(*, operation: DeletionOperation) -> None:
    """Mark every step of ``operation`` pending again (a restored backup undid its purges).

    Its runs start again from none: attempts the backup recorded must not dead-letter it.
    """
    operation.steps.update(status=DeletionStep.State.PENDING, verified_at=None)
    operation.status = DeletionOperation.State.PENDING
    operation.attempts = 0
    operation.completed_at = None
    operation.dead_lettered_at = None
    operation.save(update_fields=["status", "attempts", "completed_at", "dead_lettered_at"])
