"""The health page's day boundaries, window edges, time zones and another tenant's rows
(probed by stop 50's audit, and held)."""

from datetime import datetime, timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from memory_core.models import (
    AccessDenial,
    AdmissionDecision,
    DeletionOperation,
    MemoryEvent,
    ReviewItem,
)
from memory_core.principals import ReviewerPrincipal
from memory_core.selectors.health import health_overview
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def _charts(tenant, reviewer, **kwargs):
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), **kwargs
    )
    return {chart.key: chart for chart in overview.charts}


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_every_count_falls_on_its_local_day_at_the_edges(
    zone, tenant, other_tenant, reviewer, alice_subject, stranger_subject
):
    with override_settings(TIME_ZONE=zone):
        tz = timezone.get_current_timezone()
        now = datetime(2026, 12, 5, 10, 0, tzinfo=tz)
        first = datetime(2026, 11, 29, 0, 0, tzinfo=tz)  # first day of a 7-day window
        edges = [
            (first - timedelta(microseconds=1), None),  # before the window
            (first, 0),
            (first + timedelta(days=1) - timedelta(microseconds=1), 0),
            (first + timedelta(days=1), 1),
            (datetime(2026, 12, 5, 0, 0, tzinfo=tz) - timedelta(microseconds=1), 5),
            (datetime(2026, 12, 5, 0, 0, tzinfo=tz), 6),
        ]
        expected = [0] * 7
        for when, day in edges:
            if day is not None:
                expected[day] += 1
            for owner, subj in ((tenant, alice_subject), (other_tenant, stranger_subject)):
                AdmissionDecision.objects.create(
                    tenant=owner,
                    outcome="rejected",
                    rule_codes=["tenant.subject_mismatch"],
                    created_at=when,
                )
                AccessDenial.objects.create(tenant=owner, code="forbidden", created_at=when)
                MemoryEvent.objects.create(
                    tenant=owner,
                    memory_id=MemoryFactory(subject=subj).pk,
                    action="corrected",
                    actor_type="user",
                    actor_id="1",
                    created_at=when,
                )
                ReviewItem.objects.create(
                    tenant=owner,
                    subject=subj,
                    kind="sensitive_write",
                    state="approved",
                    resolved_at=when,
                    memory_key=f"k{when.timestamp()}",
                )
                DeletionOperation.objects.create(
                    tenant=owner,
                    target="memory",
                    status="completed",
                    requested_at=when - timedelta(seconds=5),
                    completed_at=when,
                )
        charts = _charts(tenant, reviewer, days=7, now=now)
        assert charts["writes"].series[2].values == expected
        cross = {s.key: s.values for s in charts["cross_scope"].series}
        assert cross == {"requests": expected, "admission": expected}
        assert charts["corrections"].series[0].values == expected
        assert charts["approvals"].series[0].values == expected
        medians = charts["deletion_latency"].series[0].values
        assert [m is not None for m in medians] == [bool(n) for n in expected]
        assert charts["deletion_latency"].summary == "median 5.0 s over 5 deletions"
