"""The beat sweep: re-drive operations left pending, running or partial, and deletions
(a whole subject's or a key's) queued for a worker whose task was lost (a transactional outbox).

An on-commit send is lost when the broker is down, and a killed worker may take its message
with it; the operation row is the truth. The sweep locks candidate rows with SKIP LOCKED and
stamps ``last_attempt_at`` before sending, so two beat schedulers never pick the same
operation in one round; the run itself is guarded by the operation's advisory lock.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from memory_core.deletion.services import (
    deletion_run_on_commit,
    subject_deletion_enqueue_on_commit,
)
from memory_core.models import DeletionOperation, Subject

RETRYABLE = (
    DeletionOperation.State.PENDING,
    DeletionOperation.State.RUNNING,
    DeletionOperation.State.PARTIAL,
)


@transaction.atomic
def deletion_sweep(*, stale_seconds: float | None = None, limit: int = 500) -> list[str]:
    """Re-send the task of every operation idle past the threshold, and of every deletion (a
    whole subject's or a key's) queued before it; return their ids (``subject:<id>`` for the
    queued ones)."""
    stale = settings.MEMLEDGER_DELETION_STALE_SECONDS if stale_seconds is None else stale_seconds
    now = timezone.now()
    candidates = (
        DeletionOperation.objects.select_for_update(skip_locked=True)
        .filter(status__in=RETRYABLE, dead_lettered_at__isnull=True)
        .annotate(idle_since=Coalesce("last_attempt_at", "requested_at"))
        .filter(Q(idle_since__lte=now - timedelta(seconds=stale)))
        .order_by("requested_at")[:limit]
    )
    redriven = []
    for operation in candidates:
        # A partial operation waits out its backoff (capped at 32 thresholds).
        if operation.status == DeletionOperation.State.PARTIAL and stale:
            backoff = stale * min(2 ** max(operation.attempts - 1, 0), 32)
            if operation.idle_since > now - timedelta(seconds=backoff):
                continue
        redriven.append(operation.pk)
    if redriven:
        DeletionOperation.objects.filter(pk__in=redriven).update(last_attempt_at=now)
        for operation_id in redriven:
            deletion_run_on_commit(operation_id)
    return [str(pk) for pk in redriven] + _queued_subjects(now - timedelta(seconds=stale), limit)


def _queued_subjects(before, limit: int) -> list[str]:
    """Send again the task of every deletion (a whole subject's or a key's) queued before
    ``before`` and not made yet (its send was lost; the task clears the mark as it makes the
    request); return ``subject:<id>`` for each."""
    subjects = list(
        Subject.objects.select_for_update(skip_locked=True)
        .filter(deletion_queued_at__lte=before)
        .order_by("deletion_queued_at")
        .values_list("pk", flat=True)[:limit]
    )
    for subject_id in subjects:
        subject_deletion_enqueue_on_commit(subject_id)
    return [f"subject:{pk}" for pk in subjects]
