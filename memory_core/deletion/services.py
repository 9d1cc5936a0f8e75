"""Deletion requests: one transaction writes the ledger, the operation and its steps.

The memories stop being retrievable in that same transaction (status ``deleted`` and their
content, value and vector cleared); when the transaction commits, the operation is appended
to the deletion journal (``ledger.py``) and the Celery task is sent, whose run purges and
verifies the derived stores (``memory_core.deletion.runner``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta
from functools import partial, reduce
from operator import or_

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Now
from django.utils import timezone
from psycopg.errors import DeadlockDetected, LockNotAvailable, QueryCanceled

from memory_core.clock import database_now
from memory_core.commit_hooks import after_commit
from memory_core.deletion.ledger import (
    backups_cutoff,
    ledger_appended,
    ledger_catch_up,
    ledger_entry,
    ledger_write,
    memory_key_digest,
    queued_entry,
    queued_operation_id,
)
from memory_core.deletion.selectors import (
    deletion_scope,
    deletion_visible_ids,
    queued_deletion,
)
from memory_core.deletion.stores import EventsStore, active_stores, scrub_memories
from memory_core.exceptions import (
    Busy,
    Conflict,
    NotFound,
    OverBudget,
    PermissionDenied,
    SubjectBeingDeleted,
    ValidationFailed,
)
from memory_core.locks import subject_deletion_lock
from memory_core.models import (
    ApiKey,
    DeletionOperation,
    DeletionStep,
    Export,
    Memory,
    MemoryEvent,
    PolicyVersion,
    RetrievalTrace,
    Status,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.models.lookups import uuid_array
from memory_core.principals import (
    AgentPrincipal,
    QueuedRequester,
    SubjectPrincipal,
    SystemPrincipal,
    require_reviewer,
)
from memory_core.retrieval.traces import unknown_user_traces, user_id_digest
from memory_core.rls import tenant_atomic

logger = logging.getLogger(__name__)

# A queued deletion's mark (Subject; of the whole subject, or of one memory_key): set
# together by the queue, cleared together by its run or a tenant's deletion. Its journal
# line's record goes with it: a mark queued again owes a line of its own.
QUEUED_FIELDS = [
    "deletion_queued_at",
    "deletion_queued_by",
    "deletion_queued_by_agent",
    "deletion_queued_key",
    "deletion_queued_journaled_at",
]
QUEUED_CLEARED = {**dict.fromkeys(QUEUED_FIELDS), "deletion_queued_key": ""}
# The Conflict's code of a memory's deletion whose ``expected_status`` is not the memory's.
MEMORY_CHANGED = "memory_changed"


def deletion_journal_on_commit(operation: DeletionOperation, tombstones) -> None:
    """Append ``operation`` to the deletion journal once the current transaction commits.

    The line is made now, in the request's transaction (after its commit the request no
    longer acts for the tenant). Register it before ``deletion_run_on_commit``: the line is
    then written before the task is sent, and a run finds ``journaled_at`` already set.
    """
    entry = ledger_entry(operation, tombstones)
    after_commit(partial(_journal_committed, operation.id, operation.tenant_id, entry))


def _journal_committed(operation_id, tenant_id, entry: dict) -> None:
    """Append the committed request's journal line and record it; never raise.

    A failed append (a full disk, a missing volume) is logged and leaves ``journaled_at``
    empty: the operation's run appends it (``runner._journal``), and cannot complete until
    one has. An append whose record fails is appended again by the run: a duplicate line is
    harmless (the reader keeps one per operation). A queued deletion's line names no
    operation row yet: ``_journal_queued`` records it on the subject's mark.
    """
    try:
        ledger_write(entry)
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception("deletion %s: the journal append on request failed", operation_id)
        return
    try:
        with tenant_atomic(tenant_id):
            DeletionOperation.objects.filter(pk=operation_id, journaled_at=None).update(
                journaled_at=timezone.now()
            )
    except DatabaseError:
        logger.warning("deletion %s: journaled, but not recorded", operation_id, exc_info=True)


def deletion_run_on_commit(operation_id) -> None:
    """Send the deletion task once the current transaction commits (never inside it)."""
    transaction.on_commit(partial(deletion_enqueue, operation_id))


def deletion_enqueue(operation_id) -> bool:
    """Send the deletion task now; return False if the broker refused (the sweep re-drives)."""
    from memory_core.tasks import deletion_run_task

    return _send_or_leave(deletion_run_task, operation_id, f"deletion {operation_id}")


# After a send the broker refused or timed out, this process leaves its sends of the next
# moments to the sweep at once: a broker that accepts and never answers costs each send its
# timeout (~4 s), and a request making several operations (the admin's page of memories, a
# subject's request re-driving its failed ones) or the retention sweep (one operation a subject
# due) paid it for each, past gunicorn's 30 s or the task's time limit.
BROKER_DOWN_SECONDS = 30.0
_broker_down_until = 0.0


def _send_or_leave(task, pk, label: str) -> bool:
    """Send ``task`` for ``pk``; False if the broker refused, timed out or did so a moment ago
    (``BROKER_DOWN_SECONDS``): its row is the truth, and the beat sweep sends it again."""
    from memory_core.tasks import send

    global _broker_down_until
    if time.monotonic() < _broker_down_until:
        logger.warning("%s: broker unavailable a moment ago, left to the sweep", label)
        return False
    try:
        send(task, str(pk))
    except SoftTimeLimitExceeded:  # the task's own time limit, not the broker: let it end
        raise
    except Exception as exc:  # the broker is down, or up and refusing (out of memory, ACL)
        _broker_down_until = time.monotonic() + BROKER_DOWN_SECONDS
        logger.warning(
            "%s: broker unavailable, left to the sweep (%s: %s)",
            label,
            type(exc).__name__,
            exc,
            exc_info=True,
        )
        return False
    return True


def _acts_for(principal, external_id: str) -> bool:
    """Whether ``principal`` may act for the user ``external_id``: an agent without
    any_subject acts only for its subject token's subject."""
    may_act_for = getattr(principal, "may_act_for", None)
    return may_act_for is None or may_act_for(external_id)


def _subject_or_none(principal, subject_id=None, subject_external_id=None) -> Subject | None:
    """The subject of ``principal``'s tenant by id or external id, if any (of a portal user,
    only theirs), whether or not ``principal`` may act for it."""
    queryset = Subject.objects.filter(tenant_id=principal.tenant_id)
    if subject_id is not None:
        queryset = queryset.filter(pk=subject_id)
    else:
        queryset = queryset.filter(external_id=subject_external_id)
    if isinstance(principal, SubjectPrincipal):
        queryset = queryset.filter(pk=principal.subject_id)
    return queryset.first()


def _acted_for(principal, subject: Subject | None, user_id_sha256: str = "") -> Subject:
    """``subject`` if ``principal`` may act for it; NotFound, as for none, otherwise.

    With ``user_id_sha256``, a subject named by its own id is acted for as the person that
    digest names: the one ``traced_subject_deletion_request`` makes to erase a person known
    only from traces, whose row holds no id of theirs. A token names a person by their id,
    never by a row's, so an agent bound to them was refused their erasure (stop 64's review
    of the erasure from traces left it open). Any other subject is acted for by its
    external id, digest or not.
    """
    if subject is None:
        raise NotFound("No subject with this id.")
    if user_id_sha256 and subject.external_id == str(subject.pk):
        acts = _acts_for_digest(principal, user_id_sha256)
    else:
        acts = _acts_for(principal, subject.external_id)
    if not acts:
        raise NotFound("No subject with this id.")
    return subject


def _acts_for_digest(principal, user_id_sha256: str) -> bool:
    """Whether ``principal`` may act for the person whose user id's digest is
    ``user_id_sha256`` (``_acts_for``'s rule, by the digest)."""
    may_act_for_digest = getattr(principal, "may_act_for_digest", None)
    return may_act_for_digest is None or may_act_for_digest(user_id_sha256)


def _subject(
    principal, subject_id=None, subject_external_id=None, user_id_sha256: str = ""
) -> Subject:
    subject = _subject_or_none(principal, subject_id, subject_external_id)
    return _acted_for(principal, subject, user_id_sha256)


def traced_user(*, principal, external_id: str) -> bool:
    """Whether ``principal`` may act for ``external_id`` and read traces of retrievals for
    them made while no subject named them (``traces.unknown_user_traces``: an agent's own):
    a person known only so, whom ``traced_subject_deletion_request`` erases. Ask only when no
    subject has this external id."""
    return _acts_for(principal, external_id) and (
        unknown_user_traces(principal=principal, user_id=external_id).exists()
    )


@transaction.atomic
def traced_subject_deletion_request(
    *, principal, external_id: str, time_limited: bool = True
) -> DeletionOperation:
    """Delete a person known only from the traces of their retrievals (``traced_user``), as
    a whole subject: its traces step deletes those traces by the id's digest, but only a
    subject's deletion is made, and without one ``delete_subject`` and the API's
    ``{"subject"}`` answered that there was nobody to delete, while the traces, naming the
    person with the task, project, session and repository ids the agent sent, stayed for the
    policy's ``trace_days`` (stop 64's audit of the commands).

    Their subject is made named by its own id, with no display name, as a replay makes back a
    deleted person's row, and the operation keeps the digest (``user_id_sha256``), by which
    the traces step, its lock and the journal's line find the traces. Made with the plain id
    (``subjects_ensure_locked``), the row the deletion keeps wrote down, for good, the id
    the database had held only as a digest, answered every other agent of the tenant (202
    and the operation, which told how many retrievals were made for the person) and named a
    subject a write refuses (stop 64's review of the erasure from traces). Asked again before
    that operation has run, the same one comes back. An agent bound by a subject token to
    the person acts for the row by that digest (``_acted_for``), and sees the operation
    (``selectors.deletion_scope``).
    """
    digest = user_id_digest(external_id)
    # The newest of those the caller may see, not the tenant's newest: another agent's
    # erasure of the person asked since (its asker's alone) hid the caller's own, and a
    # second subject and operation were made (stop 67's review).
    asked = (
        deletion_scope(principal)
        .filter(target=DeletionOperation.Target.SUBJECT, user_id_sha256=digest)
        .exclude(status=DeletionOperation.State.COMPLETED)
        .order_by("-requested_at", "-id")
        .first()
    )
    if asked is not None:
        return _already_requested(asked)
    own_id = uuid.uuid4()
    Subject.objects.create(pk=own_id, tenant_id=principal.tenant_id, external_id=str(own_id))
    return deletion_request(
        principal=principal,
        subject_id=own_id,
        user_id_sha256=digest,
        time_limited=time_limited,
    )


def with_predecessors(*memory_ids) -> list[uuid.UUID]:
    """Return ``memory_ids`` and every older version they supersede (their history)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH RECURSIVE chain(id, supersedes_id) AS (
                SELECT id, supersedes_id FROM memory_core_memory WHERE id = ANY(%s::uuid[])
                UNION
                SELECT m.id, m.supersedes_id FROM memory_core_memory m
                JOIN chain c ON m.id = c.supersedes_id
            )
            SELECT id FROM chain
            """,
            [[str(memory_id) for memory_id in memory_ids]],
        )
        return [row[0] for row in cursor.fetchall()]


def _request_seconds(time_limited: bool, seconds: float | None) -> float | None:
    """The seconds a time-limited request may spend: the setting's, or less when ``seconds``
    is what is left of a budget shared by several requests."""
    if not time_limited:
        return None
    setting = settings.MEMLEDGER_DELETION_REQUEST_BUDGET
    if seconds is None or not setting or setting <= 0:
        return setting
    return min(setting, max(seconds, 0.001))


class Budget:
    """The time a deletion request made over HTTP may spend in the database
    (``MEMLEDGER_DELETION_REQUEST_BUDGET``).

    The request's cost grows with the memories it deletes (docs/operations.md, "Scaling"):
    past gunicorn's timeout the worker is killed mid-transaction, the caller gets a 500 and
    every retry ends the same way. Each ``step`` gives the statements up to the next one
    what is left as their ``statement_timeout`` (a lock wait included), so the request ends
    first, rolled back, and says why (``OverBudget``). ``seconds`` None (or 0): no limit,
    and no statement is sent. ``limited``: the request is one over HTTP (a command's is not),
    whatever its seconds.
    """

    def __init__(self, seconds: float | None, *, limited: bool = False):
        self.limited = limited
        self.seconds = seconds if seconds and seconds > 0 else None
        self.deadline = None if self.seconds is None else time.monotonic() + self.seconds
        self._restore: str | None = None

    def left(self) -> float | None:
        """The seconds left (below 0 once spent), or None: no limit."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def step(self) -> None:
        """Bound the statements until the next step by the time left; raise when none is."""
        if self.deadline is None:
            return
        left_ms = int((self.deadline - time.monotonic()) * 1000)
        if left_ms < 1:
            raise _OutOfTime
        with connection.cursor() as cursor:
            if self._restore is None:
                cursor.execute("SELECT current_setting('statement_timeout')")
                self._restore = cursor.fetchone()[0]
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{left_ms}ms"])

    def close(self) -> None:
        """Give the rest of the transaction its own statement_timeout back."""
        if self._restore is not None:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [self._restore])

    @contextmanager
    def within(self, *, instead: str):
        """Run the block in a transaction (a savepoint inside a request's); if the budget ran
        out, roll it back and raise ``OverBudget``, whose message ends with ``instead``: what
        to do when a request cannot do it."""
        try:
            with transaction.atomic():
                yield
                self.close()
        except _TooMany as exc:
            raise OverBudget(
                f"The deletion has more than {exc.above:,} memories "
                "(MEMLEDGER_DELETION_QUEUE_ABOVE), more than a request deletes at once, so "
                f"nothing was deleted. {instead}, which has no time limit.",
                code="deletion_too_large",
                details={"budget_seconds": self.seconds, "queue_above": exc.above},
            ) from exc
        except (_OutOfTime, OperationalError) as exc:
            cause = exc.__cause__ if isinstance(exc, OperationalError) else exc
            if self.seconds is None or not isinstance(cause, (_OutOfTime, QueryCanceled)):
                raise
            raise OverBudget(
                f"The deletion did not finish within the {self.seconds:g} s a request may "
                "spend on it (the memories it deletes are very many, or other work held "
                f"them), so nothing was deleted. {instead}, which has no time limit.",
                code="deletion_too_large",
                details={"budget_seconds": self.seconds},
            ) from exc


class _OutOfTime(Exception):
    """The budget ran out between two statements (one timed out raises QueryCanceled)."""


class _TooMany(Exception):
    """A whole subject or a memory_key of more memories than MEMLEDGER_DELETION_QUEUE_ABOVE,
    refused before any work (``_refuse_at_once_if_too_many``)."""

    def __init__(self, above: int):
        super().__init__(above)
        self.above = above


def deletion_request(
    *,
    principal,
    memory_id=None,
    subject_id=None,
    memory_key=None,
    subject_external_id=None,
    reason_code: str = "",
    time_limited: bool = True,
    seconds: float | None = None,
    queued_at=None,
    expected_status: str | None = None,
    user_id_sha256: str = "",
) -> DeletionOperation:
    """Request the deletion of a memory, a subject's memory_key, or all of a subject's memories.

    - ``memory_id``: that memory and every older version it supersedes;
    - ``subject_id`` (or ``subject_external_id``) with ``memory_key``: every memory on the key;
    - ``subject_id`` (or ``subject_external_id``) alone: every memory of the subject, and the
      subject's exports, traces and caches.

    Only what ``principal`` may see is in reach; anything else is NotFound. An agent deletes
    only memory types its grant lets it write (as revoke), a memory only when its grant
    reaches every older version it supersedes (a key's request made at once: every older
    version the key's memories it deletes supersede), and a whole subject only when its
    grant reaches every memory of the subject; otherwise PermissionDenied.

    Asking again returns the operation already asked for instead of opening an empty one:
    a memory that is already deleted returns the operation that deleted it; a whole subject
    whose every memory is already in the ledger returns its last whole-subject operation
    while that one is under way, or once it completed if no export or trace of the subject
    was made since and no other deletion of the subject (a memory's, a key's) is unfinished:
    else that unfinished one (as it does when the subject has no whole-subject operation
    yet). So does a memory's or a whole subject's request that waited for the rows a whole
    tenant's deletion in flight took (it takes no subject's lock): the tenant's operation
    answers it. The returned operation's ``already_requested`` says which it is. Only an
    operation the principal may see (``deletion_scope``) is returned: a memory another's such
    deletion took is a Conflict (``already_deleted``), and a whole subject is answered among
    those it may see (``_subject_deletion_covering``), or SubjectBeingDeleted (a tenant's
    operation it may not see took them: ``_subject_taken_meanwhile``). A whole subject's
    request also re-drives the subject's failed operations (``_redrive_failed``).

    ``time_limited``: the request gives up after ``MEMLEDGER_DELETION_REQUEST_BUDGET``
    seconds in the database, rolled back, with ``OverBudget`` (``deletion_too_large``): a
    subject of hundreds of thousands of memories takes longer than a web worker may run
    (the API, the portal and the admin call it so), and a whole subject or a key of more
    than ``MEMLEDGER_DELETION_QUEUE_ABOVE`` memories is refused so at once
    (``deletion_request_or_queue`` queues those for a worker). ``manage.py delete_subject``
    passes False. ``seconds``: what is left of a budget shared by several requests in one web
    request (the admin's actions), when less than the setting's.

    ``queued_at``: a whole subject's or a key's request queued at that moment
    (``subject_deletion_queue``) and made now by a worker: its operation gets the id the queue
    handed out (``ledger.queued_operation_id``) and that moment as ``requested_at``, even
    with nothing left to delete.

    ``expected_status``: a memory's status when its deletion was decided on (the portal's
    delete page says what deleting it takes, which depends on it: the version in use goes
    with its history, a superseded one leaves the newer version in use). It is read again
    once the request holds the subject's lock, after any correction or approval in flight
    has committed; another status (not deleted) is a Conflict (``memory_changed``, its
    ``details`` say the status now) and nothing is deleted.

    ``user_id_sha256``: a whole subject's, the digest of the person's user id its row does
    not hold (``traced_subject_deletion_request``), kept on the operation; an agent acts for
    a row named by its own id as for that person (``_acted_for``).
    """
    budget = Budget(_request_seconds(time_limited, seconds), limited=time_limited)
    if memory_id is not None:
        # "Delete by memory_key in parts" deleted the key's every memory, not this one's
        # history alone (stop 62's audit of the commands).
        instead = "Ask an operator to run `manage.py delete_subject` with --memory and its id"
    else:
        instead = (
            "Delete by memory_key in parts, or ask an operator to run `manage.py delete_subject`"
        )
    reason_code = reason_code or "requested"
    with budget.within(instead=instead):
        budget.step()
        if memory_id is not None:
            return _memory_deletion(budget, principal, memory_id, reason_code, expected_status)
        if subject_id is None and not subject_external_id:
            raise ValidationFailed(
                "Give a memory_id, a subject with a memory_key, or a subject.",
                code="target_required",
            )
        subject = _subject(principal, subject_id, subject_external_id, user_id_sha256)
        memory_key = (memory_key or "").strip()
        if memory_key:
            return _key_deletion(budget, principal, subject, memory_key, reason_code, queued_at)
        return _subject_deletion(budget, principal, subject, reason_code, queued_at, user_id_sha256)


def _deletable(principal, visible):
    """Narrow ``visible`` to what ``principal`` may delete: for an agent, the memory types its
    grant lets it write."""
    write_types = getattr(principal, "write_types", None)
    return visible if write_types is None else visible.filter(memory_type__in=write_types)


def _memory_deletion(
    budget: Budget, principal, memory_id, reason_code, expected_status=None
) -> DeletionOperation:
    """Delete one memory and every older version it supersedes."""
    visible = Memory.objects.visible_to(principal)
    memory = visible.filter(pk=memory_id).first()
    if memory is None:
        raise NotFound("No memory with this id.")
    write_types = getattr(principal, "write_types", None)
    if write_types is not None and memory.memory_type not in write_types:
        raise PermissionDenied("The agent's grant does not allow writing this memory type.")
    # The subject's lock before the history is read (``_operation_create`` takes it again):
    # an approval of this pending write holds it shared and links the write onto its key's
    # head. Read before the approval committed, the history missed that head, which the
    # deletion left, content and all, beside the approved write it deleted.
    budget.step()
    subject_deletion_lock(memory.subject_id)
    tombstone = Tombstone.objects.filter(memory_id=memory.id).first()
    if tombstone is not None and tombstone.operation_id is not None:
        return _memory_deleted_by(principal, tombstone.operation_id)
    if expected_status:
        _refuse_if_changed(memory.id, expected_status)
    ids = with_predecessors(memory.id)
    candidates = _deletable(principal, visible).filter(
        pk__in_array=ids, subject_id=memory.subject_id
    )
    _refuse_unless_history_in_reach(
        memory.tenant_id,
        ids,
        candidates,
        message=(
            "The agent's grant does not reach every older version this memory supersedes "
            "(its history, which a deletion by memory_id deletes too), so it cannot delete "
            "it; ask the user (portal) or a reviewer."
        ),
    )
    operation = _operation_create(
        principal=principal,
        tenant_id=memory.tenant_id,
        subject_id=memory.subject_id,
        target=DeletionOperation.Target.MEMORY,
        candidates=candidates,
        reason_code=reason_code,
        budget=budget,
        if_any=True,
    )
    if operation is None:
        # Every row was in the ledger once locked: a whole tenant's deletion, which takes no
        # subject's lock, held them and took them meanwhile (its tombstone was not there to
        # see above). The new operation then held no memory, of a tenant deleted by then, and
        # completed at once while the tenant's was pending (stop 60's audit of races).
        taken = Tombstone.objects.get(memory_id=memory.id)
        return _memory_deleted_by(principal, taken.operation_id)
    operation.already_requested = False
    return operation


def _refuse_unless_history_in_reach(tenant_id, history, candidates, *, message: str) -> None:
    """Raise PermissionDenied (``history_not_fully_granted``, saying ``message``) when
    ``history`` (the ids ``with_predecessors`` returned for what is deleted) holds a version
    not deleted yet outside ``candidates`` (what the caller may delete).

    A correction may lower a chain's sensitivity: an agent capped below an older version
    reaches the head and not that version, which stayed, content and all, while the
    operation completed. The versions are one fact's history, deleted with it or not at all:
    as for a whole subject (``_whole_subject_in_reach``), only a caller that reaches every
    version may ask, and nothing is deleted else.
    """
    out_of_reach = (
        Memory.objects.filter(tenant_id=tenant_id, pk__in_array=history)
        .exclude(status=Status.DELETED)
        .exclude(pk__in=candidates.values("pk"))
    )
    if out_of_reach.exists():
        raise PermissionDenied(message, code="history_not_fully_granted")


def _memory_deleted_by(principal, operation_id) -> DeletionOperation:
    """Answer a memory's deletion asked again: the operation ``operation_id`` that took it, if
    ``principal`` may see it (``deletion_scope``); else Conflict (``already_deleted``)."""
    if deletion_visible_ids(principal=principal, ids=[operation_id]):
        return _already_requested(DeletionOperation.objects.get(pk=operation_id))
    # Another's operation this caller may not see (it also deleted memories outside the
    # caller's grant): its id would be a 404 here, and its status, target and count would
    # tell of those memories. The memory is deleted all the same, and its events say when
    # its stores are clean (``deleted``); a new operation would hold nothing and could
    # complete before that one.
    raise Conflict(
        "This memory is already deleted, at another's request; nothing more to delete. "
        "Its events show the deletion ('deletion_requested', then 'deleted' once every "
        "store is verified clean).",
        code="already_deleted",
    )


def _refuse_if_changed(memory_id, expected_status: str) -> None:
    """Raise Conflict (``memory_changed``) unless the memory's status, read now (the caller
    holds the subject's lock), is ``expected_status`` or deleted: deleting it would do
    something else than the caller was told."""
    status = Memory.objects.filter(pk=memory_id).values_list("status", flat=True).first()
    if status not in (expected_status, Status.DELETED):
        raise Conflict(
            f"This memory changed since its deletion was asked for: it is now "
            f"{Status(status).label.lower()}, so nothing was deleted. Read what deleting it "
            "does now, and ask again.",
            code=MEMORY_CHANGED,
            details={"status": status},
        )


def _key_deletion(
    budget: Budget, principal, subject: Subject, memory_key: str, reason_code, queued_at=None
) -> DeletionOperation:
    """Delete every memory of ``subject`` on ``memory_key``.

    The key's memories are read before the request holds the subject's lock and locked once
    it does. Another deletion that committed meanwhile (the same request asked twice at once,
    a memory's deletion of the key's head) took them and cleared their key: nothing is left,
    and the request answers that deletion's operation (``_key_taken_meanwhile``). A new one
    would hold nothing and complete at once, while that one has not cleaned their stores yet.
    Made at once, it deletes the key's memories the caller may delete, and only when it may
    delete their history too (``_refuse_unless_key_history_in_reach``).
    """
    on_key = Memory.objects.visible_to(principal).filter(subject=subject, memory_key=memory_key)
    # A queued request is made under the id the queue handed out, even with nothing left (once
    # every deletion that took it meanwhile has completed: ``_queued_taken_meanwhile``).
    candidates = _deletable(principal, on_key) if queued_at else _key_candidates(principal, on_key)
    _refuse_at_once_if_too_many(budget, candidates)
    # One of them names the deletion that took them, if one does (its key is cleared then).
    first_seen = None if queued_at else candidates.order_by("pk").values_list("pk").first()
    if not queued_at:
        _refuse_unless_key_history_in_reach(budget, subject, candidates)
    operation = _operation_create(
        principal=principal,
        tenant_id=subject.tenant_id,
        subject_id=subject.id,
        target=DeletionOperation.Target.MEMORY_KEY,
        candidates=candidates,
        reason_code=reason_code,
        budget=budget,
        queued_at=queued_at,
        queued_key=memory_key,
        if_any=first_seen is not None,
    )
    if operation is None:
        return _key_taken_meanwhile(principal, first_seen[0])
    operation.already_requested = False
    return operation


def _refuse_unless_key_history_in_reach(budget: Budget, subject: Subject, candidates) -> None:
    """Raise PermissionDenied (``history_not_fully_granted``) unless the caller may delete
    every older version that the key's memories it deletes (``candidates``) supersede: the
    rule of a memory's deletion (``_refuse_unless_history_in_reach``), for each of them.

    Narrowed to its grant, an agent capped below an older version deleted the key's head and
    left that version, content and all, under an operation that completed, where the head's
    deletion by id is refused (stop 63's audit of deletion). Another agent's private memories
    on the key still stay: they are no version of what the caller deletes, as a new version
    keeps its chain's owner.

    Read under the subject's lock (``_operation_create`` takes it again), as a memory's
    deletion reads its history: an approval in flight links its write onto the key's head
    first. Not for a queued request: it was queued only for a caller reaching every memory on
    the key (``_key_in_reach``, ``key_not_fully_granted``), and deletes them all.
    """
    budget.step()
    subject_deletion_lock(subject.pk)
    _refuse_unless_history_in_reach(
        subject.tenant_id,
        with_predecessors(*candidates.values_list("pk", flat=True)),
        candidates,
        message=(
            "The agent's grant does not reach every older version the key's memories "
            "supersede (their history, which their deletion deletes too), so it cannot delete "
            "the key; ask the user (portal) or a reviewer."
        ),
    )


def _key_taken_meanwhile(principal, memory_id) -> DeletionOperation:
    """Answer a key's request that found none of the key's memories left once it held the
    subject's lock: the operation that took ``memory_id`` (one of them, read before the
    lock), as a request asked again answers it, if ``principal`` may see it
    (``deletion_scope``); else NotFound, the answer of a request made after that one (it
    cleared the memories' key), which tells nothing of another's operation."""
    operation_id = (
        Tombstone.objects.filter(memory_id=memory_id).values_list("operation_id", flat=True).first()
    )
    if operation_id is None or not deletion_visible_ids(principal=principal, ids=[operation_id]):
        raise NotFound("No memory with this key.")
    return _already_requested(DeletionOperation.objects.get(pk=operation_id))


def _subject_deletion(
    budget: Budget, principal, subject: Subject, reason_code, queued_at, user_id_sha256=""
) -> DeletionOperation:
    """Delete every memory of ``subject``, and its exports, traces and caches."""
    # Serialize whole-subject requests of one subject (a double click, two tabs): the second
    # one then sees the first one's operation and returns it. NO KEY UPDATE does not block
    # the key-share locks of writes inserting memories for the subject.
    queued = Subject.objects.select_for_update(no_key=True).get(pk=subject.pk).deletion_queued_at
    # Then the subject's deletion lock (``_operation_create`` takes it again), before the grant
    # is checked: a write of the subject in flight commits first and is checked with the rest,
    # a later one waits for this request. Checked before it, an agent's request whose grant
    # reached the subject's memories but for one a batch wrote meanwhile was made, narrowed to
    # its grant, and that memory was left (stop 51's audit of races).
    budget.step()
    subject_deletion_lock(subject.pk)
    # The grant first, whether or not a deletion of the subject is queued (_grant_scope): a
    # caller it does not reach learns nothing of a queued one.
    candidates = _whole_subject_in_reach(principal, subject)
    if queued:
        # A deletion of it waits for a worker (subject_deletion_queue), which makes this very
        # request or a key's: asked again meanwhile, retry once it has (and get its operation
        # back; deletion_request_or_queue answers the queued one).
        raise SubjectBeingDeleted()
    # Its failed memories' and keys' operations (a failed whole one: _subject_deletion_covering,
    # which reads it as it stood, then re-drives it).
    parts = DeletionOperation.objects.filter(tenant_id=subject.tenant_id, subject=subject)
    _redrive_failed(parts.exclude(target=DeletionOperation.Target.SUBJECT))
    # A queued request is made under the id the queue handed out, even with nothing left (once
    # every deletion that took it meanwhile has completed: ``_queued_taken_meanwhile``).
    if queued_at is None:
        existing = _subject_deletion_covering(
            principal=principal, subject=subject, candidates=candidates
        )
        if existing is not None:
            return _already_requested(existing)
    # A new operation is needed: a failed whole one the covering check did not reach (it
    # returns first when a memory was written since; a queued request skips it) is
    # re-driven too. Left failed, the new operation completed while its memories stayed in
    # the evaluation data (stop 54's audit of deletion); re-driven before the check, a trace
    # made since it failed was never deleted (the stop's review).
    _redrive_failed(parts.filter(target=DeletionOperation.Target.SUBJECT))
    _refuse_at_once_if_too_many(budget, candidates)
    # A memory not in the ledger yet, to name the deletion that took them all when none is
    # left once their rows are locked: a whole tenant's deletion in flight takes no subject's
    # lock, only the rows, which the check above read as not taken. The new operation then
    # held no memory, of a tenant deleted by then, and completed at once while the tenant's
    # was pending (stop 60's audit of races). With none to take (every memory in the ledger,
    # or none at all), one is made all the same: it clears the subject's exports and traces.
    first_seen = (
        None
        if queued_at
        else candidates.exclude(status=Status.DELETED).values_list("pk", flat=True).first()
    )
    try:
        operation = _operation_create(
            principal=principal,
            tenant_id=subject.tenant_id,
            subject_id=subject.id,
            target=DeletionOperation.Target.SUBJECT,
            candidates=candidates,
            reason_code=reason_code,
            budget=budget,
            queued_at=queued_at,
            if_any=first_seen is not None,
            user_id_sha256=user_id_sha256,
        )
    except _TenantDeletedMeanwhile:
        operation = None
    if operation is None:
        return _subject_taken_meanwhile(principal, subject.tenant_id, first_seen)
    operation.already_requested = False
    return operation


def _subject_taken_meanwhile(principal, tenant_id, memory_id) -> DeletionOperation:
    """Answer a whole subject's request that found none of its memories left once it held
    their rows: the operation that took ``memory_id`` (one of them, read before; None: it had
    none left, and its tenant's deletion committed meanwhile, ``_TenantDeletedMeanwhile``), as
    a request asked again answers it, if ``principal`` may see it (``deletion_scope``); else
    SubjectBeingDeleted, as ``_subject_deletion_covering`` answers an unfinished operation the
    caller may not see that holds memories in its reach (a tenant's names no subject, so a
    portal login or an agent bound to one subject never sees it)."""
    if memory_id is not None:
        taken_by = Tombstone.objects.filter(memory_id=memory_id)
        operation_id = taken_by.values_list("operation_id", flat=True).first()
    else:
        last = _last_tenant_deletion(tenant_id)
        operation_id = last.pk if last is not None else None
    if operation_id is None or not deletion_visible_ids(principal=principal, ids=[operation_id]):
        raise SubjectBeingDeleted()
    return _already_requested(DeletionOperation.objects.get(pk=operation_id))


def _grant_scope(principal, subject: Subject):
    """Return the memories of ``subject`` that ``principal``'s grant reaches, whether or not
    a deletion of the subject is queued.

    ``Memory.objects.visible_to`` hides every memory of a subject whose deletion is queued
    from agents (the fence of ``AgentPrincipal.scope_memories``), so it cannot tell what an
    agent's grant reaches of such a subject: every agent would look out of reach, and one
    out of reach would look no different. Other principals have no fence.
    """
    memories = Memory.objects.filter(tenant_id=principal.tenant_id, subject=subject)
    if isinstance(principal, AgentPrincipal):
        return principal.scope_granted(memories)
    return principal.scope_memories(memories)


def _key_candidates(principal, on_key):
    """Return the memories of ``on_key`` (a key's, as ``principal`` sees them) that it may
    delete; raise NotFound when it sees none, PermissionDenied when it may write none of
    their types."""
    candidates = _deletable(principal, on_key)
    if candidates is on_key:
        found = {True} if on_key.exists() else set()
    else:
        # Whether each row is deletable, in one statement: read as two, a write on the key
        # committed between them made "none deletable" and "some there", a 403 to an agent
        # whose grant covers them (stop 52's audit of races).
        found = set(
            on_key.annotate(deletable=Exists(candidates.filter(pk=OuterRef("pk"))))
            .values_list("deletable", flat=True)
            .distinct()
        )
    if True in found:
        return candidates
    if found:  # some there, of types not granted
        raise PermissionDenied(
            "The agent's grant does not allow writing the memory types on this key."
        )
    raise NotFound("No memory with this key.")


def _any_out_of_reach(subject: Subject, candidates, **narrower) -> bool:
    """Return whether ``subject`` has a memory not deleted (among ``narrower``: a key's)
    outside ``candidates``."""
    # NOT IN (a hashed subplan): the correlated anti-join took 1.3 s for 2,000 memories,
    # planned before the rows had statistics (scripts/deletion_request_cost.py).
    return (
        Memory.objects.filter(tenant_id=subject.tenant_id, subject=subject, **narrower)
        .exclude(status=Status.DELETED)
        .exclude(pk__in=candidates.values("pk"))
        .exists()
    )


def _whole_subject_in_reach(principal, subject: Subject):
    """Return the memories ``principal`` deletes when it deletes ``subject`` whole, or raise
    PermissionDenied unless they are every memory the subject has: a subject deletion also
    clears the subject's exports and traces, so only a caller that reaches all of it may ask
    (the user, a reviewer, or an agent whose grant covers every memory the subject has).

    The same answer whether or not a deletion of the subject is queued (``_grant_scope``).
    """
    candidates = _deletable(principal, _grant_scope(principal, subject))
    if _any_out_of_reach(subject, candidates):
        raise PermissionDenied(
            "The agent's grant does not reach every memory of this subject, so it cannot "
            "delete the subject; delete memories one by one, or ask the user (portal) or a "
            "reviewer.",
            code="subject_not_fully_granted",
        )
    return candidates


def _key_granted(principal, subject: Subject, memory_key: str):
    """Return the memories of ``subject`` on ``memory_key`` that ``principal`` may delete, or
    raise as ``_key_deletion`` would (NotFound, PermissionDenied): what a request made at
    once refuses it. The same answer whether or not a deletion of the subject is queued
    (``_grant_scope``)."""
    return _key_candidates(
        principal, _grant_scope(principal, subject).filter(memory_key=memory_key)
    )


def _key_in_reach(principal, subject: Subject, memory_key: str) -> None:
    """Raise as ``_key_deletion`` would for ``principal`` (NotFound, PermissionDenied), or
    PermissionDenied (``key_not_fully_granted``) unless it may delete every memory of
    ``subject`` on ``memory_key``: a queued key's deletion is made by a worker for whoever
    asked, of every memory on the key (``QueuedRequester``), so only a caller that reaches
    all of them may have it queued. The same answer whether or not a deletion of the subject
    is queued (``_grant_scope``).
    """
    candidates = _key_granted(principal, subject, memory_key)
    if _any_out_of_reach(subject, candidates, memory_key=memory_key):
        raise PermissionDenied(
            "The key has more memories than a request deletes at once, and the agent's grant "
            "does not reach every one of them, so its deletion cannot be queued; delete "
            "memories one by one, or ask the user (portal) or a reviewer.",
            code="key_not_fully_granted",
        )


def _refuse_at_once_if_too_many(budget: Budget, candidates) -> None:
    """Raise ``OverBudget`` before any work for a time-limited request of a whole subject or
    a key of more than ``MEMLEDGER_DELETION_QUEUE_ABOVE`` memories: it would rarely fit the
    budget (and on a slow machine never), and the caller would wait the budget out to learn
    so. Counts at most that many plus one. A request over HTTP with no time limit
    (``MEMLEDGER_DELETION_REQUEST_BUDGET=0``) is queued above it too: it was made in the
    request, however large (stop 55's audit of the docs)."""
    above = settings.MEMLEDGER_DELETION_QUEUE_ABOVE
    if not budget.limited or not above:
        return
    if candidates.exclude(status=Status.DELETED)[above : above + 1].exists():
        raise _TooMany(above)


def subject_deletion_request_or_queue(
    *, principal, subject_id=None, subject_external_id=None
) -> DeletionOperation:
    """Delete everything about a subject (the portal's "delete everything", the API's
    ``{"subject"}``): ``deletion_request_or_queue`` of the whole subject."""
    return deletion_request_or_queue(
        principal=principal, subject_id=subject_id, subject_external_id=subject_external_id
    )


def deletion_request_or_queue(
    *, principal, subject_id=None, subject_external_id=None, memory_key: str = ""
) -> DeletionOperation:
    """Delete everything about a subject, or every memory of it on ``memory_key`` (the API's
    ``{"subject"}`` and ``{"subject", "memory_key"}``): the request, or, when it does not
    fit a request's time (``OverBudget``: more than ``MEMLEDGER_DELETION_QUEUE_ABOVE``
    memories, or out of the budget), the same request queued for a worker
    (``subject_deletion_queue``).

    A queued one comes back as ``queued_deletion``: status ``queued``, under the id its
    operation will have, ``already_requested`` saying whether this call queued it (the
    portal said so by comparing the mark's moment, the database's clock, with its own host's,
    and told a person on a host ahead that the deletion they had just queued was queued
    before: stop 65's review of the database's clock). Asked again while it is queued, the
    same one comes back, to a caller whose grant reaches it, and only then: anyone else gets
    the refusal the request would give it (NotFound, PermissionDenied), never the queued
    one's id. While another deletion of the subject is queued (a key's, or the whole
    subject's), an agent's request of the subject is a ``SubjectBeingDeleted`` (503, retry
    once the worker has made it), as is any request that must be queued too: one mark per
    subject. A whole subject named by its external id whom no subject names yet may be a
    person known from the traces of their retrievals the caller may read
    (``traced_subject_deletion_request``).
    """
    memory_key = (memory_key or "").strip()
    subject = _subject_or_none(principal, subject_id, subject_external_id)
    whole_by_name = subject is None and subject_id is None and not memory_key
    if whole_by_name and traced_user(principal=principal, external_id=subject_external_id):
        return traced_subject_deletion_request(principal=principal, external_id=subject_external_id)
    subject = _acted_for(principal, subject)
    if memory_key:
        in_reach = partial(_key_in_reach, principal, subject, memory_key)
    else:
        in_reach = partial(_whole_subject_in_reach, principal, subject)
    answer = _while_queued(principal, subject, memory_key, in_reach)
    if answer is not None:
        return answer
    try:
        return deletion_request(
            principal=principal, subject_id=subject.pk, memory_key=memory_key or None
        )
    except (SubjectBeingDeleted, NotFound):
        # Another request queued a deletion of the subject since it was read above (a double
        # click on "delete everything", two API calls at once): the request met its mark
        # under the subject's lock (SubjectBeingDeleted), or, an agent's of a key, found the
        # key's memories fenced by it (NotFound: "no memory with this key", until stop 66's
        # review). Answered as if the mark had been read above (stop 65's review of the
        # database's clock); with no mark now, the request's own answer.
        fresh = Subject.objects.filter(pk=subject.pk).first()
        answer = fresh and _while_queued(principal, fresh, memory_key, in_reach)
        if answer is None:
            raise
        return answer
    except OverBudget:
        # The worker deletes the subject whole, or the key whole, for whoever asked
        # (QueuedRequester): check, with no time limit, that they reach all of it, which the
        # request may have run out of time before checking. Under the subject's deletion lock,
        # held until the mark commits: a write of the subject in flight commits first and is
        # checked, a later one waits and then meets the mark (503), so no memory out of the
        # caller's reach lands between the check and the mark.
        with transaction.atomic():
            # The subject's row first, then its deletion lock: the order a whole subject's
            # request and the worker's run take them in (else the two could deadlock). This
            # row only: ``first()`` orders by the tenant, whose row it locked too.
            locked = (
                Subject.objects.select_for_update(no_key=True, of=("self",))
                .filter(pk=subject.pk)
                .first()
            )
            subject_deletion_lock(subject.pk)
            in_reach()
            queued = subject_deletion_queue(
                principal=principal, subject_id=subject.pk, memory_key=memory_key
            )
        if queued.deletion_queued_key != memory_key:
            raise SubjectBeingDeleted() from None  # another deletion of it was queued first
        operation = queued_deletion(queued)
        # A mark already there under the row's lock (another request queued it since the
        # subject was read above) is the one ``subject_deletion_queue`` kept: asked again.
        operation.already_requested = locked.deletion_queued_at is not None
        return operation


def _while_queued(
    principal, subject: Subject, memory_key: str, in_reach
) -> DeletionOperation | None:
    """Answer ``principal``'s request of ``subject``'s deletion (``memory_key``'s, or the
    whole subject's) as ``subject``'s queued mark decides it: the queued one, asked again,
    when the mark is this very request (once ``in_reach()``, which raises the request's
    refusal to a caller it does not reach); ``SubjectBeingDeleted`` to an agent asking for
    another part (once its grant checks have passed: the mark fences the queued deletion's
    memories from agents, so the request would not find them all; retry once the worker has
    made it). None when no mark decides it: none is queued, or a person asks for another
    part (the request is made, and the whole subject's meets the mark as
    ``SubjectBeingDeleted``)."""
    if subject.deletion_queued_at is None:
        return None
    if subject.deletion_queued_key == memory_key:
        in_reach()  # what the request would answer this caller: a refusal, or ...
        return _already_requested(queued_deletion(subject))  # ... the queued one, again
    if isinstance(principal, AgentPrincipal):
        # A key's: the grant checks every request of the key makes (``_key_granted``), not
        # the queue's rule (``in_reach``: every memory on the key), whose
        # ``key_not_fully_granted`` told an agent reaching part of a key small enough for a
        # request that it holds memories the agent cannot see (another agent's private
        # ones), which the request made at once never tells (stop 66's review of 4db9b149).
        # A whole subject's, made at once or queued, needs all of it.
        if memory_key:
            _key_granted(principal, subject, memory_key)
        else:
            in_reach()
        raise SubjectBeingDeleted()
    return None


def subject_deletion_queue(*, principal, subject_id, memory_key: str = "") -> Subject:
    """Queue the deletion of everything about ``subject_id``, or of its memories on
    ``memory_key``, for a worker, asked by a portal login (``user_id``) or an agent
    (``agent_id``) whose request was found too large.

    The worker makes the same request (``queued_subject_deletion_run``), with no time limit,
    for whoever asked. From the mark on, agents neither read nor write what it deletes (the
    retrieval's lookup, ``AgentPrincipal.scope_memories``, ``locks.subjects_shared_locked``):
    for a key, that key's memories and writes only (while the worker's request runs, it holds
    the subject's deletion lock, as a request made at once does). The
    mark is the truth: the task is sent when this commits, and the deletion sweep sends it
    again for a mark older than ``MEMLEDGER_DELETION_STALE_SECONDS`` (the broker was down, a
    worker lost it). Asking again keeps the first mark, whatever it queued: the caller
    compares ``deletion_queued_key``.
    """
    with transaction.atomic():
        # NO KEY UPDATE, as deletion_request takes it: writes inserting the subject's
        # memories (key-share locks) go on.
        subject = Subject.objects.select_for_update(no_key=True).get(
            tenant_id=principal.tenant_id, pk=subject_id
        )
        if subject.deletion_queued_at is None:
            # The database's clock: the request's moment, which the events step compares with
            # the subject's refused writes and review items (``_operation_create``).
            subject.deletion_queued_at = database_now()
            subject.deletion_queued_key = memory_key
            subject.deletion_queued_journaled_at = None
            if isinstance(principal, AgentPrincipal):
                subject.deletion_queued_by_agent_id = principal.agent_id
            else:
                subject.deletion_queued_by = principal.user_id
            subject.save(update_fields=QUEUED_FIELDS)
            entry = queued_entry(
                tenant_id=subject.tenant_id,
                subject_id=subject.pk,
                queued_at=subject.deletion_queued_at,
                memory_key=memory_key,
                external_id=subject.external_id,
            )
            # Journaled as it commits, before the task is sent: a restore from a backup taken
            # before the worker made the request replays it (ledger.queued_entry).
            after_commit(partial(_journal_queued, subject.pk, subject.deletion_queued_at, entry))
            subject_deletion_enqueue_on_commit(subject.pk)
        return subject


def _journal_queued(subject_id, queued_at, entry: dict) -> None:
    """Append the committed queued mark's journal line and record it on the mark; never raise.

    A failed append is logged and leaves ``deletion_queued_journaled_at`` empty: the deletion
    sweep appends it (``queued_deletions_journal``). Until a worker makes the request (hours
    while workers are down) this line alone lets a restore's replay make it: before, nothing
    appended it again, and a replay forgot the person's request (stop 56's audit of backups).
    """
    if not ledger_appended(entry, f"subject {subject_id}", "queued deletion"):
        return
    try:
        with tenant_atomic(entry["tenant_id"]):
            _queued_recorded([(subject_id, queued_at)])
    except DatabaseError:
        logger.warning("subject %s: queued deletion journaled, not recorded", subject_id)


def _queued_recorded(marks: list[tuple]) -> None:
    """Record the lines of ``marks`` ((subject id, queued at) pairs) as journaled, in one
    UPDATE, on each subject whose mark is still the one its line names: a mark cleared since
    (the worker made the request, journaled as its operation) owes nothing, and one queued
    again since owes a line of its own."""
    named = reduce(or_, (Q(pk=pk, deletion_queued_at=queued_at) for pk, queued_at in marks))
    Subject.objects.filter(named, deletion_queued_journaled_at=None).update(
        deletion_queued_journaled_at=timezone.now()
    )


def queued_deletions_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the deletions queued for a worker (a whole subject's or a
    key's) more than ``older_than`` seconds ago whose line is not recorded (an append that
    failed, or a mark queued before migration 0042), oldest first, at most ``limit``; return
    how many were appended. Raise LedgerAppendFailed if the journal cannot be written.

    Platform work (the deletion sweep): marks of every tenant, one read, one write (one
    fsync) and one UPDATE. A mark the worker has made is cleared and owes no line (its
    operation is journaled); the same line appended twice is harmless (the reader keeps one
    per operation id, the one with the most tombstones: the worker's). A mark queued before
    the oldest backup kept (``ledger.backups_cutoff``) needs no line: every backup holds it.
    """
    before = Now() - timedelta(seconds=older_than)  # the database's clock, as the marks'
    pending = list(
        Subject.objects.filter(
            deletion_queued_at__gte=backups_cutoff(),
            deletion_queued_at__lte=before,
            deletion_queued_journaled_at=None,
        )
        .order_by("deletion_queued_at")
        .values_list("pk", "tenant_id", "deletion_queued_at", "deletion_queued_key", "external_id")[
            :limit
        ]
    )
    if not pending:
        return 0
    ledger_catch_up(
        [
            queued_entry(
                tenant_id=tenant_id,
                subject_id=pk,
                queued_at=queued_at,
                memory_key=memory_key,
                external_id=external_id,
            )
            for pk, tenant_id, queued_at, memory_key, external_id in pending
        ]
    )
    _queued_recorded([(pk, queued_at) for pk, _, queued_at, _, _ in pending])
    return len(pending)


def subject_deletion_enqueue_on_commit(subject_id) -> None:
    """Send the task of the subject's queued deletion (the whole subject's or a key's) once
    the current transaction commits."""
    transaction.on_commit(partial(subject_deletion_enqueue, subject_id))


def subject_deletion_enqueue(subject_id) -> bool:
    """Send the task of the subject's queued deletion now; False if the broker refused."""
    from memory_core.tasks import queued_subject_deletion_task

    label = f"queued deletion of subject {subject_id}"
    return _send_or_leave(queued_subject_deletion_task, subject_id, label)


def queued_subject_deletion_run(subject_id) -> DeletionOperation | None:
    """Make the subject's queued request (the whole subject's, or a key's) for whoever queued
    it, with no time limit, and clear the mark in the same transaction; None if nothing is
    queued (done already). When another deletion, not completed yet, took everything it was
    to delete meanwhile, return that one and leave the mark (``_queued_taken_meanwhile``,
    checked once the request holds the memory rows: ``_operation_create``)."""
    with transaction.atomic():
        # Held for the whole request: a second task waits, then finds nothing queued, and the
        # sweep (FOR UPDATE SKIP LOCKED) passes over it; writes of the subject's memories go on.
        # This row only (``of``): the ordering (tenant, external_id) joins the tenant row,
        # which FOR NO KEY UPDATE locked too, and held for the whole run, another subject's
        # queued run, a policy's publication and the tenant's deletion waited for this one
        # (stop 58's audit of deletion).
        subject = (
            Subject.objects.select_for_update(no_key=True, of=("self",))
            .filter(pk=subject_id, deletion_queued_at__isnull=False)
            .first()
        )
        if subject is None:
            return None
        # Then the subject's deletion lock (the request takes it again), before anything is
        # read: a deletion of the subject in flight (the person's of a memory on the key)
        # commits first. Taken only in the request, after a check of what was taken, it was
        # waited for there: the check saw nothing taken, and an empty operation was made
        # under the queued id, which completed while the deletion that took the memories was
        # pending (stop 58's audit of deletion).
        subject_deletion_lock(subject.pk)
        agent_id = subject.deletion_queued_by_agent_id
        requester = QueuedRequester(
            tenant_id=subject.tenant_id,
            subject_id=subject.pk,
            actor_type="agent" if agent_id else "user",
            actor_id=str(agent_id or subject.deletion_queued_by),
        )
        queued_at = subject.deletion_queued_at
        made = DeletionOperation.objects.filter(
            pk=queued_operation_id(subject.pk, queued_at)
        ).first()
        if made is not None:
            queued_at = None  # a replay after a restore made it already: a new one clears
        try:
            # A savepoint: when another deletion took everything meanwhile, the request lets
            # the mark come back (``_TakenMeanwhile``).
            with transaction.atomic():
                return _queued_request(subject, requester, made, queued_at)
        except _TakenMeanwhile as taken:
            # Made now, it would hold nothing and complete at once, while the deletion that
            # took its memories has not cleaned their stores: the agent's id said "completed"
            # then (stop 57's audit of deletion). That one answers, as it answers the request
            # made at once (``_key_taken_meanwhile``, ``_subject_covering``); the mark stays,
            # so the id the asker holds answers "queued", and the sweep sends the task again
            # until that one has completed.
            return _already_requested(taken.operation)


def _queued_request(subject: Subject, requester, made, queued_at) -> DeletionOperation:
    """Clear ``subject``'s mark and make its queued request for ``requester``; ``made``: the
    operation a replay after a restore made under the queued id (then ``queued_at`` is None)."""
    memory_key = subject.deletion_queued_key
    # Cleared first, in the same transaction (others see the mark until it commits): the
    # request refuses a subject whose deletion is queued.
    subject.deletion_queued_at = subject.deletion_queued_by = None
    subject.deletion_queued_by_agent = subject.deletion_queued_journaled_at = None
    subject.deletion_queued_key = ""
    subject.save(update_fields=QUEUED_FIELDS)
    on_key = Memory.objects.filter(subject=subject, memory_key=memory_key)
    if made is not None and memory_key and not on_key.exists():
        # Nothing left on the key for a new one (it would be NotFound): a replay made it.
        return _already_requested(made)
    return deletion_request(
        principal=requester,
        subject_id=subject.pk,
        memory_key=memory_key or None,
        time_limited=False,
        queued_at=queued_at,
    )


class _TenantDeletedMeanwhile(SubjectBeingDeleted):
    """A whole tenant's deletion committed while a subject's request waited for it: nothing
    is made in the deleted tenant (``_tenant_deleted``); answered as a deletion under way."""


def _tenant_deleted(tenant_id) -> bool:
    """Return whether the tenant is deleted, read under the key-share lock of its row that the
    operation's insert takes anyway: a whole tenant's deletion in flight holds the row FOR
    UPDATE, and is waited for, then read.

    A subject's request with no memory left to lock (each deleted on its own earlier, an
    export made since) waited only at its insert, and then made an operation holding no
    memory, in a tenant deleted by then, which completed at once while the tenant's was
    pending (stop 60's review)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT deleted_at IS NOT NULL FROM memory_core_tenant WHERE id = %s FOR KEY SHARE",
            [tenant_id],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


class _TakenMeanwhile(Exception):
    """A queued request found none of its memories left once it held their rows: another
    deletion, not completed yet, took them (``_queued_taken_meanwhile``)."""

    def __init__(self, operation: DeletionOperation):
        super().__init__(operation.pk)
        self.operation = operation


def _queued_taken_meanwhile(
    *, tenant_id, subject_id, memory_key: str, queued_at
) -> DeletionOperation | None:
    """Return the unfinished deletion that took what a subject's request queued at
    ``queued_at`` (the whole subject's, or ``memory_key``'s) was to delete, when none of it is
    left: the newest of the operations not completed that deleted a memory of the subject (on
    ``memory_key``, for a key's request) since the request was queued (the person's, on the
    portal, say), or the tenant's deletion whenever it took them. None when some is left, or
    every one has completed.

    The tenant's whatever its moment: it takes no subject's lock, so it may take its moment
    before the mark is made and commit after it; then the request, made empty under the
    queued id, completed while the tenant's operation was pending (stop 58's review).

    A deletion of the subject's other memories is not waited for: until stop 57's review of
    its fixes, any unfinished one (another key's, dead-lettered say) kept a key's request
    waiting, its key fenced, though the one that took the key's memories had completed.
    A deleted memory's key is cleared, so the ledger tells which key it was on by its digest.

    A dead-lettered one is not re-driven here (the sweep sends the task again every minute):
    the request waits for a reviewer's retry of it, in the dead letters.
    """
    left = Memory.objects.filter(tenant_id=tenant_id, subject_id=subject_id)
    if memory_key:
        left = left.filter(memory_key=memory_key)  # a deleted memory's key is cleared
    ledger = Tombstone.objects.filter(tenant_id=tenant_id, subject_id=subject_id)
    if left.exclude(pk__in=ledger.values("memory_id")).exists():
        return None
    taken = ledger.filter(
        Q(deleted_at__gte=queued_at) | Q(operation__target=DeletionOperation.Target.TENANT)
    )
    if memory_key:
        taken = taken.filter(memory_key_sha256=memory_key_digest(memory_key))
    return (
        DeletionOperation.objects.filter(tenant_id=tenant_id, pk__in=taken.values("operation_id"))
        .exclude(status=DeletionOperation.State.COMPLETED)
        .order_by("-requested_at")
        .first()
    )


def _already_requested(operation: DeletionOperation) -> DeletionOperation:
    operation.already_requested = True
    return operation


def _newly_requested(**kwargs) -> DeletionOperation:
    operation = _operation_create(**kwargs)
    operation.already_requested = False
    return operation


def _subject_deletion_covering(
    *, principal, subject: Subject, candidates
) -> DeletionOperation | None:
    """Return the operation that answers ``principal``'s whole-subject request asked again,
    one it may see (``deletion_scope``), or None when a new one is to be made.

    The operation ``_subject_covering`` picks among all of the subject's, if the caller may
    see it. Else (another's, which also deleted memories outside the caller's grant: its id,
    status and count would tell of them) the same rule picks among the operations it may see,
    as if the others did not exist, unless one of those others is unfinished and holds a
    memory the caller's grant reaches: then the caller is told to retry
    (``SubjectBeingDeleted``), as a new operation would hold none of those memories and
    could complete before they are clean. So too when it picks none (a new operation is to
    be made, for a memory written since, say). (A refusal changes nothing, so a dead-lettered one
    among those stays so, in the reviewers' dead letters, until one retries it.) Other
    principals see every operation of the subject: for them nothing changes.
    """
    existing = _subject_covering(subject=subject, candidates=candidates)
    seen = deletion_scope(principal).filter(subject=subject)
    if existing is not None and seen.filter(pk=existing.pk).exists():
        return existing
    # Checked when a new operation is to be made too (a memory written since, an export): it
    # would hold none of the hidden one's memories either, and could complete before it.
    hidden = (
        DeletionOperation.objects.filter(tenant_id=subject.tenant_id, subject=subject)
        .exclude(status=DeletionOperation.State.COMPLETED)
        .exclude(pk__in=seen.values("pk"))
        .values_list("memory_ids", flat=True)
    )
    reach = _grant_scope(principal, subject)
    if any(reach.filter(pk__in_array=ids).exists() for ids in hidden if ids):
        raise SubjectBeingDeleted()
    if existing is None:
        return None
    return _subject_covering(subject=subject, candidates=candidates, operations=seen)


def _subject_covering(*, subject: Subject, candidates, operations=None) -> DeletionOperation | None:
    """Return the subject's last whole-subject operation if a new one would add nothing
    (among ``operations``: by default every one of the subject).

    A new operation adds something when a memory in reach is not yet in the ledger, or when
    an export or a trace of the subject was made since the last one, or a write about it was
    rejected with a reason, or a review item of it holds a reason or a label (a whole-subject
    operation clears those too: ``EventsStore``). A failed (dead-lettered) last one is
    re-driven first: its memories are in its ledger, so a new operation would hold none of
    them and leave what its failed steps did not clean. A completed last one is returned only
    when no other deletion of the subject is unfinished; else the newest unfinished one is
    (a memory's or a key's: its memories are not done), as it is when the subject has no
    whole-subject operation yet (re-driven first if it failed). None when a new operation is
    needed.
    """
    untouched = candidates.exclude(
        pk__in=Tombstone.objects.filter(tenant_id=subject.tenant_id, subject_id=subject.id).values(
            "memory_id"
        )
    )
    if untouched.exists():
        return None
    if operations is None:
        operations = DeletionOperation.objects.filter(tenant_id=subject.tenant_id, subject=subject)
    last = (
        operations.filter(target=DeletionOperation.Target.SUBJECT).order_by("-requested_at").first()
    )
    if last is not None and last.status == DeletionOperation.State.FAILED:
        _redrive(last)
    elif last is not None and last.status != DeletionOperation.State.COMPLETED:
        return last  # pending, running or partial: it is still clearing the subject
    # A completed one removed them all: any there now was made since. (A failed one may have
    # left some, and with none, nothing removed them: then a new operation clears them.)
    made_since = (
        Export.objects.filter(tenant_id=subject.tenant_id, subject=subject).exists()
        or RetrievalTrace.objects.filter(tenant_id=subject.tenant_id, subject=subject).exists()
        or EventsStore.subject_has_content(subject)
    )
    if made_since:
        return None
    # Every memory is in the ledger, but not every one through ``last``: a memory written
    # since, or one whose own deletion was asked for before, went by its own operation
    # (a memory's or a key's, re-driven above if it had failed). With no ``last``, every
    # one went so (deleted one by one, or by key). While one of those is unfinished its
    # derived stores may still hold the memory (events, evaluation files), so "completed"
    # would be untrue: answer it instead (a new operation would hold none of its memories,
    # and could complete before it: with no ``last``, a new, empty one did, at once, while
    # a memory's deletion was pending: stop 56's audit of deletion).
    unfinished = (
        operations.exclude(status=DeletionOperation.State.COMPLETED)
        .order_by("-requested_at")
        .first()
    )
    if unfinished is not None and unfinished.status == DeletionOperation.State.FAILED:
        # An older whole one dead-lettered again after a newer one completed: answered, it
        # is re-driven too, as ``last`` is above (it was answered failed: stop 54's review).
        _redrive(unfinished)
    return unfinished or last


def _operation_create(
    *,
    principal,
    tenant_id,
    subject_id,
    target: str,
    candidates,
    reason_code: str,
    budget: Budget | None = None,
    queued_at=None,
    queued_key: str = "",
    if_any: bool = False,
    chosen_under: int | None = None,
    user_id_sha256: str = "",
) -> DeletionOperation | None:
    """Write tombstones, the operation and its steps; scrub the rows; on commit, journal the
    operation and send the task.

    Must run inside the caller's transaction (deletion_request, the retention sweep).
    ``budget`` bounds each of the statements that grow with the rows. ``queued_at``: a queued
    request's moment (a whole subject's or a key's), which names the operation and is its
    ``requested_at``; ``queued_key``: a key's (``_TakenMeanwhile`` when another deletion not
    completed took every row before they were locked). With ``if_any``, return None and
    write nothing when no row is left once locked (another operation took them meanwhile: a
    sweep delivered twice, say).
    ``chosen_under``: the policy version whose retention chose the rows (the sweep's); when
    another is active once they are locked, return None and write nothing: the next sweep
    chooses under it (one published meanwhile that keeps them longer saves them, and no
    operation names a version that did not delete its rows: stop 51's audit of policies).
    """
    step = budget.step if budget is not None else lambda: None
    if subject_id is not None:  # a tenant's deletion locks the tenant row instead
        step()
        subject_deletion_lock(subject_id)
    step()
    # Lock the rows in a fixed order, so concurrent requests for overlapping memories queue
    # up instead of deadlocking; rows already in the ledger belong to their own operation.
    # The key too, for the ledger: the scrub clears it below (``tombstones_insert``).
    rows = list(
        candidates.select_for_update(of=("self",))
        .order_by("pk")
        .values_list("pk", "content_hash", "subject_id", "memory_key")
    )
    already = set(
        Tombstone.objects.filter(memory_id__in_array=[pk for pk, _, _, _ in rows]).values_list(
            "memory_id", flat=True
        )
    )
    rows = [row for row in rows if row[0] not in already]
    if if_any and not rows:
        return None
    if queued_at is not None and not rows:
        _refuse_if_taken_meanwhile(tenant_id, subject_id, queued_key, queued_at)
    if chosen_under is None:
        policy = (
            PolicyVersion.objects.filter(tenant_id=tenant_id, is_active=True)
            .values_list("version", flat=True)
            .first()
        )
    else:
        policy = _active_version_held(tenant_id)
        if policy != chosen_under:
            return None
    if subject_id is not None and _tenant_deleted(tenant_id):
        raise _TenantDeletedMeanwhile()
    # The database's clock: the events step compares ``requested_at`` with the ``created_at``
    # of the subject's refused writes and review items, which other web hosts made
    # (``stores.EventsStore``); on this host's clock, one behind left those made just before.
    now = database_now()
    step()
    queued = {} if queued_at is None else {"id": queued_operation_id(subject_id, queued_at)}
    operation = DeletionOperation.objects.create(
        **queued,
        tenant_id=tenant_id,
        subject_id=subject_id,
        target=target,
        # No memory_key: the key names what was deleted ("health.notes"), and the ledger
        # keeps ids and hashes only (the rows and review items lose their key too).
        memory_ids=[pk for pk, _, _, _ in rows],
        requested_by_type=principal.actor_type,
        requested_by_id=principal.actor_id,
        reason_code=reason_code,
        policy_version=policy,
        requested_at=queued_at or now,
        user_id_sha256=user_id_sha256,
    )
    step()
    tombstones_insert(operation=operation, rows=rows, deleted_at=now)
    # Journaled as the request commits, not only when a worker runs it: a database lost
    # before then is restored and replayed from the journal, which must hold this operation.
    deletion_journal_on_commit(
        operation, [(pk, row_subject, digest) for pk, digest, row_subject, _ in rows]
    )
    DeletionStep.objects.bulk_create(
        [DeletionStep(operation=operation, store=store.name) for store in active_stores(target)]
    )
    # Unretrievable at once: no read path serves a deleted row, and it holds nothing to serve.
    step()
    scrub_memories(operation.memory_ids)
    step()
    events_insert(
        tenant_id=tenant_id,
        memory_ids=operation.memory_ids,
        action=MemoryEvent.Action.DELETION_REQUESTED,
        actor_type=principal.actor_type,
        actor_id=principal.actor_id,
        reason_code=reason_code,
        policy_version=policy,
        details={"operation": str(operation.id)},
        created_at=now,
    )
    deletion_run_on_commit(operation.id)
    return operation


def _active_version_held(tenant_id) -> int | None:
    """Return the tenant's active policy version (None: none is), its row held ``FOR SHARE``
    until the transaction ends: a publish, which deactivates it (``policy_publish``), waits
    for this transaction, and one that deactivated it first is waited for, after which none
    is found active. Read without the lock (until stop 70's review), a version published
    after the read and before the retention operation committed did not save the rows it
    keeps longer: the operation deleted them under the version before, committed after it.
    ``FOR SHARE`` (no ORM spelling): the operations of two sweeps do not wait for each other
    here; a publish waits for an operation's commit, a second or so at a batch's size."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version FROM memory_core_policyversion WHERE tenant_id = %s AND is_active "
            "FOR SHARE",
            [tenant_id],
        )
        row = cursor.fetchone()
    return None if row is None else row[0]


def _refuse_if_taken_meanwhile(tenant_id, subject_id, memory_key: str, queued_at) -> None:
    """Raise ``_TakenMeanwhile`` when a deletion not completed took what the queued request
    was to delete (``_queued_taken_meanwhile``).

    Looked at once the memory rows are locked, not before: a whole tenant's deletion in flight
    takes no subject's lock, only the rows, and a look before them saw nothing taken; the
    request then waited for the rows, found them in the ledger, and made an empty operation
    under the queued id, which completed while the tenant's was pending (stop 58's review).
    """
    taken = _queued_taken_meanwhile(
        tenant_id=tenant_id, subject_id=subject_id, memory_key=memory_key, queued_at=queued_at
    )
    if taken is not None:
        raise _TakenMeanwhile(taken)


# One statement for an operation's rows, its ids as arrays: a subject's tens of thousands of
# rows were model instances first (bulk_create: 70,000 tombstones and events took ~16 s of a
# 23 s request here, against ~1 s for these statements).
_TOMBSTONES_SQL = """
    INSERT INTO memory_core_tombstone (tenant_id, subject_id, memory_id, content_hash,
        memory_key_sha256, operation_id, deleted_at)
    SELECT %(tenant)s::uuid, row.subject_id, row.memory_id, row.content_hash,
        row.memory_key_sha256, %(operation)s::uuid, %(at)s::timestamptz
    FROM unnest(%(ids)s::uuid[], %(subjects)s::uuid[], %(hashes)s::text[], %(keys)s::text[])
        AS row(memory_id, subject_id, content_hash, memory_key_sha256)
"""
_EVENTS_SQL = """
    INSERT INTO memory_core_memoryevent (tenant_id, memory_id, action, actor_type, actor_id,
        reason_code, policy_version, details, created_at)
    SELECT %(tenant)s::uuid, memory_id, %(action)s::text, %(actor_type)s::text,
        %(actor_id)s::text, %(reason_code)s::text, %(policy_version)s::integer,
        %(details)s::jsonb, %(at)s::timestamptz
    FROM unnest(%(ids)s::uuid[]) AS memory_id
"""


def tombstones_insert(*, operation: DeletionOperation, rows, deleted_at) -> None:
    """Write the ledger's rows of ``operation``: one per (memory_id, content_hash,
    subject_id, memory_key) of ``rows``, in one statement. The key is kept as its SHA-256
    (``memory_key_digest``; "" for none): the ledger keeps ids and hashes only."""
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _TOMBSTONES_SQL,
            {
                "tenant": operation.tenant_id,
                "operation": operation.id,
                "at": deleted_at,
                "ids": uuid_array(pk for pk, _, _, _ in rows),
                "subjects": uuid_array(subject for _, _, subject, _ in rows),
                "hashes": [digest for _, digest, _, _ in rows],
                "keys": [memory_key_digest(key) if key else "" for _, _, _, key in rows],
            },
        )


def events_insert(
    *,
    tenant_id,
    memory_ids,
    action: str,
    actor_type: str,
    actor_id: str,
    reason_code: str,
    policy_version,
    details: dict,
    created_at,
) -> None:
    """Write one event per memory of ``memory_ids``, all alike, in one statement."""
    if not memory_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _EVENTS_SQL,
            {
                "tenant": tenant_id,
                "action": action,
                "actor_type": actor_type,
                "actor_id": actor_id,
                "reason_code": reason_code,
                "policy_version": policy_version,
                "details": json.dumps(details),
                "at": created_at,
                "ids": uuid_array(memory_ids),
            },
        )


def tenant_deletion_request(
    *,
    tenant_id,
    requested_by: str = "admin",
    reason_code: str = "tenant_deleted",
    time_limited: bool = False,
    seconds: float | None = None,
) -> DeletionOperation:
    """Delete a whole tenant: every memory it holds and everything derived from them.

    One transaction, acting for the tenant: lock the rows of its subjects whose deletion is
    queued for a worker (``queued_subjects_lock``), its memory rows, then the tenant row
    (``FOR UPDATE``: a transaction that already inserted a row of the tenant commits first,
    and one that inserts later waits and is then refused by the trigger of migration 0011;
    the memory rows first, as every other path takes them before it inserts, so a revoke or
    a deletion in flight finishes first instead of deadlocking with the request; see
    ``tenant_and_memories_lock`` for a memory made in between), revoke its
    API keys, tombstone and scrub every memory not yet in the ledger under one operation of
    target ``tenant``, and set ``Tenant.deleted_at``. Its steps also remove every trace and
    export of the tenant, and the identities step its subjects' names and its portal logins.
    The tenant row, its agents, subjects (nameless), tombstones and operations stay: the
    ledger's ids and the operation's evidence.

    Asking again returns the tenant's last operation; a failed (dead-lettered) one is
    re-driven, as ``deletion_retry`` would: every memory of the tenant is in its ledger, so a
    new operation would hold none of them and leave what the failed steps did not clean (and
    no reviewer of a deleted tenant can log in to retry it). ``NotFound`` for an unknown tenant;
    ``Busy`` (``tenant_busy``, retry later) when other work kept taking its memories.

    ``time_limited`` (the admin's action, a web request): as for ``deletion_request``, the
    request gives up after ``MEMLEDGER_DELETION_REQUEST_BUDGET`` seconds with ``OverBudget``;
    ``manage.py delete_tenant`` is not limited. ``seconds``: as for ``deletion_request``.
    """
    budget = Budget(_request_seconds(time_limited, seconds), limited=time_limited)
    instead = "Ask an operator to run `manage.py delete_tenant` with the tenant's slug and --yes"
    with budget.within(instead=instead):
        return _tenant_deletion_request(tenant_id, budget, requested_by, reason_code)


def _tenant_deletion_request(tenant_id, budget: Budget, requested_by, reason_code):
    with tenant_atomic(tenant_id):
        queued = queued_subjects_lock(tenant_id, budget=budget)
        tenant, last = tenant_and_memories_lock(tenant_id, budget=budget)
        if tenant is None:
            raise NotFound("No tenant with this id.")
        operations = DeletionOperation.objects.filter(tenant_id=tenant.pk)
        if last is not None:
            # Asked again: every failed one of the tenant is re-driven, its own and a memory's
            # or a key's (their memories are in the ledger, which the tenant's does not look
            # for again), and while one is unfinished it is answered, not a completed tenant
            # operation: only the tenant's own was re-driven, and the others stayed failed,
            # no reviewer of the tenant left to retry them (stop 53's audit of deletion).
            _redrive_failed(operations)
            last.refresh_from_db()
            if last.status == DeletionOperation.State.COMPLETED:
                unfinished = operations.exclude(status=DeletionOperation.State.COMPLETED)
                last = unfinished.order_by("-requested_at", "-pk").first() or last
            return _already_requested(last)
        _redrive_failed(operations)
        now = timezone.now()
        # At once, not at the identities step: no request of the tenant is accepted again.
        ApiKey.objects.filter(agent__tenant_id=tenant.pk, revoked_at=None).update(revoked_at=now)
        queued_marks_clear(queued)
        operation = _newly_requested(
            principal=SystemPrincipal(tenant_id=tenant.pk, name=requested_by),
            tenant_id=tenant.pk,
            subject_id=None,
            target=DeletionOperation.Target.TENANT,
            candidates=Memory.objects.filter(tenant_id=tenant.pk),
            reason_code=reason_code,
            budget=budget,
        )
        if tenant.deleted_at is None:
            # From the commit on, its keys and logins act for nobody and the trigger of
            # migration 0011 refuses its new rows.
            tenant.deleted_at = now
            tenant.save(update_fields=["deleted_at"])
        return operation


def queued_subjects_lock(tenant_id, *, budget: Budget | None = None) -> list:
    """Lock the rows of the tenant's subjects whose deletion is queued for a worker, in id
    order; return their ids, for ``queued_marks_clear``.

    Before the memory rows, the order every deletion takes them in (``memory_core.locks``):
    a queued deletion's run holds its subject's row and then locks the subject's memory
    rows, so the request, holding those and then clearing the mark (an UPDATE of the row),
    deadlocked with it, and failed with PostgreSQL's error (stop 58's audit of deletion). A
    run under way now finishes first. A replay of the tenant's deletion takes them alike.
    """
    if budget is not None:
        budget.step()
    return list(
        Subject.objects.filter(tenant_id=tenant_id, deletion_queued_at__isnull=False)
        .select_for_update(no_key=True, of=("self",))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def queued_marks_clear(subject_ids) -> None:
    """Clear the queued marks of the subjects ``queued_subjects_lock`` locked, in a whole
    tenant's deletion: it deletes what their queued requests would have, so none is made
    after it. Only the rows locked first: one marked since may be held by its worker's run,
    which waits for the memory rows the deletion holds."""
    Subject.objects.filter(pk__in=subject_ids, deletion_queued_at__isnull=False).update(
        **QUEUED_CLEARED
    )


# Rounds of tenant_and_memories_lock before the request gives up (Busy, tenant_busy).
TENANT_LOCK_ROUNDS = 10


def _lock_tenant_memories(tenant_id, *, nowait: bool = False) -> None:
    list(
        Memory.objects.filter(tenant_id=tenant_id)
        .select_for_update(of=("self",), nowait=nowait)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def tenant_and_memories_lock(
    tenant_id, *, every_row: bool = False, budget: Budget | None = None
) -> tuple[Tenant | None, DeletionOperation | None]:
    """Lock the tenant's memory rows, then the tenant row; return it and its last operation.

    The memory rows before the tenant row: a memory path locks its row, then inserts (the
    trigger of migration 0011 takes the tenant row's key-share lock) or commits (the foreign
    keys of its events take it then), so the other way round the two would deadlock. A
    memory committed between the two steps is not among the rows locked, and a path may
    hold it already (a revoke of a memory just written): the request, holding the tenant
    row, then waited for that row while the revoke's commit waited for the tenant row. So
    the rows are locked again with the tenant row, without waiting: when one is taken, the
    savepoint lets the tenant row go, and the rows (waited for) and the row are taken again.
    Asked again (an operation exists), every row is in the ledger: none to lock. A replay
    after a restore (``every_row``) locks them all the same: the restored database may hold
    rows of the tenant its ledger does not.

    Each round the tenant row is let go, writes go on, and a steady stream of rows taken
    right after their commit (writes on one key: each locks the head the last one made)
    sends the request round again: after ``TENANT_LOCK_ROUNDS`` rounds it gives up
    (``Busy``, a 503 to retry), having changed nothing.
    """
    for _round in range(TENANT_LOCK_ROUNDS):
        if budget is not None:
            budget.step()  # each round's locks within what is left of it
        if every_row or _last_tenant_deletion(tenant_id) is None:
            # A path holding one of a subject's rows and waiting for another of a smaller id
            # (an approval: the pending row, then the key's head; a task's close: its pending
            # rows, then its active ones) meets this id-ordered wait in a cycle, and
            # PostgreSQL may end it by failing this statement: its savepoint lets the rows
            # taken so far go, and the round starts again (``Busy`` after the last).
            try:
                with transaction.atomic():
                    _lock_tenant_memories(tenant_id)
            except OperationalError as exc:
                if not isinstance(exc.__cause__, DeadlockDetected):
                    raise
                continue
        try:
            with transaction.atomic():
                tenant = Tenant.objects.select_for_update().filter(pk=tenant_id).first()
                # Again: a request ahead of us may have made one.
                last = _last_tenant_deletion(tenant_id)
                if tenant is not None and (every_row or last is None):
                    _lock_tenant_memories(tenant_id, nowait=True)
                return tenant, last
        except OperationalError as exc:
            if not isinstance(exc.__cause__, LockNotAvailable):
                raise
    raise Busy(
        f"The tenant's memories were taken by other work {TENANT_LOCK_ROUNDS} times while "
        "its deletion waited for them; nothing was deleted. Retry (if it keeps failing, stop "
        "the tenant's traffic first).",
        code="tenant_busy",
    )


def _last_tenant_deletion(tenant_id) -> DeletionOperation | None:
    """Return the tenant's last whole-tenant operation, or None."""
    return (
        DeletionOperation.objects.filter(
            tenant_id=tenant_id, target=DeletionOperation.Target.TENANT
        )
        .order_by("-requested_at")
        .first()
    )


def _redrive_failed(operations) -> None:
    """Re-drive the failed (dead-lettered) ones of ``operations`` (a subject's or a tenant's).

    Their memories are in the ledger, so a whole subject's or tenant's new operation holds
    none of them: its steps would not look for what the failed steps left (an evaluation case
    citing one, say), and it would complete while that remains.
    """
    failed = operations.filter(status=DeletionOperation.State.FAILED).order_by("pk")
    for operation in failed.select_for_update():
        _redrive(operation)


def _redrive(operation: DeletionOperation) -> None:
    """Put a failed operation back to pending with fresh attempts; send its task on commit."""
    operation.status = DeletionOperation.State.PENDING
    operation.attempts = 0
    operation.dead_lettered_at = None
    operation.save(update_fields=["status", "attempts", "dead_lettered_at"])
    deletion_run_on_commit(operation.id)


@transaction.atomic
def deletion_retry(*, principal, operation_id) -> DeletionOperation:
    """Re-drive a dead-lettered (failed) operation: a reviewer's or the system's decision.

    Any other is returned as it is (a second click, another reviewer first): the returned
    operation's ``retried`` says whether this call re-drove it.
    """
    require_reviewer(principal, message="No deletion operation with this id.", or_system=True)
    operation = (
        DeletionOperation.objects.select_for_update()
        .filter(tenant_id=principal.tenant_id, pk=operation_id)
        .first()
    )
    if operation is None:
        raise NotFound("No deletion operation with this id.")
    operation.retried = operation.status == DeletionOperation.State.FAILED
    if operation.retried:
        _redrive(operation)
    return operation
