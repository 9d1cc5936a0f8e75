"""A deleted memory leaves the retrieval traces that cited it; the traces stay for the others.

Deleting a memory used to delete every trace that cited it, so each other memory of those
retrievals lost its uses (the portal's "used N times", the agents' usage reports)."""

import json
import re
import uuid

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exceptions import ValidationFailed
from memory_core.models import RetrievalTrace
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.traces import trace_usage_record
from memory_core.selectors.portal import memory_usage

from .test_pipeline import ATLAS_API, ask

pytestmark = pytest.mark.django_db

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _named(trace: RetrievalTrace) -> set[str]:
    """Every id-shaped string the stored trace holds, anywhere in its row."""
    row = [trace.stages, trace.usage, trace.selected_ids, trace.cited_ids, trace.used_ids]
    return set(_UUID.findall(json.dumps(row, default=str)))


def _retrieval_of_two(world):
    """A retrieval whose package holds two or more memories, each reported used."""
    principal = world["principal"]
    result = ask(principal, "Why did the atlas-api staging deploy fail?", **ATLAS_API)
    trace = RetrievalTrace.objects.get(pk=result.trace_id)
    assert len(trace.selected_ids) >= 2, trace.stages["selected"]
    trace_usage_record(
        principal=principal,
        trace_id=trace.id,
        kind="answer",
        reference="msg-1",
        memory_ids=trace.selected_ids,
    )
    return principal, trace


def test_a_deleted_memory_is_scrubbed_from_a_trace_kept_for_the_others(world):
    principal, trace = _retrieval_of_two(world)
    gone, *others = trace.selected_ids
    owner = SystemPrincipal(tenant_id=trace.tenant_id)
    before = memory_usage(principal=owner, memory_ids=others)
    counts = trace.stages["counts"]

    operation = deletion_request(principal=owner, memory_id=gone)
    assert deletion_run(operation_id=operation.id) == "completed"

    trace.refresh_from_db()  # kept: it holds the other memories' uses
    assert str(gone) not in _named(trace)
    assert set(trace.selected_ids) == set(others) and gone not in trace.cited_ids
    assert set(trace.used_ids) == set(others)
    assert trace.usage[0]["memory_ids"] == sorted(str(i) for i in others)
    assert all(item["id"] != str(gone) for item in trace.stages["selected"])
    # The counts are the retrieval's; the trace says one of its memories was deleted since.
    assert trace.stages["counts"] == counts and trace.stages["deleted_since"] == 1
    after = memory_usage(principal=owner, memory_ids=others)
    assert {i: (u.count, u.reported_used) for i, u in after.items()} == {
        i: (u.count, u.reported_used) for i, u in before.items()
    }
    step = operation.steps.get(store="traces")
    assert step.evidence["purged"] == {"deleted": 0, "scrubbed": 1}
    assert step.evidence["traces_citing"] == 0
    with pytest.raises(ValidationFailed):  # the package no longer holds it
        trace_usage_record(
            principal=principal, trace_id=trace.id, kind="answer", reference="m", memory_ids=[gone]
        )


def test_a_trace_that_cites_nothing_else_is_deleted(world):
    principal = world["principal"]
    result = ask(principal, "Why did the atlas-api staging deploy fail?", **ATLAS_API)
    trace = RetrievalTrace.objects.get(pk=result.trace_id)
    owner = SystemPrincipal(tenant_id=trace.tenant_id)

    cited = set(trace.cited_ids)
    for memory_id in trace.cited_ids:
        operation = deletion_request(principal=owner, memory_id=memory_id)
        assert deletion_run(operation_id=operation.id) == "completed"
        if left := RetrievalTrace.objects.filter(pk=trace.pk).first():  # the count adds up
            assert left.stages["deleted_since"] == len(cited - set(left.cited_ids)) > 0

    assert not RetrievalTrace.objects.filter(pk=trace.pk).exists()


def test_a_trace_naming_the_memory_where_the_scrub_does_not_look_is_deleted(world):
    """A list the scrub does not know (a trace written by a later version, say): the trace
    goes whole rather than keep the id."""
    _, trace = _retrieval_of_two(world)
    gone = trace.selected_ids[0]
    trace.stages = {**trace.stages, "later_stage": [{"memory": str(gone).upper()}]}
    trace.save(update_fields=["stages"])
    owner = SystemPrincipal(tenant_id=trace.tenant_id)

    operation = deletion_request(principal=owner, memory_id=gone)
    assert deletion_run(operation_id=operation.id) == "completed"

    assert not RetrievalTrace.objects.filter(pk=trace.pk).exists()
    assert operation.steps.get(store="traces").evidence["purged"]["deleted"] == 1


def test_every_memory_id_a_trace_names_is_in_its_cited_ids(world):
    """What the traces step relies on: it finds a trace by ``cited_ids`` (GIN), so no part
    of the document may name a memory that is not there."""
    _, trace = _retrieval_of_two(world)
    memory_ids = {str(m.id) for m in world["memories"].values()}
    named = _named(trace) & memory_ids
    assert named and named <= {str(i) for i in trace.cited_ids}
    assert {str(uuid.UUID(i)) for i in named} == named


def test_the_sql_scrub_leaves_what_an_agents_view_of_the_trace_leaves(world):
    """Deletion scrubs in SQL (migration 0025), an agent's view in Python
    (``traces.trace_without``): the two must leave out the same ids, in the same order."""
    from django.db import connection

    from memory_core.retrieval.traces import trace_without

    _, trace = _retrieval_of_two(world)
    found = [c["id"] for c in trace.stages["candidates"]]
    merged = [m["merged"] for m in trace.stages["dedup_merges"]]
    for gone in ([found[0]], found[1:3], merged[:1], found):
        expected = trace_without(RetrievalTrace.objects.get(pk=trace.pk), set(gone))
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT memory_core_trace_without(stages, %s::text[]), "
                "memory_core_usage_without(usage, %s::text[]) "
                "FROM memory_core_retrievaltrace WHERE id = %s",
                [gone, gone, trace.pk],
            )
            stages, usage = cursor.fetchone()
        stages, usage = (json.loads(v) if isinstance(v, str) else v for v in (stages, usage))
        assert stages == expected.stages, gone
        assert usage == expected.usage, gone


def test_many_traces_of_one_memory_are_scrubbed_in_one_statement(world):
    """Row by row, the step loaded every citing trace and saved each with its own UPDATE (a
    memory cited by 20,000 traces: 66 s and 1.8 GB in one transaction)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _, trace = _retrieval_of_two(world)
    gone = trace.selected_ids[0]
    copies = []
    for _ in range(200):
        copy = RetrievalTrace.objects.get(pk=trace.pk)
        copy.pk = uuid.uuid4()
        copies.append(copy)
    RetrievalTrace.objects.bulk_create(copies)
    owner = SystemPrincipal(tenant_id=trace.tenant_id)
    operation = deletion_request(principal=owner, memory_id=gone)

    with CaptureQueriesContext(connection) as queries:
        assert deletion_run(operation_id=operation.id) == "completed"

    touching = [q["sql"] for q in queries if "memory_core_retrievaltrace" in q["sql"]]
    assert len(touching) <= 4, touching  # the scrub, the leftovers, the verification
    assert operation.steps.get(store="traces").evidence["purged"] == {
        "deleted": 0,
        "scrubbed": 201,
    }
    assert not RetrievalTrace.objects.filter(cited_ids__overlap=[gone]).exists()
    assert RetrievalTrace.objects.filter(selected_ids__len__gt=0).count() == 201
