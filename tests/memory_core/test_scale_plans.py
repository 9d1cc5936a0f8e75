"""The plans of the queries whose cost grew with the tenant or the table rather than with what
they read (migration 0024): each is planned as PostgreSQL plans it for real, over statistics
of a table where the rows read are few and the rows around them many, and must use its index
and read a few pages, not the tenant's or the table's rows."""

import json

import pytest

from memory_core.principals import SystemPrincipal
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


@pytest.mark.parametrize("which", ["small", "big"])
def test_one_subjects_memory_list_page_reads_the_page_not_the_tenant(tenant, which):
    """A page of a subject's list, newest first: a 5-memory subject's walked
    ``memory_tenant_newest`` through every row of its tenant, dropping the other subjects'
    (20,105 rows read in a 20,105-row tenant); a big subject's sorted all its rows for 50."""
    small, big = SubjectFactory(tenant=tenant), SubjectFactory(tenant=tenant)
    insert_memories(small, 5, age_seconds=10**6)  # older than every row of the big one
    insert_memories(big, 20_000)
    analyze("memory_core_memory", "memory_core_subject")
    subject = {"small": small, "big": big}[which]
    page = memory_list(principal=SystemPrincipal(tenant_id=tenant.id), subject=subject.external_id)
    plan = plan_of(page[:50])
    assert plan["Actual Rows"] == {"small": 5, "big": 50}[which]
    assert rows_read(plan) < 200, indexes_used(plan)
    assert pages(plan) < 100
