"""The beat sweep's backoff is in its statement, before its limit (stop 53's audit of deletion;
the test failed on the code before, which took the limit first)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.deletion.services import deletion_request
from memory_core.deletion.sweep import deletion_sweep
from memory_core.models import DeletionOperation

pytestmark = pytest.mark.django_db


def test_partial_operations_waiting_out_their_backoff_never_starve_a_stuck_pending_one(
    private_queue, tenant, owner, owner_principal, memories
):
    """docs/operations.md, "Celery": "`deletion-sweep` every 30 s re-drives operations idle in
    `pending`/`running`/`partial` for `MEMLEDGER_DELETION_STALE_SECONDS` (60 s; partial ones
    wait out their backoff)", and "the deletion row stays `pending` and the sweep sends it
    later" when the broker refused its send.

    ``deletion_sweep`` cut its candidates to ``limit`` (500) oldest first in SQL, and only
    then skipped, in Python, the partial ones still waiting out their backoff. After an outage
    of the cache and the broker (one Redis: the docs' own production setup), 500 older
    partial operations in backoff (up to 32 thresholds, 32 minutes) filled every round, and a
    pending operation whose send was lost was re-driven by no round until they left their
    backoff: the user's deletion sat unsent although the sweep ran every 30 s.
    """
    now = timezone.now()
    # 500 operations of an outage, each partial after 6 runs: backoff 32 x 60 s, last run
    # 5 minutes ago (stale, but still backing off).
    DeletionOperation.objects.bulk_create(
        DeletionOperation(
            tenant=tenant,
            subject=owner,
            target=DeletionOperation.Target.MEMORY,
            status=DeletionOperation.State.PARTIAL,
            attempts=6,
            requested_at=now - timedelta(hours=1),
            started_at=now - timedelta(hours=1),
            last_attempt_at=now - timedelta(minutes=5),
        )
        for _ in range(500)
    )
    # A deletion asked for 10 minutes ago whose send the broker refused: pending, never run.
    stuck = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    DeletionOperation.objects.filter(pk=stuck.pk).update(requested_at=now - timedelta(minutes=10))

    redriven = deletion_sweep(stale_seconds=60)

    assert redriven == [str(stuck.pk)], (
        f"the stuck pending operation was not re-driven ({len(redriven)} re-driven): the 500 "
        "partial operations in backoff took the whole limit"
    )
