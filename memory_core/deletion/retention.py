"""Retention: the policy belongs to the data class, not the storage (the seed, "Retention").

Run by beat (``memory_core.tasks.retention_sweep``):

1. Expire: active memories past ``valid_until`` become ``expired`` (with an ``expired`` event);
   no model ever sees them again. So do writes still waiting for a reviewer, whose items close.
   Then let the open conflicts still citing a superseded row cite its chain's new version
   (``services.conflicts.conflicts_heal_stale``: what a mend after a commit left), and close
   the open conflicts left with fewer than two active candidates (resolution
   ``settled``): an expiry, a deletion or a revoke that could not take the item (another
   transaction held it) left nothing for a reviewer to choose.
2. Delete what the tenant's active policy no longer allows to keep (without one, nothing but
   revoked preferences, whose rule asks no period of it), through the same
   deletion operations as a user's request (one operation per subject and reason, so every
   derived store is purged and verified):
   - working memory older than ``retention.working_hours`` hours;
   - episodic memory older than ``retention.episodic_days`` days;
   - preferences: kept until revoked (``preference_days`` null); revoked ones are deleted
     with every older version they supersede (as a user's delete by memory_id), and so are
     older versions an earlier sweep left behind when it deleted the revoked head alone;
     with a number, older preferences are deleted too;
   - memories inferred by a model older than ``retention.inferred_days`` days;
   - writes a reviewer refused, ``retention.rejected_days`` days after the decision.
3. Delete retrieval traces older than ``retention.trace_days`` days (30 unless the policy says
   otherwise; ``null`` keeps them). A trace holds ids, hashes and scores, never content, so
   this bounds storage rather than erasing personal data; traces that cite a deleted memory
   are purged by its deletion operation whatever their age. The agents' refused requests
   (``AccessDenial``: a code and an endpoint's name) are kept as long as traces.
4. Delete the idempotency records of writes past their expiry
   (``MEMLEDGER_IDEMPOTENCY_TTL_HOURS`` after the write): the key is new again.
5. Delete exports, file and row, ``MEMLEDGER_EXPORT_RETENTION_HOURS`` after they were made:
   each is a full copy of what is remembered about a subject, kept only for its download.
   Then the files as old that no export row names (a request that failed after writing its
   file; ``export_files_orphaned_remove``).

Steps 3 to 5 run between steps 1 and 2 (``retention_apply``), the most private first (5, 3,
4, then the refused requests), each in batches: its first whatever the time, more while its
share of the run's time allows (``EXPORTS_SECONDS`` and the others); what is left goes at the
next run. A step's own failure (a statement or lock timeout) is logged and named in the
report's ``steps_failed``, and the next step goes on (``_step_isolated``); a tenant's part's
is that tenant's (``_tenant_isolated``, one ``tenant_failures`` entry per step and tenant).
No step waits without a bound for a lock another transaction may hold long: steps 1, 3 to 5
skip the rows another holds (``SKIP LOCKED``), and step 2 bounds its waits (a tenant's turn,
``TURN_LOCK_TIMEOUT_MS``; a subject's operation, ``SUBJECT_LOCK_TIMEOUT_MS``: a busy subject
is skipped and named in ``subjects_busy``, no failure, and the next run retries it; a busy
tenant, ``_tenant_held``, the rest of its due memories with it).

Every cut-off compared with a row's moment (a memory's ``created_at`` or ``valid_until``, a
trace's, a refused request's or an export's ``created_at``, an idempotency record's expiry) is
taken on the database's clock (``memory_core.clock``), the one the rows' hosts agree on, unless
a caller gives ``now``. Until stop 66 it was the sweep host's: a worker a day fast deleted
traces, exports and memories a day before they were due, and one behind kept them past it
(left open at stop 65). The orphaned files' cut-off is compared with their modification times
on this host's disk, and stays this host's clock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from psycopg.errors import LockNotAvailable

from memory_core.clock import ClockTimestamp, database_now
from memory_core.deletion.services import _operation_create, with_predecessors
from memory_core.exceptions import is_read_only_database
from memory_core.exports import export_delete, export_dir
from memory_core.models import (
    AccessDenial,
    DeletionOperation,
    Export,
    IdempotencyRecord,
    Memory,
    MemoryClass,
    MemoryEvent,
    PolicyVersion,
    RetrievalTrace,
    Status,
    Tenant,
    Tombstone,
)
from memory_core.policy_check import REVOKED_RULE, retention_cutoffs, retention_period
from memory_core.policy_defaults import retention_section
from memory_core.principals import SystemPrincipal
from memory_core.services.conflicts import conflicts_heal_stale
from memory_core.services.memories import memories_mark_expired

logger = logging.getLogger(__name__)

RETENTION_PRINCIPAL_NAME = "retention"


EXPIRED_REASON = "valid_until_passed"


def due_to_expire(now):
    """Return the rows past their valid_until that are still live, the longest due first
    (along ``memory_live_expiry``: the rows due, never every live row with an expiry)."""
    return Memory.objects.past_end(now).order_by("valid_until")


# The rows one transaction of a sweep step takes, and how long one run goes on taking them
# (the task's soft limit is 240 s; the rest waits for the next run, 5 minutes later). One batch
# a run kept up with about 17 memories a second per step, and a backlog beyond that only grew,
# the overdue rows keeping their content (stop 55's audit of the worker).
SWEEP_BATCH = 5000
SWEEP_SECONDS = 150


@transaction.atomic
def memories_expire(*, now=None, limit: int = SWEEP_BATCH) -> int:
    """Mark active memories past valid_until as expired, with one event each; return the count.

    Writes still waiting for a reviewer past theirs expire too, and their review items close
    (resolution ``valid_until_passed``): approved, one would supersede the key's live head and
    then expire (approval refuses it meanwhile, ``review_expired``).
    """
    now = now or database_now()
    rows = list(
        due_to_expire(now)
        .select_for_update(skip_locked=True)
        .values_list("pk", "tenant_id", "policy_version")[:limit]
    )
    if not rows:
        return 0
    # No journal line is owed (``journaled``): a restored row holds its valid_until, and this
    # sweep expires it again. A task's close owes one.
    memories_mark_expired(
        rows,
        reason_code=EXPIRED_REASON,
        actor=(MemoryEvent.ActorType.SYSTEM, RETENTION_PRINCIPAL_NAME),
        now=now,
        journaled=True,
    )
    return len(rows)


SETTLED = "settled"

# The open conflicts with fewer than two active candidates, a batch at a time. SKIP LOCKED:
# an item a reviewer's resolution, a retrieval or a revoke holds is theirs (they take items
# before or after rows in orders of their own; memory_core.locks), and the next sweep finds it.
# The batch is a MATERIALIZED CTE, read once (_locked_first, below).
_SETTLE_SQL = """
    WITH held AS MATERIALIZED (
           SELECT item.id FROM memory_core_reviewitem item
            WHERE item.kind = 'conflict' AND item.state = 'open'
              AND (SELECT count(*) FROM memory_core_memory m
                    WHERE m.id = ANY(item.candidate_ids) AND m.tenant_id = item.tenant_id
                      AND m.status = 'active') < 2
            ORDER BY item.id
            LIMIT %(limit)s
              FOR UPDATE SKIP LOCKED)
    UPDATE memory_core_reviewitem SET state = 'resolved', resolution = %(resolution)s,
           resolved_at = %(now)s
     WHERE id IN (SELECT id FROM held)
"""


@transaction.atomic
def conflicts_settle(*, now=None, limit: int = 5000) -> int:
    """Close the open conflicts left with fewer than two active candidates (resolution
    ``settled``); return how many. Nothing is left for a reviewer to choose there: a
    candidate expired, was deleted, or was revoked while another transaction held the item
    (a revoke skips a locked item, ``services.conflicts.conflicts_close_settled``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _SETTLE_SQL, {"resolution": SETTLED, "now": now or database_now(), "limit": limit}
        )
        return cursor.rowcount


REVOKED = REVOKED_RULE


@dataclass
class _TenantPart:
    rolled_back: bool = False  # its savepoint undid what the part had written
    failed: bool = False  # it raised (logged, and listed)


class _Failures(list):
    """The report's ``tenant_failures``: one entry per step and tenant, ``{"step",
    "tenant_id", "count"}``, found by ``(step, tenant_id)`` (``_failure_count``)."""

    def __init__(self):
        super().__init__()
        self.at: dict = {}


def _failure_count(failures: list | None, step: str, tenant_id) -> None:
    """Count one failure of ``tenant_id``'s part of ``step`` in ``failures``: the entry of the
    step and tenant, added at its first. Until stop 69's review every failing export (and
    every file) of a tenant added an entry of its own: a folder the worker may not write
    listed the tenant once an export, up to a thousand times a batch."""
    if failures is None:
        return
    key = (step, str(tenant_id))
    at = getattr(failures, "at", None)
    if at is not None:
        entry = at.get(key)
    else:  # a caller's own list
        entry = next((f for f in failures if (f["step"], f["tenant_id"]) == key), None)
    if entry is None:
        entry = {"step": step, "tenant_id": key[1], "count": 0}
        failures.append(entry)
        if at is not None:
            at[key] = entry
    entry["count"] += 1


@contextlib.contextmanager
def _contained(on_failure, *, keep_at_soft_limit: bool = False):
    """Run a part in a savepoint when inside a caller's transaction (a database error there
    aborts the transaction, and every later statement would fail too); on a failure other
    than the task's soft time limit or the database's as a whole (``database_unavailable``,
    raised) call ``on_failure()``: it logs, counts and returns, or raises. The part's
    ``rolled_back`` says whether its savepoint undid what it wrote.

    The soft time limit is raised; with ``keep_at_soft_limit`` past the savepoint, which
    keeps what the part wrote, as the beat task's autocommit does (a whole step's part: its
    tenants' turns are kept, ``retention_delete``)."""
    part = _TenantPart()
    savepoint = transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext()
    soft_limit = None
    try:
        with savepoint:
            try:
                yield part
            except SoftTimeLimitExceeded as exc:
                if not keep_at_soft_limit:
                    raise
                soft_limit = exc
    except SoftTimeLimitExceeded:
        raise
    except Exception as exc:
        if database_unavailable(exc):
            raise
        on_failure()
        part.rolled_back, part.failed = connection.in_atomic_block, True
    if soft_limit is not None:
        raise soft_limit


def database_unavailable(exc: Exception) -> bool:
    """Whether ``exc`` is the database's as a whole, not a part's: a connection lost (a
    restart, a failover) or a database that takes no writes (SQLSTATE 25006, a standby).
    Every later step and tenant would fail alike: it ends the run, and the task retries it
    with backoff (``tasks.TRANSIENT``, ``read_only_is_transient``). Contained as a step's
    failure (b27a9eae), it made the sweep log a failure of every later step and end as a
    success, unretried (stop 69's review of retention's contained steps)."""
    if is_read_only_database(exc) or isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, DatabaseError):
        return False
    raw = connection.connection
    return raw is None or bool(getattr(raw, "closed", False))


def _tenant_isolated(step: str | tuple, tenant_id, failures: list | None):
    """Run one tenant's part of ``step`` (or of each of the steps of a tuple, which share it);
    a failure is logged with the tenant's id and counted in ``failures``, and the other
    tenants go on (one tenant's policy must not stop every tenant's retention). Without
    ``failures`` it is raised.

    Inside a caller's transaction the part runs in a savepoint: a database error there
    aborts the transaction, and without the savepoint every later tenant's statement would
    fail too. The savepoint's rollback undoes the part (``rolled_back``). In autocommit (the
    beat task) the part's own transactions stay as they committed.

    The task's soft time limit is not a tenant's failure: it ends the sweep (the next beat
    goes on), where going on ran every later tenant and step into the hard kill (stop 59's
    audit of retention).
    """
    steps = (step,) if isinstance(step, str) else step

    def failed():
        if failures is None:
            raise
        logger.exception(
            "retention %s: tenant %s failed; the other tenants go on", "/".join(steps), tenant_id
        )
        for each in steps:
            _failure_count(failures, each, tenant_id)

    return _contained(failed)


def _step_isolated(step: str | tuple, steps_failed: list | None):
    """Run ``step`` (or what the steps of a tuple share) so that its failure, one not of a
    tenant's part (a statement of every tenant's rows or none: a statement or lock timeout),
    is logged and named in ``steps_failed``, and the sweep goes on with its next step and the
    memories' rules. Without ``steps_failed`` it is raised. Until stop 69's review such a
    failure of the idempotency records', the exports' or the policies' read ended the whole
    run there, every later step and the memories' rules with it."""
    steps = (step,) if isinstance(step, str) else step

    def failed():
        if steps_failed is None:
            raise
        logger.exception(
            "retention %s: the step failed; the sweep goes on with the next", "/".join(steps)
        )
        steps_failed.extend(each for each in steps if each not in steps_failed)

    return _contained(failed, keep_at_soft_limit=True)


def _cutoff(now, retention: dict, key: str, tenant_id):
    """The oldest time ``retention[key]`` keeps, or None (no limit; ``retention_period``)."""
    period = retention_period(retention, key, tenant_id=tenant_id)
    # In UTC, as ``retention_cutoffs``: not on the wall clock of ``now``'s zone.
    return None if period is None else now.astimezone(UTC) - period


def _rules(retention: dict, now, tenant_id) -> list[tuple[str, Q]]:
    """Return (reason, condition) pairs for what ``retention`` no longer allows.

    The classes' rules are ``policy_check.retention_cutoffs``, the ones retrieval leaves out
    of every store by (``retrieval.candidates.owner_filter``): a memory this sweep deletes is
    handed to no agent from the moment it is due. Revoked preferences come first: with their
    history, before the preference or inferred period could take the head alone.
    """
    # Older versions whose successor this rule deleted without them (before it followed
    # chains): found by the successor's tombstone, so nothing else is taken under this rule.
    left_behind = Memory.objects.filter(
        tenant_id=tenant_id,
        status=Status.DELETED,
        pk__in=Tombstone.objects.filter(tenant_id=tenant_id, operation__reason_code=REVOKED).values(
            "memory_id"
        ),
    ).values("supersedes_id")
    rules = [
        (
            REVOKED,
            Q(memory_class=MemoryClass.PREFERENCE, status=Status.REVOKED)
            | Q(memory_class=MemoryClass.PREFERENCE, status=Status.SUPERSEDED, pk__in=left_behind),
        )
    ]
    for rule in retention_cutoffs(retention, now, tenant_id=tenant_id):
        rules.append((rule.reason, Q(**{rule.column: rule.value, "created_at__lt": rule.cutoff})))
    if (cutoff := _cutoff(now, retention, "rejected_days", tenant_id)) is not None:
        # A write a reviewer refused is never used; its text is kept only as the record of
        # the decision, for this long after it (the decision itself keeps ids and codes).
        rules.append(("retention:rejected", Q(status=Status.REJECTED, updated_at__lt=cutoff)))
    return rules


def retention_delete(
    *,
    now=None,
    limit: int = SWEEP_BATCH,
    failures: list | None = None,
    deadline: float | None = None,
    left: list | None = None,
    policies: dict | None = None,
    busy: list | None = None,
) -> list[DeletionOperation]:
    """Open deletion operations for memories past their class's retention; return them.

    Each rule of each tenant takes ``limit`` rows at a time until none is left or the
    ``deadline`` (``time.monotonic()``) has passed; with none, one batch, and every tenant.
    With a deadline the tenants swept longest ago go first (``Tenant.retention_swept_at``,
    set as a tenant's turn starts, so that it counts whether its rules are done, fail or
    are cut short), and the run stops between tenants once it has passed: the next run
    starts with the tenants this one did not reach, the ids of which it adds to ``left``.
    Until stop 63 every run visited the tenants in one order and checked its time within a
    tenant only: at ~20 ms a tenant, a platform of ~12,000 tenants reached the task's soft
    limit at the same tenant every run, and the later ones (and the sweep's later steps)
    were never reached (stop 62's audit of policies). Until stop 64 the turn was marked as
    it ended, so a tenant whose batch the task's soft limit cut short kept its place at the
    head and stalled every run there (stop 63's review).

    With ``failures``, a tenant whose part fails is logged and listed there, and the other
    tenants go on (``_tenant_isolated``).

    ``policies``: the run's reading of the tenants' active policies (``_active_policies``),
    the one the traces' ``trace_days`` came from (None: read here).

    A subject whose lock (or rows) another transaction holds past ``SUBJECT_LOCK_TIMEOUT_MS``
    is busy (``_rule_delete``): skipped this run, not a failure, and added to ``busy`` as
    ``{"tenant_id", "subject_id"}``, once a run; when what every operation of the tenant
    waits for is held (``_tenant_held``), the rest of the tenant's due memories wait for the
    next run too."""
    now = now or database_now()
    operations = []
    active = PolicyVersion.objects.filter(is_active=True)
    if policies is None:
        policies = _active_policies()
    # A tenant without an active policy limits nothing (``retention_section(None)``), but its
    # revoked preferences go at the next run as any tenant's: that rule asks no period of the
    # policy, and the export and the revoke page say so. They were kept, content and all, with
    # no end (stop 56's review). The tenants with a policy are read by a subquery: a list of
    # their ids bound one parameter each, past 65,535 tenants the statement could not be
    # sent, and the sweep failed at every run (stop 62's audit of policies).
    tenant_ids = list(
        Tenant.objects.filter(Q(deleted_at__isnull=True) | Q(pk__in=active.values("tenant_id")))
        .order_by(F("retention_swept_at").asc(nulls_first=True), "pk")
        .values_list("pk", flat=True)
    )
    for position, tenant_id in enumerate(tenant_ids):
        document, version = policies.get(tenant_id, (None, None))
        made: list[DeletionOperation] = []
        found = _Busy()  # the tenant's busy subjects this run (``_rule_delete``)
        # Its turn is taken as it starts (a tenant with more due than one run deletes, or
        # whose part the soft limit ends, goes on after the others have had theirs). A
        # failure there (a lock timeout: another transaction holds the tenant's row) is the
        # tenant's, not the step's (stop 69's review): counted in ``failures``, and its rules
        # wait for the next run, which starts with it (its turn was not taken).
        with _tenant_isolated("delete", tenant_id, failures) as turn:
            _turn_take(tenant_id)
        if not turn.failed:
            with _tenant_isolated("delete", tenant_id, failures) as part:
                _tenant_retention_delete(
                    tenant_id, document, version, now, limit, made, deadline, busy=found
                )
            if not part.rolled_back:
                operations.extend(made)
            if busy is not None:
                busy.extend(
                    {"tenant_id": str(tenant_id), "subject_id": str(subject_id)}
                    for subject_id in sorted(found.subjects, key=str)
                )
        if deadline is not None and time.monotonic() >= deadline:
            if left is not None:
                left.extend(tenant_ids[position + 1 :])
            break
    return operations


# The longest a tenant's turn waits for the tenant's row (``_turn_take``), in milliseconds.
# Another transaction may hold it for minutes (a whole tenant's deletion, ``FOR UPDATE``
# until it commits) or for moments (an admin's edit); past this the tenant waits for the
# next run and the others go on. Until stop 70 the wait had no bound: a held row stopped the
# memories' rules of that tenant and of every tenant after it for as long as it was held,
# into the task's soft limit. The steps' batches take no such wait: they skip the rows
# another transaction holds (``SKIP LOCKED``).
TURN_LOCK_TIMEOUT_MS = 1000

# The longest a retention operation (``_rule_delete``) waits for a lock, in milliseconds: its
# subject's (``locks.subject_deletion_lock``, held by that subject's deletion for as long as
# it runs, minutes for a large one, or by an abandoned session for good), its memory rows, the
# tenant's active version, and at its COMMIT the rows its foreign keys check (the subject's
# row, which a whole subject's deletion holds ``FOR UPDATE``). Past it the subject is busy:
# its operation writes nothing, it is named in the report's ``subjects_busy``, and the next
# run retries it. Until stop 70's third review the wait had no bound: the beat task waited
# into its soft limit, and ``manage.py retention_sweep`` as long as the lock was held.
# A user's own deletion request (API, portal, commands) is not bounded by this.
SUBJECT_LOCK_TIMEOUT_MS = 2000


@dataclass
class _Busy:
    """The subjects of one tenant's part of the memories' rules found busy this run
    (``_rule_delete``), and whether what every operation of the tenant waits for was held
    (``_tenant_held``): the part then ends for the run."""

    subjects: set = field(default_factory=set)
    tenant_held: bool = False


def _tenant_held(tenant_id) -> bool:
    """Whether another transaction holds what every retention operation of the tenant waits
    for: the tenant's row, which its operation's COMMIT checks (its foreign keys; held
    ``FOR UPDATE`` by a whole tenant's deletion), or its active policy version, which the
    operation holds ``FOR SHARE`` (``_active_version_held``; a publish replacing it holds
    it). Tried, not waited for (``NOWAIT``), in a transaction of its own (a savepoint in a
    caller's, which keeps the row locks it took until the caller's transaction ends, as the
    operations' own).

    Asked once a subject was found busy (``_rule_delete``): held, every later subject of the
    tenant would wait its ``SUBJECT_LOCK_TIMEOUT_MS`` in turn and be named busy too. Until
    stop 70's fourth review each did, and a batch of thousands of subjects spent the run's
    time on that tenant, the later tenants' due memories waiting for the next run."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM memory_core_tenant WHERE id = %s FOR KEY SHARE NOWAIT",
                [tenant_id],
            )
            cursor.execute(
                "SELECT 1 FROM memory_core_policyversion WHERE tenant_id = %s AND is_active "
                "FOR SHARE NOWAIT",
                [tenant_id],
            )
    except OperationalError as exc:
        if not _lock_not_available(exc):
            raise
        return True
    return False


@contextlib.contextmanager
def _lock_wait_bounded(milliseconds: int):
    """Run the block in a transaction of its own (a savepoint in a caller's) whose lock waits
    last at most ``milliseconds`` (its ``lock_timeout``; past it ``OperationalError``,
    lock_not_available, ``_lock_not_available``), its COMMIT's included when it is a
    transaction of its own (a caller's COMMIT, which checks the deferred foreign keys of the
    whole transaction, is the caller's: not bounded here).

    ``set_config(..., true)`` lasts until the transaction ends: a transaction of its own
    keeps it through its COMMIT, whose deferred foreign-key checks wait for rows too; in a
    caller's it would outlast the savepoint and bound the caller's later statements, so it
    is put back as the block ends (a savepoint rolled back puts it back itself)."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
                [f"{milliseconds}ms"],
            )
            (previous, _) = cursor.fetchone()
        yield
        if not outermost:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])


def _lock_not_available(exc: BaseException) -> bool:
    """Whether ``exc`` is a lock wait that outlasted its ``lock_timeout`` (SQLSTATE 55P03)."""
    return isinstance(exc, OperationalError) and isinstance(exc.__cause__, LockNotAvailable)


def _turn_take(tenant_id) -> None:
    """Mark the tenant's retention turn taken (``Tenant.retention_swept_at``), waiting at
    most ``TURN_LOCK_TIMEOUT_MS`` for its row (``_lock_wait_bounded``; past it
    ``OperationalError``, lock_not_available).

    On the database's clock, read as the row is written: the turns are ordered against the
    ones other workers marked, and a worker a day fast put its tenants a day behind them. In
    a transaction of its own (a savepoint in a caller's, whose ``lock_timeout`` is put back
    after)."""
    with _lock_wait_bounded(TURN_LOCK_TIMEOUT_MS):
        Tenant.objects.filter(pk=tenant_id).update(retention_swept_at=ClockTimestamp())


def due_by_rule(tenant_id, condition: Q):
    """The tenant's rows a retention rule (``_rules``) no longer allows, never the tombstones
    earlier sweeps left (``memory_retention``, ``memory_inferred_retention``), oldest first:
    a batch took the model's newest first, so on a backlog each run deleted the rows just
    past their due and left the most overdue, content and all (stop 67's audit of
    retention)."""
    return (
        Memory.objects.filter(tenant_id=tenant_id)
        .filter(condition)
        .exclude(status=Status.DELETED)
        # ``created_at`` alone, the order ``memory_retention`` and ``memory_inferred_retention``
        # give: with ``pk`` too only ``memory_tenant_newest`` gave it, and the planner walked
        # that backwards through every old row of the tenant, tombstones included (stop 67's
        # review: 40,005 rows for 5 due).
        .order_by("created_at")
    )


def _tenant_retention_delete(
    tenant_id,
    document,
    version,
    now,
    limit,
    operations: list,
    deadline: float | None,
    *,
    busy: _Busy | None = None,
) -> None:
    """Open the deletion operations of one tenant's retention (``document``, of policy
    ``version``); add them to ``operations`` (those made before a failure of the tenant are
    counted too). A rule's rows ``limit`` at a time, until fewer are left: an operation's
    rows are tombstones at once, so each batch is the next. With no ``deadline``, one batch
    a rule. With one, no further batch or rule once it has passed and the part has opened an
    operation (so that a run out of time still moves on): until stop 64's review a part
    begun just before it took a whole batch of every rule left, into the task's soft limit.

    The subjects found busy (``_rule_delete``) are added to ``busy``, and the later batches
    and rules of the run pass over their rows: each batch would wait for the same lock again,
    and a busy subject with a batch's rows due would fill every batch. Once the tenant is
    found held (``_tenant_held``), the part ends."""
    busy = _Busy() if busy is None else busy
    retention = retention_section(document)
    for reason, condition in _rules(retention, now, tenant_id):
        while True:
            if busy.tenant_held:
                return
            if (
                deadline is not None
                and (operations or busy.subjects)
                and time.monotonic() >= deadline
            ):
                return
            made = len(operations)
            due = due_by_rule(tenant_id, condition)
            if busy.subjects:
                due = due.exclude(subject_id__in=list(busy.subjects))
            rows = list(due.values_list("pk", "subject_id")[:limit])
            _rule_delete(tenant_id, version, reason, rows, operations, busy=busy, deadline=deadline)
            if len(rows) < limit or len(operations) == made or deadline is None:
                break


def _rule_delete(
    tenant_id,
    version,
    reason,
    rows,
    operations: list,
    *,
    busy: _Busy | None = None,
    deadline: float | None = None,
) -> None:
    """Open one deletion operation per subject of ``rows`` (``(pk, subject_id)``) due by a
    retention rule (``reason``); add them to ``operations``.

    Each in a transaction of its own whose lock waits (its COMMIT's included) last at most
    ``SUBJECT_LOCK_TIMEOUT_MS`` (``_lock_wait_bounded``). A subject whose lock or rows
    another transaction holds longer (its deletion, a write, an abandoned session) is busy:
    its operation writes nothing, it is logged (a warning, no traceback: a held subject is
    no error) and added to ``busy``, and the next run retries it. After a busy subject, the
    rest of the batch is left to the next run once ``deadline`` has passed, or when the
    tenant is held (``_tenant_held``: every later subject would wait as long)."""
    if reason == REVOKED and rows:
        # A revoked memory goes with its history, like a user's delete by memory_id.
        rows = (
            Memory.objects.filter(
                tenant_id=tenant_id,
                pk__in_array=with_predecessors(*(pk for pk, _ in rows)),
            )
            .exclude(status=Status.DELETED)
            .values_list("pk", "subject_id")
        )
    by_subject = defaultdict(list)
    for pk, subject_id in rows:
        by_subject[subject_id].append(pk)
    principal = SystemPrincipal(tenant_id=tenant_id, name=RETENTION_PRINCIPAL_NAME)
    for subject_id, ids in by_subject.items():
        if busy is not None and subject_id in busy.subjects:
            continue
        try:
            with _lock_wait_bounded(SUBJECT_LOCK_TIMEOUT_MS):
                operation = _operation_create(
                    principal=principal,
                    tenant_id=tenant_id,
                    subject_id=subject_id,
                    target=DeletionOperation.Target.MEMORY,
                    candidates=Memory.objects.filter(pk__in_array=ids).exclude(
                        status=Status.DELETED
                    ),
                    reason_code=reason,
                    # Rows another operation took since they were read (a second sweep,
                    # a user's deletion) leave nothing: no empty operation for the user.
                    if_any=True,
                    chosen_under=version,
                )
        except OperationalError as exc:
            if not _lock_not_available(exc):
                raise
            logger.warning(
                "retention delete: tenant %s: subject %s is busy (another transaction held "
                "its lock or rows past %d ms: its deletion, a write); skipped, the next run "
                "retries it",
                tenant_id,
                subject_id,
                SUBJECT_LOCK_TIMEOUT_MS,
            )
            if busy is not None:
                busy.subjects.add(subject_id)
            if _tenant_held(tenant_id):
                logger.warning(
                    "retention delete: tenant %s is busy (another transaction holds its row "
                    "or its active policy version: its deletion, a publish); the rest of its "
                    "due memories wait for the next run",
                    tenant_id,
                )
                if busy is not None:
                    busy.tenant_held = True
                return
            if deadline is not None and time.monotonic() >= deadline:
                return
            continue
        if operation is not None:
            operations.append(operation)


# _locked_first: the rows a capped sweep changes are locked and listed once (a statement of
# their own, or a MATERIALIZED CTE), then changed by their ids. As one statement, ``DELETE
# ... WHERE pk IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)``, a plan that ran the subquery
# again for each row passed over the rows the statement had already deleted or updated and
# gave the next n, until every row due was gone (tests/deletion/test_retention.py,
# ``_RESCANNING_PLAN``).


# The later steps' shares of the run's time (``retention_apply``): each takes its first round
# whatever the time, then further rounds while its share, and the run's ``SWEEP_SECONDS``,
# allow; the rest is left to the next run, 5 minutes later. 45 s in all: the memories' rules
# after them keep some 105 s of the run's 150 whenever no memory's expiry took them, and
# the run ends inside the task's 240 s soft limit however large a backlog. Until stop 69 only
# the traces had one: refused requests, idempotency records and exports each took their whole
# backlog (or a count), outside the run's time, so after an outage a backlog could run into
# the soft limit before the memories' turn (stop 67's audit of retention). In the order they
# run, most private first: exports and the files of none are full copies of what is
# remembered about a subject; traces name a subject's memories by id; idempotency records
# and refused requests hold ids, hashes and codes.
EXPORTS_SECONDS = 10
EXPORT_FILES_SECONDS = 5
TRACES_SECONDS = 20
IDEMPOTENCY_SECONDS = 5
ACCESS_DENIALS_SECONDS = 5

# Rows (files) one transaction (lookup) of a later step takes: no statement holds a long lock.
# 10,000 traces of ~90 candidates each took 0.3 s here, so in its share a sweep keeps up with
# some 1,000 retrievals a second of a tenant.
TRACES_BATCH = 10_000
ACCESS_DENIALS_BATCH = 10_000
IDEMPOTENCY_BATCH = 10_000
EXPORTS_BATCH = 1000
EXPORT_FILES_BATCH = 1000


def _in_rounds(
    step: str,
    due: list,
    take,
    seconds: float | None,
    left: list | None,
    steps_failed: list | None = None,
) -> int:
    """Take batches of each item of ``due`` (a tenant's rows, or the step's) in rounds; return
    the rows they took.

    ``take(item)`` takes one batch in a transaction of its own and returns ``(rows, full)``,
    ``full`` when more may be due. A round takes one batch of every item; while ``seconds``
    allow (None: no bound), another takes one of each item whose last batch was full. The
    first batch is taken whatever the time, so that every step moves at every run; before
    each other the time is read: read after a round, a round begun just before ``seconds``
    ran whole, a batch of every busy tenant's past them (stop 68's review). Until stop 69's
    review the whole first round was taken whatever the time: ~0.7 ms a tenant with nothing
    due, up to 0.3 s with a full batch, so after an outage 1,000 busy tenants' first round of
    traces alone outlasted the task's 240 s soft limit, and the memories' rules after it
    never ran. The items are taken in a random order, so that a round cut short does not
    leave the same tenants at every run.

    A share that ends with batches still due is logged and names ``step`` in ``left``: the
    next run goes on with them (nothing is lost, as every batch takes the oldest first). A
    batch that fails (a statement or lock timeout of a statement not of one tenant's) ends
    the step, logged and named in ``steps_failed`` (``_step_isolated``; without it, raised):
    the rows the earlier batches took are counted, and the next step goes on.
    """
    until = None if seconds is None else time.monotonic() + seconds
    due = list(due)
    random.shuffle(due)
    taken, first = 0, True
    while due:
        full = []
        for position, item in enumerate(due):
            if not first and until is not None and time.monotonic() >= until:
                logger.info(
                    "retention %s: %d deleted in its %.1f s share; more may be due (%d "
                    "tenant(s), or the step's own rows) and is left to the next run",
                    step,
                    taken,
                    seconds,
                    len(due) - position + len(full),
                )
                if left is not None:
                    left.append(step)
                return taken
            with _step_isolated(step, steps_failed) as batch:
                rows, more = take(item)
            if batch.failed:
                return taken
            taken, first = taken + rows, False
            if more:
                full.append(item)
        due = full
    return taken


def traces_expire(
    *,
    now=None,
    limit: int | None = None,
    failures: list | None = None,
    seconds: float = 0,
    left: list | None = None,
    cutoffs: list | None = None,
    steps_failed: list | None = None,
) -> int:
    """Delete retrieval traces past each tenant's ``retention.trace_days``; return the count.

    In rounds, oldest first (``_in_rounds``): a round takes one batch of at most ``limit``
    (``TRACES_BATCH``) of every tenant's, each in its own transaction, so no statement holds a
    long lock, the tenants in a random order; past the first batch only while ``seconds``
    allow, and then another round takes one of each tenant whose last batch was full. One
    batch a run (every 5 minutes) kept up with 33 retrievals a second of a tenant: a busier
    one's traces past ``trace_days`` were kept for good, more at every sweep (stop 68's audit
    of traces).

    Traces another transaction holds are skipped, never waited for: a deletion run's traces
    step deletes in the table's order and this statement in its plan's, so each held one the
    other waited for (a deadlock). The step deletes what it holds; the next sweep the rest.

    ``cutoffs``: the tenants' ``_trace_cutoffs``, read once a run for this step and the
    refused requests' (None: read here).
    """
    batch = _traces_expire_batch
    limit = limit or TRACES_BATCH
    return _tenants_in_rounds(
        "traces", batch, limit, now, failures, seconds, left, cutoffs, steps_failed
    )


def _tenants_in_rounds(step, batch, limit, now, failures, seconds, left, cutoffs, steps_failed):
    """``step`` of every tenant past its ``trace_days`` in rounds (``_in_rounds``), a
    ``batch(tenant_id, cutoff, limit, failures)`` of each tenant's a round, another of each
    whose last was full; return the count. ``cutoffs``: ``_trace_cutoffs``, read here if
    None."""

    def take(due):
        tenant_id, cutoff = due
        taken = batch(tenant_id, cutoff, limit, failures)
        return taken, taken == limit

    if cutoffs is None:
        cutoffs = _trace_cutoffs(now or database_now(), (step,), failures)
    return _in_rounds(step, cutoffs, take, seconds, left, steps_failed)


def _traces_expire_batch(tenant_id, cutoff, limit: int, failures: list | None) -> int:
    """Delete at most ``limit`` of the tenant's traces made before ``cutoff``, the oldest
    first, in one transaction; return the count (0 when its part failed)."""
    return _oldest_unheld_deleted("traces", RetrievalTrace, tenant_id, cutoff, limit, failures)


def _oldest_unheld_deleted(step: str, model, tenant_id, cutoff, limit: int, failures) -> int:
    """Delete at most ``limit`` of the tenant's ``model`` rows made before ``cutoff``, the
    oldest first, skipping rows another transaction holds (``_locked_first``), in one
    transaction; return the count (0 when the tenant's part of ``step`` failed)."""
    deleted = 0
    with _tenant_isolated(step, tenant_id, failures):
        old = model.objects.filter(tenant_id=tenant_id, created_at__lt=cutoff)
        with transaction.atomic():
            unheld = old.order_by("created_at").select_for_update(skip_locked=True)
            held = list(unheld.values_list("pk", flat=True)[:limit])  # _locked_first
            deleted = model.objects.filter(pk__in=held).delete()[0]
    return deleted


def access_denials_expire(
    *,
    now=None,
    limit: int | None = None,
    failures: list | None = None,
    seconds: float = 0,
    left: list | None = None,
    cutoffs: list | None = None,
    steps_failed: list | None = None,
) -> int:
    """Delete the agents' refused requests older than their tenant's ``retention.trace_days``
    (the health page's cross-scope denials); return the count.

    In rounds, as traces (``_in_rounds``): a batch of at most ``limit``
    (``ACCESS_DENIALS_BATCH``) of every tenant's, the oldest first, the tenants in a random
    order, past the first batch while ``seconds`` allow, then one more of each tenant whose
    last was full. Until stop 69 a tenant's were deleted
    in one statement, however many, with no regard to the run's time. ``cutoffs``: as the
    traces' (the same ``trace_days``, read once a run for both)."""
    batch = _access_denials_expire_batch
    limit = limit or ACCESS_DENIALS_BATCH
    return _tenants_in_rounds(
        "access_denials", batch, limit, now, failures, seconds, left, cutoffs, steps_failed
    )


def _access_denials_expire_batch(tenant_id, cutoff, limit: int, failures: list | None) -> int:
    """Delete at most ``limit`` of the tenant's refused requests made before ``cutoff``, the
    oldest first (``access_denial_health``), in one transaction; return the count (0 when its
    part failed)."""
    return _oldest_unheld_deleted(
        "access_denials", AccessDenial, tenant_id, cutoff, limit, failures
    )


def idempotency_records_expire(
    *,
    now=None,
    batch: int | None = None,
    seconds: float | None = None,
    left: list | None = None,
    steps_failed: list | None = None,
) -> int:
    """Delete the idempotency records past their expiry; return the count. An expired key is
    already treated as new (``services.idempotency``): this only bounds the table.

    In transactions of at most ``batch`` rows (``IDEMPOTENCY_BATCH``), the longest expired
    first, so no statement holds a long lock and the sweep keeps up however fast keyed writes
    come (one capped batch a run kept up with ~33 a second): the first whatever the time, then
    more while ``seconds`` allow (None, a caller's own run: until none is left; until stop 69
    the sweep's too, outside the run's time). Rows another transaction holds (a claim taking
    an expired key over, a replay) are skipped and left to the next sweep. A batch that
    fails ends the step, named in ``steps_failed`` (``_in_rounds``; without it, raised).
    """
    now = now or database_now()
    batch = batch or IDEMPOTENCY_BATCH

    def take(_):
        count = _idempotency_records_expire_batch(now, batch)
        return count, count == batch

    return _in_rounds("idempotency_records", [None], take, seconds, left, steps_failed)


def _idempotency_records_expire_batch(now, batch: int) -> int:
    """Delete at most ``batch`` idempotency records expired at ``now``, the longest expired
    first, in one transaction; return the count."""
    with transaction.atomic():
        expired = IdempotencyRecord.objects.filter(expires_at__lte=now)
        unheld = expired.order_by("expires_at").select_for_update(skip_locked=True)
        held = list(unheld.values_list("pk", flat=True)[:batch])  # _locked_first
        return IdempotencyRecord.objects.filter(pk__in=held).delete()[0]


def exports_expire(
    *,
    now=None,
    limit: int | None = None,
    failures: list | None = None,
    seconds: float = 0,
    left: list | None = None,
    steps_failed: list | None = None,
) -> int:
    """Delete the exports made more than ``MEMLEDGER_EXPORT_RETENTION_HOURS`` ago, file and
    row; return the count. Each is a full copy of what is remembered about a subject, kept
    only for its download (0: kept until a deletion of the subject removes it).

    The oldest first, in transactions of at most ``limit`` (``EXPORTS_BATCH``): the first
    whatever the time, then more while ``seconds`` allow (until stop 69 one batch a run).
    Exports a deletion run holds (its exports step rewrites or removes them) are skipped and
    left to the next sweep. One whose file cannot be removed (a folder the worker may not
    write) keeps its row for the next sweep and is counted in ``failures`` with its tenant;
    the others go on (until stop 57 it stopped the sweep there, every run, and every tenant's
    expired exports stayed on disk). Each batch takes the exports after the last one the
    run's previous batch took, so neither those nor the skipped ones are taken again. A batch
    whose own statement fails (a statement or lock timeout) ends the step, named in
    ``steps_failed`` (``_in_rounds``; without it, raised).
    """
    hours = settings.MEMLEDGER_EXPORT_RETENTION_HOURS
    if not hours:
        return 0
    cutoff = (now or database_now()) - timedelta(hours=hours)
    limit = limit or EXPORTS_BATCH
    after: list = [None]  # (created_at, pk) of the last export the run took

    def take(_):
        deleted, taken, after[0] = _exports_expire_batch(cutoff, after[0], limit, failures)
        return deleted, taken == limit

    return _in_rounds("exports", [None], take, seconds, left, steps_failed)


def _exports_expire_batch(cutoff, after, limit: int, failures: list | None) -> tuple:
    """Delete, file and row, at most ``limit`` of the exports made before ``cutoff`` and after
    ``after`` (``(created_at, pk)``, or None), the oldest first, in one transaction; return
    ``(deleted, taken, (created_at, pk) of the last taken)``."""
    old = Export.objects.filter(created_at__lt=cutoff)
    if after is not None:
        old = old.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], pk__gt=after[1]))
    deleted, taken, last = 0, 0, after
    with transaction.atomic():
        for export in old.order_by("created_at", "pk").select_for_update(skip_locked=True)[:limit]:
            taken, last = taken + 1, (export.created_at, export.pk)
            with _tenant_isolated("exports", export.tenant_id, failures) as part:
                export_delete(export=export)  # the file first: a failure keeps the row
            deleted += not part.rolled_back
    return deleted, taken, last


# Age past which a file no export row names is removed while exports are kept until a
# deletion (MEMLEDGER_EXPORT_RETENTION_HOURS = 0): no one can download it.
ORPHAN_EXPORT_HOURS = 24


def export_files_orphaned_remove(
    *,
    now=None,
    batch: int | None = None,
    failures: list | None = None,
    seconds: float | None = None,
    left: list | None = None,
) -> int:
    """Remove the files under ``MEMLEDGER_EXPORT_DIR`` that no Export row names and that are
    older than the export retention (``ORPHAN_EXPORT_HOURS`` when that keeps exports); return
    how many.

    A request that wrote its export's file and then failed (a lost connection, a COMMIT
    that failed, gunicorn's timeout) rolled its row back and left the file, a full copy of
    a subject's memories, that no row-driven expiry ever reached; so did a write killed
    before its rename (``.memledger-new-*.json``, ``files.NEW_FILE_PREFIX``). Only
    ``<tenant id>/<subject id>/*.json`` files are considered, by their modification time
    and name alone (never read, so never held in memory), each looked up among its own
    tenant's rows, ``batch`` (``EXPORT_FILES_BATCH``) at a time; links are never followed. A
    file being written now is newer than the cutoff.

    The first tenant's folder and its first lookup whatever the time; past them the time is
    read before each folder and each lookup, and once ``seconds`` have passed (None: no
    bound) the rest is left to the next run (logged, and the step named in ``left``). The
    tenants' folders, and the files of each, are visited in a random order, so that a run cut
    short does not leave the same ones at every run (until stop 69's review a folder's files
    in the disk's order: one of more kept exports than a share looks through kept the files
    of none after them for good). Until stop 69 every file of every folder was looked at,
    whatever the time.

    A file the worker cannot remove, or a folder it cannot read (another user's, a folder it
    may not write), is skipped, logged and counted in ``failures`` with its tenant, and so is
    a tenant's lookup that fails (the rest of its folder then waits for the next run); the
    others go on (until stop 58 the first one failed the sweep, every run, and every orphaned
    copy after it stayed on disk: what stop 57 fixed in ``exports_expire``).
    """
    hours = settings.MEMLEDGER_EXPORT_RETENTION_HOURS or ORPHAN_EXPORT_HOURS
    batch = batch or EXPORT_FILES_BATCH
    # This host's clock, not the database's: the cut-off is compared with the files' mtimes,
    # which this host's disk wrote.
    cutoff = ((now or timezone.now()) - timedelta(hours=hours)).timestamp()
    until = None if seconds is None else time.monotonic() + seconds
    removed, looked_up = 0, 0
    folders = _uuid_folders(export_dir())
    random.shuffle(folders)
    for position, tenant_folder in enumerate(folders):
        if position and until is not None and time.monotonic() >= until:
            return _export_files_left(removed, seconds, len(folders) - position, left)
        old = _old_export_files(tenant_folder, cutoff, failures)
        # In a random order too: a share that ends inside a folder would otherwise look up
        # the same first files (the disk's order) at every run, and a folder of more kept
        # exports than a share looks through (every one with ``0``) keep the files of none
        # after them for good (stop 69's review).
        random.shuffle(old)
        for start in range(0, len(old), batch):
            if looked_up and until is not None and time.monotonic() >= until:
                return _export_files_left(removed, seconds, len(folders) - position, left)
            looked_up += 1
            # A lookup that fails (a statement or lock timeout) is its tenant's: the rest of
            # its folder waits for the next run, the other tenants' go on (until stop 69's
            # review it ended the sweep, before the memories' rules).
            with _tenant_isolated("export_files", tenant_folder.name, failures) as lookup:
                removed += _export_files_remove_batch(
                    tenant_folder, old[start : start + batch], failures
                )
            if lookup.failed:
                break
    return removed


def _export_files_left(removed: int, seconds, folders: int, left: list | None) -> int:
    """Log that the orphaned files' share ended with ``folders`` tenants' folders left (one
    of them maybe in part); name the step in ``left``; return ``removed``."""
    logger.info(
        "retention export_files: %d removed in its %.1f s share; %d tenant folder(s) not "
        "looked through are left to the next run",
        removed,
        seconds,
        folders,
    )
    if left is not None:
        left.append("export_files")
    return removed


def _export_files_remove_batch(tenant_folder: Path, chunk: list, failures: list | None) -> int:
    """Remove the files of ``chunk`` (``(path below the export folder, path)``, of one tenant's
    folder) that no export row of the tenant names, in one lookup; return how many."""
    named = set(
        Export.objects.filter(
            tenant_id=tenant_folder.name, path__in=[relative for relative, _ in chunk]
        ).values_list("path", flat=True)
    )
    removed = 0
    for relative, path in chunk:
        if relative not in named:
            with _export_file_isolated(tenant_folder.name, failures):
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def _old_export_files(tenant_folder: Path, cutoff: float, failures: list | None) -> list:
    """Return ``(path below the export folder, path)`` of the ``*.json`` files in the subject
    folders of ``tenant_folder`` last modified before ``cutoff``; a folder that cannot be read
    is skipped (``_export_file_isolated``)."""
    old: list[tuple[str, Path]] = []
    subject_folders: list[Path] = []
    with _export_file_isolated(tenant_folder.name, failures):
        subject_folders = _uuid_folders(tenant_folder)
    for subject_folder in subject_folders:
        with (
            _export_file_isolated(tenant_folder.name, failures),
            os.scandir(subject_folder) as entries,
        ):
            for entry in entries:
                if not (entry.name.endswith(".json") and entry.is_file(follow_symlinks=False)):
                    continue
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    relative = f"{tenant_folder.name}/{subject_folder.name}/{entry.name}"
                    old.append((relative, Path(entry.path)))
    return old


@contextlib.contextmanager
def _export_file_isolated(tenant_id: str, failures: list | None):
    """Skip one export file or folder of tenant ``tenant_id`` that the worker cannot remove or
    read: logged (the error names the path), counted in the tenant's one entry of
    ``failures`` (``_failure_count``).

    Logged without a stack trace: a folder of another user's files fails for every file
    alike, every sweep."""
    try:
        yield
    except OSError as exc:
        logger.error("retention export_files: tenant %s: %s; the others go on", tenant_id, exc)
        _failure_count(failures, "export_files", tenant_id)


def _uuid_folders(parent: Path) -> list[Path]:
    """The real folders (no links) in ``parent`` named by an id: a tenant's or a subject's."""
    if not parent.is_dir():
        return []
    folders = []
    with os.scandir(parent) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            try:
                if str(uuid.UUID(entry.name)) == entry.name:
                    folders.append(Path(entry.path))
            except ValueError:
                continue
    return folders


# The steps that keep their rows as long as each tenant's ``retention.trace_days``.
_TRACE_STEPS = ("traces", "access_denials")


def _active_policies() -> dict:
    """Return ``{tenant_id: (document, version)}`` of every tenant's active policy, in one
    query: a run's one reading of them (``retention_apply``)."""
    active = PolicyVersion.objects.filter(is_active=True)
    return {
        tenant_id: (document, version)
        for tenant_id, document, version in active.values_list("tenant_id", "document", "version")
    }


def _trace_cutoffs(now, steps: tuple, failures: list | None, policies: dict | None = None) -> list:
    """Return ``(tenant_id, oldest time kept)`` for every tenant whose policy bounds traces
    (a tenant whose policy cannot be read is logged and listed in ``failures`` under each of
    ``steps``, the steps that use them: the traces' and the refused requests', which read
    them once a run, ``retention_apply``). ``policies``: ``_active_policies`` (None: read
    here)."""
    cutoffs = []
    if policies is None:
        policies = _active_policies()
    for tenant_id, (document, _version) in policies.items():
        with _tenant_isolated(steps, tenant_id, failures):
            retention = retention_section(document)
            cutoff = _cutoff(now, retention, "trace_days", tenant_id)
            if cutoff is not None:
                cutoffs.append((tenant_id, cutoff))
    return cutoffs


def retention_apply(*, now=None) -> dict:
    """Expire, mend the conflicts left citing a superseded row (``conflicts_heal_stale``),
    expire old exports and the files of none, traces, idempotency records and refused
    requests, then delete memories by retention; return the counts, under ``steps_left`` the
    later steps whose share of the run's time ended with more due, under ``steps_failed`` the
    steps that failed (a statement not of one tenant's: a statement or lock timeout; logged,
    and the later steps and the memories' rules went on), and under ``tenant_failures`` the
    tenants whose part of a step failed, one entry per step and tenant with its ``count``
    (each logged with its id; the other tenants went on), and under ``subjects_busy`` the
    subjects the memories' rules skipped, their lock or rows held by another transaction past
    ``SUBJECT_LOCK_TIMEOUT_MS`` (``_rule_delete``; the next run retries them).

    The run's time is ``SWEEP_SECONDS`` (150 s of the task's 240 s soft limit). The memories'
    expiry, which keeps no model from content past its end, may take it all; each later step
    then takes its first batch, and more while its share (``EXPORTS_SECONDS`` and the others)
    and the run's time allow; the memories' rules the rest. So a run ends within its time and
    a batch of each step, whatever the backlog, and what is left goes at the next run.

    The expiries come before the tenants' turns: after them, a tenant whose one batch
    outlasts the task's soft limit (rolled back, so the same batch at every run) ended every
    run before them, and no tenant's traces, denials, idempotency records or exports expired
    (stop 64's review)."""
    files_now = now  # None: the orphaned files' step reads this host's clock, as their mtimes
    now = now or database_now()
    failures = _Failures()
    steps_failed: list[str] = []
    deadline = time.monotonic() + SWEEP_SECONDS
    expired = healed = settled = 0
    with _step_isolated("expire", steps_failed):
        while True:  # a transaction a batch, until fewer are left (``SWEEP_BATCH``)
            batch = memories_expire(now=now, limit=SWEEP_BATCH)
            expired += batch
            if batch < SWEEP_BATCH or time.monotonic() >= deadline:
                break
    with _step_isolated("conflicts_heal", steps_failed):
        healed = conflicts_heal_stale()
    with _step_isolated("conflicts_settle", steps_failed):
        settled = conflicts_settle(now=now)

    def share(seconds: float) -> float:
        """A later step's share, within what is left of the run's time."""
        return max(0.0, min(seconds, deadline - time.monotonic()))

    # Each later step's failure is its own (``_step_isolated``): logged, named in
    # ``steps_failed``, and the next step and the memories' rules go on; what a step took
    # before it failed is counted (its batches' own failures end it in ``_in_rounds``).
    steps_left: list[str] = []
    counted = dict.fromkeys(
        ("exports", "export_files", "traces", "idempotency_records", "access_denials"), 0
    )
    shared = {"left": steps_left, "steps_failed": steps_failed}
    with _step_isolated("exports", steps_failed):
        counted["exports"] = exports_expire(
            now=now, failures=failures, seconds=share(EXPORTS_SECONDS), **shared
        )
    with _step_isolated("export_files", steps_failed):
        counted["export_files"] = export_files_orphaned_remove(
            now=files_now, failures=failures, seconds=share(EXPORT_FILES_SECONDS), left=steps_left
        )
    # The tenants' active policies, read once a run, in one query, for the traces and the
    # refused requests (their ``trace_days``) and the memories' rules: until stop 69's review
    # each of those steps read every active policy, ~0.12 ms a tenant, 1.5 s a step at 12,000
    # tenants; until stop 70 the memories' rules read them again, with their versions.
    # A version published during the run is the next run's, for every step alike: the one
    # reading (the earlier) wins for both, so no run applies two versions of a tenant's
    # policy. An operation opened under the reading names its version (``chosen_under``), and
    # one published since that the operation finds as it locks its rows makes it write
    # nothing (``deletion.services._operation_create``): a version that keeps the rows longer
    # saves them, as when the rules read the policies themselves. A read that fails is the
    # traces' steps' (named in ``steps_failed``); the memories' rules then read them again.
    policies: dict | None = None
    cutoffs: list = []
    with _step_isolated(_TRACE_STEPS, steps_failed):
        policies = _active_policies()
        cutoffs = _trace_cutoffs(now, _TRACE_STEPS, failures, policies)
    with _step_isolated("traces", steps_failed):
        counted["traces"] = traces_expire(
            now=now, failures=failures, seconds=share(TRACES_SECONDS), cutoffs=cutoffs, **shared
        )
    with _step_isolated("idempotency_records", steps_failed):
        counted["idempotency_records"] = idempotency_records_expire(
            now=now, seconds=share(IDEMPOTENCY_SECONDS), **shared
        )
    with _step_isolated("access_denials", steps_failed):
        counted["access_denials"] = access_denials_expire(
            now=now,
            failures=failures,
            seconds=share(ACCESS_DENIALS_SECONDS),
            cutoffs=cutoffs,
            **shared,
        )
    left: list = []
    busy: list[dict] = []
    operations: list[DeletionOperation] = []
    with _step_isolated("delete", steps_failed):
        operations = retention_delete(
            now=now,
            limit=SWEEP_BATCH,
            failures=failures,
            deadline=deadline,
            left=left,
            policies=policies,
            busy=busy,
        )
    return {
        "expired": expired,
        "conflicts_healed": healed,
        "conflicts_settled": settled,
        "deletion_operations": len(operations),
        # The tenants this run's time left for the next (``retention_delete``).
        "tenants_left": len(left),
        "memories_deleted": sum(len(op.memory_ids) for op in operations),
        "traces_deleted": counted["traces"],
        "access_denials_deleted": counted["access_denials"],
        "idempotency_records_deleted": counted["idempotency_records"],
        "exports_deleted": counted["exports"],
        "export_files_orphaned_deleted": counted["export_files"],
        # The later steps whose share of this run's time ended with more due: the next goes on.
        "steps_left": steps_left,
        # The steps that failed (logged with the error): the later steps went on.
        "steps_failed": steps_failed,
        # One entry per step and tenant whose part failed, with how many times this run
        # (logged with its id): the other tenants went on.
        "tenant_failures": list(failures),
        # The subjects whose lock or rows another transaction held past
        # ``SUBJECT_LOCK_TIMEOUT_MS`` (its deletion, a write): skipped, no failure; the next
        # run retries them.
        "subjects_busy": busy,
    }
