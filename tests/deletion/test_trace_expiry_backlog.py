"""The retention sweep keeps up with a tenant that retrieves faster than one batch a sweep.

``traces_expire`` deleted at most 10,000 traces of a tenant a run, and the sweep runs every
5 minutes (``retention-sweep``): 33 retrievals a second. One host answers 50-110 a second
(docs/performance.md), so a busy tenant's traces older than ``trace_days`` were never all
deleted, and more of them were left at every sweep (stop 68's audit of traces).
"""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from memory_core.deletion.retention import retention_apply
from memory_core.models import RetrievalTrace

pytestmark = pytest.mark.django_db

ONE_SWEEPS_BATCH = 10_000


def _traces(tenant, count, age):
    made = timezone.now() - age
    RetrievalTrace.objects.bulk_create(
        [
            RetrievalTrace(tenant=tenant, mode="hybrid", stages={"counts": {}}, created_at=made)
            for _ in range(count)
        ],
        batch_size=2_000,
    )


def test_one_sweep_deletes_every_trace_past_trace_days_beyond_one_batch(tenant, other_tenant):
    _traces(tenant, ONE_SWEEPS_BATCH + 7, timedelta(days=31))
    _traces(other_tenant, 5, timedelta(days=31))
    _traces(tenant, 2, timedelta(days=29))

    assert retention_apply()["traces_deleted"] == ONE_SWEEPS_BATCH + 12
    assert RetrievalTrace.objects.filter(tenant=tenant).count() == 2  # the recent ones
    assert not RetrievalTrace.objects.filter(tenant=other_tenant).exists()


def test_a_tenants_backlog_takes_at_most_the_sweeps_share_of_time(
    monkeypatch, tenant, other_tenant
):
    """Past ``TRACES_SECONDS`` no further batch is taken: the tenants' retention turns after
    it keep the run's time, and the next sweep goes on with the backlog. The first batch alone
    is taken whatever the time, a random tenant's (until stop 69's review one of each tenant's:
    with thousands of busy tenants, past the task's soft limit)."""
    from memory_core.deletion import retention

    monkeypatch.setattr(retention, "TRACES_BATCH", 3)
    monkeypatch.setattr(retention, "TRACES_SECONDS", 0)
    _traces(tenant, 7, timedelta(days=31))
    _traces(other_tenant, 2, timedelta(days=31))

    result = retention_apply()

    kept = [RetrievalTrace.objects.filter(tenant=each).count() for each in (tenant, other_tenant)]
    assert (result["traces_deleted"], kept) in [(3, [4, 2]), (2, [7, 0])]  # one tenant's batch
    assert "traces" in result["steps_left"]


def test_no_batch_past_the_first_round_starts_after_the_sweeps_share_of_time(
    monkeypatch, tenant, other_tenant
):
    """The time was read after each round only, so a round begun just before ``seconds``
    ran whole: with every batch taking a second, two busy tenants and a 2.5 s share, the
    second round's batches started at 2 and 3 s (stop 68's review). Each batch past the
    first round starts within the share now."""
    from memory_core.deletion import retention

    clock = {"now": 0.0}
    started = []
    batch = retention._traces_expire_batch

    def one_second_batch(*args):
        started.append(clock["now"])
        clock["now"] += 1.0
        return batch(*args)

    # The module's own clock only: Django's and the driver's keep the real one.
    monkeypatch.setattr(retention, "time", SimpleNamespace(monotonic=lambda: clock["now"]))
    monkeypatch.setattr(retention, "_traces_expire_batch", one_second_batch)
    for each in (tenant, other_tenant):
        _traces(each, 7, timedelta(days=31))

    deleted = retention.traces_expire(limit=3, seconds=2.5)

    assert started == [0.0, 1.0, 2.0]  # the first round's two, then one in time
    assert deleted == 3 * 3
