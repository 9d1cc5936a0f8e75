"""The beat sweep: re-drive operations left pending, running or partial, and deletions
(a whole subject's or a key's) queued for a worker whose task was lost (a transactional outbox).

An on-commit send is lost when the broker is down, and a killed worker may take its message
with it; the operation row is the truth. The sweep locks candidate rows with SKIP LOCKED and
stamps ``last_attempt_at`` before sending, so two beat schedulers never pick the same
operation in one round; the run itself is guarded by the operation's advisory lock.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce, Now

from memory_core.deletion.services import deletion_enqueue, subject_deletion_enqueue
from memory_core.models import DeletionOperation, Subject

logger = logging.getLogger(__name__)

RETRYABLE = (
    DeletionOperation.State.PENDING,
    DeletionOperation.State.RUNNING,
    DeletionOperation.State.PARTIAL,
)
# A partial operation waits ``stale_seconds`` × 2^(attempts - 1) before it is re-driven, at
# most 2^BACKOFF_DOUBLINGS thresholds.
BACKOFF_DOUBLINGS = 5


def _due(now, stale_seconds: float) -> Q:
    """Return the operations idle long enough to re-drive: ``stale_seconds``, and a partial one
    its backoff too, in the statement, before its limit. Applied after it, a round's 500 filled
    with partial ones waiting out theirs (after a broker's outage) re-drove nothing, and a
    pending one whose send was lost waited for them (stop 53's audit of deletion)."""
    partial_ = DeletionOperation.State.PARTIAL

    def idle(thresholds: int) -> Q:
        return Q(idle_since__lte=now - timedelta(seconds=stale_seconds * thresholds))

    due = ~Q(status=partial_) & idle(1)
    for attempts in range(BACKOFF_DOUBLINGS + 1):
        due |= Q(status=partial_, attempts=attempts) & idle(2 ** max(attempts - 1, 0))
    return due | (Q(status=partial_, attempts__gt=BACKOFF_DOUBLINGS) & idle(2**BACKOFF_DOUBLINGS))


@transaction.atomic
def deletion_sweep(*, stale_seconds: float, limit: int = 500) -> list[str]:
    """Re-send the task of every operation idle past ``stale_seconds``, and of every deletion
    (a whole subject's or a key's) queued before it; return their ids (``subject:<id>`` for
    the queued ones). The threshold's default, ``MEMLEDGER_DELETION_STALE_SECONDS``, is the
    task's (``memory_core.tasks.deletion_sweep``), which applies the same one to the key
    revocations it journals."""
    # The database's clock, as the moments it is compared with (a run's start, a request's, a
    # queued mark's): on a host an hour fast, every operation run or asked for within the
    # hour read as stuck and was sent again (stop 65's audit of deletion).
    now = Now()
    candidates = (
        DeletionOperation.objects.select_for_update(skip_locked=True)
        .filter(status__in=RETRYABLE, dead_lettered_at__isnull=True)
        .annotate(idle_since=Coalesce("last_attempt_at", "requested_at"))
        .filter(_due(now, stale_seconds))
        .order_by("requested_at")
        .values_list("pk", flat=True)[:limit]
    )
    redriven = list(candidates)
    if redriven:
        DeletionOperation.objects.filter(pk__in=redriven).update(last_attempt_at=now)
    subjects = _queued_subjects(now - timedelta(seconds=stale_seconds), limit)
    sends = [partial(deletion_enqueue, pk) for pk in redriven]
    sends += [partial(subject_deletion_enqueue, pk) for pk in subjects]
    if sends:
        transaction.on_commit(partial(_send_until_refused, sends))
    return [str(pk) for pk in redriven] + [f"subject:{pk}" for pk in subjects]


def _send_until_refused(sends) -> None:
    """Send each task in turn; stop at the first the broker refuses or times out: a broker
    that hangs costs each send its timeout, and 500 of them would hold the worker past its
    time limit. The rows are the truth: the next sweep sends the rest."""
    for index, send in enumerate(sends):
        if not send():
            if len(sends) > index + 1:
                logger.warning(
                    "deletion sweep: broker unavailable, %d sends left to the next sweep",
                    len(sends) - index - 1,
                )
            return


def _queued_subjects(before, limit: int) -> list:
    """Return (locked) the subjects whose deletion (a whole subject's or a key's) was queued
    before ``before`` and is not made yet: its send was lost, the sweep sends it again (the
    task clears the mark as it makes the request)."""
    return list(
        Subject.objects.select_for_update(skip_locked=True)
        .filter(deletion_queued_at__lte=before)
        .order_by("deletion_queued_at")
        .values_list("pk", flat=True)[:limit]
    )
