"""The review of stop 67's fixes (eb70b4c7, 99a37fff, 611b3158): what one of them had broken,
its test failing on the code before the fix."""

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from memory_core.deletion.retention import due_by_rule
from tests.factories import SubjectFactory, insert_memories
from tests.memory_core.test_scale_plans import analyze, indexes_used, plan_of, rows_read

# Committed rows: the statistics are the owner's to gather, over its own connection.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("memory_class", ["working", "preference"])
def test_a_retention_rules_oldest_first_batch_reads_the_rows_due_not_the_tenants(
    tenant, memory_class
):
    """99a37fff ordered a rule's batch by ``created_at, pk``: ``memory_retention`` gives
    ``created_at`` alone, ``memory_tenant_newest`` both, and the planner walked the latter
    backwards through every old row of the tenant, tombstones and other classes too
    (40,005 rows and 1,625 buffers for 5 due, 21 ms a rule and tenant at every sweep, where
    the batch unordered read 5)."""
    subject = SubjectFactory(tenant=tenant)
    kind = {"memory_class": memory_class}
    if memory_class == "working":
        kind["memory_type"] = "task_state"
    tombstone = {"status": "deleted", "content": "", "memory_key": "gone.{n}"}
    insert_memories(subject, 40_000, age_seconds=10**7, **kind, **tombstone)
    insert_memories(subject, 60_000, memory_key="kept.{n}", **kind)  # not due yet
    insert_memories(subject, 5, age_seconds=10**7, memory_key="due.{n}", **kind)
    analyze("memory_core_memory")
    cutoff = timezone.now() - timedelta(seconds=10**6)
    condition = Q(memory_class=memory_class, created_at__lt=cutoff)
    batch = due_by_rule(tenant.id, condition).values_list("pk", "subject_id")[:5000]
    plan = plan_of(batch)
    assert plan["Actual Rows"] == 5
    assert rows_read(plan) < 200, indexes_used(plan)
