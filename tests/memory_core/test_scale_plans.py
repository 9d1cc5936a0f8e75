"""The plans of the queries whose cost grew with the tenant or the table rather than with what
they read (migration 0024): each is planned as PostgreSQL plans it for real, over statistics
of a table where the rows read are few and the rows around them many, and must use its index
and read a few pages, not the tenant's or the table's rows."""

import json
import uuid

import pytest

from memory_core.selectors.memories import memory_list
from tests.factories import SubjectFactory, insert_memories
from tests.rls_support import owner_execute

# Committed rows: the statistics are the owner's to gather, over its own connection.
pytestmark = pytest.mark.django_db(transaction=True)


def analyze(*tables: str) -> None:
    owner_execute(*(f"ANALYZE {table}" for table in tables))


def plan_of(queryset) -> dict:
    """The executed plan of ``queryset``: the top node of EXPLAIN (ANALYZE, BUFFERS)."""
    return json.loads(queryset.explain(format="json", analyze=True, buffers=True))[0]["Plan"]


def nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", ()):
        yield from nodes(child)


def indexes_used(plan: dict) -> set:
    return {node["Index Name"] for node in nodes(plan) if "Index Name" in node}


def rows_read(plan: dict) -> int:
    """How many rows the plan's scans returned and dropped, over all their loops."""
    return sum(
        (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"]
        + node.get("Rows Removed by Join Filter", 0)
        for node in nodes(plan)
        if "Scan" in node["Node Type"]
    )


def pages(plan: dict) -> int:
    return plan["Shared Hit Blocks"] + plan.get("Shared Read Blocks", 0)


@pytest.mark.parametrize("agent", ["any_subject", "bound"])
@pytest.mark.parametrize("which", ["small", "big"])
def test_one_subjects_memory_list_page_reads_the_page_not_the_tenant(tenant, which, agent):
    """A page of ``GET /api/v1/memories?subject=`` as agents ask for it, newest first. A
    5-memory subject's walked ``memory_tenant_newest`` through every row of its tenant,
    dropping the other subjects' (20,105 rows read in a 20,105-row tenant); a big subject's
    sorted all its rows for 50: the subject was a join, and the queued-deletion fence a NOT
    EXISTS the planner took for one row."""
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    small, big = SubjectFactory(tenant=tenant), SubjectFactory(tenant=tenant)
    insert_memories(small, 5, age_seconds=10**6)  # older than every row of the big one
    insert_memories(big, 20_000)
    analyze("memory_core_memory", "memory_core_subject")
    subject = {"small": small, "big": big}[which]
    row = AgentFactory(tenant=tenant, any_subject=agent == "any_subject")
    bound = subject.external_id if agent == "bound" else None
    principal = AgentPrincipal.from_agent(row, bound_user_id=bound)
    page = memory_list(principal=principal, subject=subject.external_id)
    plan = plan_of(page[:50])
    assert plan["Actual Rows"] == {"small": 5, "big": 50}[which]
    assert rows_read(plan) < 200, indexes_used(plan)
    assert pages(plan) < 100


def test_the_sweeps_expiry_reads_the_rows_due_not_every_live_row_with_an_expiry(tenant):
    """The index held active rows only and the sweep asks for pending ones too: the plan read
    every live row with an expiry, due or not."""
    from datetime import timedelta

    from django.utils import timezone

    from memory_core.deletion.retention import due_to_expire

    subject = SubjectFactory(tenant=tenant)
    later, earlier = timezone.now() + timedelta(days=30), timezone.now() - timedelta(days=1)
    insert_memories(subject, 20_000, valid_until=later)
    insert_memories(subject, 5, age_seconds=10**6, memory_key="due.{n}", valid_until=earlier)
    analyze("memory_core_memory")
    plan = plan_of(due_to_expire(timezone.now())[:5000])
    assert plan["Actual Rows"] == 5
    assert rows_read(plan) < 200, indexes_used(plan)


@pytest.mark.parametrize("rule", ["working", "inferred"])
def test_a_retention_rule_reads_the_rows_it_deletes_not_the_tombstones(tenant, rule):
    """Every sweep walked the tenant's old rows again, the tombstones earlier sweeps left
    included (20,000 of them: 1,670 buffers a rule and tenant, every five minutes)."""
    from django.db.models import Q
    from django.utils import timezone

    from memory_core.deletion.retention import due_by_rule

    subject = SubjectFactory(tenant=tenant)
    kind = {
        "working": {"memory_class": "working", "memory_type": "task_state"},
        "inferred": {"authority": "model_inference", "source_type": "model_inference"},
    }[rule]
    tombstone = {"status": "deleted", "content": "", "memory_key": "gone.{n}"}
    insert_memories(subject, 20_000, age_seconds=10**6, **kind, **tombstone)
    insert_memories(subject, 20_000, age_seconds=10**6, memory_key="kept.{n}")
    insert_memories(subject, 5, age_seconds=10**6, memory_key="due.{n}", **kind)
    analyze("memory_core_memory")
    condition = {
        "working": Q(memory_class="working", created_at__lt=timezone.now()),
        "inferred": Q(authority="model_inference", created_at__lt=timezone.now()),
    }[rule]
    plan = plan_of(due_by_rule(tenant.id, condition)[:5000])
    assert plan["Actual Rows"] == 5
    assert rows_read(plan) < 200, indexes_used(plan)


def test_a_subjects_tombstones_are_read_alone(tenant):
    """The ledger had no subject index: a subject's deletion and an import's "deleted since"
    read every tombstone of every tenant."""
    from memory_core.models import Tombstone

    others = SubjectFactory(tenant=tenant)
    mine = SubjectFactory(tenant=tenant)
    Tombstone.objects.bulk_create(
        Tombstone(tenant_id=tenant.id, subject_id=subject.id, memory_id=uuid.uuid4())
        for subject in [others] * 20_000 + [mine] * 5
    )
    analyze("memory_core_tombstone")
    plan = plan_of(Tombstone.objects.filter(tenant_id=tenant.id, subject_id=mine.id))
    assert plan["Actual Rows"] == 5
    assert rows_read(plan) < 200, indexes_used(plan)
