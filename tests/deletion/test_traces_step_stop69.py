"""The traces step verifies every place of a trace that can name a memory (stop 69).

Stop 68's audit of deletion's tasks: the step verified a trace by its ``cited_ids`` and
``selected_ids`` only, while the purge scrubs ``used_ids``, the usage reports and the
document (``stages``) too. A deleted id put back in one of those alone, by hand, verified:
the operation would have been answered completed over a trace naming the memory. Each place
below is put back after the deletion completed; the verification must fail, and a run of the
step again (its purge) must leave no trace naming the memory.
"""

import uuid

import pytest

from memory_core.deletion.runner import deletion_run, operation_context
from memory_core.deletion.stores import REGISTRY
from memory_core.models import DeletionOperation, RetrievalTrace
from tests.clients import client_for
from tests.deletion.test_trace_usage import _write
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def _deleted_with_a_trace_kept(tenant):
    """Return ``(operation, gone, kept, trace)``: ``gone`` deleted (completed), and the trace
    of a retrieval that handed out both memories, kept for ``kept``, with a usage report of
    each."""
    client = client_for(AgentFactory(tenant=tenant))
    gone = _write(client, "charts.colour", "The user prefers teal for charts.", "c-1")
    kept = _write(client, "answers.length", "The user likes short answers.", "c-2")
    retrieved = client.post(
        "/api/v1/retrieve",
        {
            "query": "what colour does the user prefer for charts and how long should answers be",
            "context": {"user_id": "usage-user"},
        },
        format="json",
    )
    assert retrieved.status_code == 200, retrieved.content
    assert {gone, kept} <= {item["id"] for item in retrieved.json()["items"]}
    trace_id = retrieved.json()["trace_id"]
    for report in (
        {"kind": "answer", "reference": "msg-1", "memory_ids": [gone, kept]},
        {"kind": "tool_call", "reference": "render_chart", "memory_ids": [kept]},
    ):
        used = client.post(f"/api/v1/traces/{trace_id}/usage", report, format="json")
        assert used.status_code == 200, used.content
    deleted = client.delete(f"/api/v1/memories/{gone}")
    assert deleted.status_code == 202, deleted.content
    operation_id = deleted.json()["operation_id"]
    assert deletion_run(operation_id=operation_id) == "completed"
    trace = RetrievalTrace.objects.get(pk=trace_id)  # kept: it cites the other memory
    assert gone not in str(trace.stages) + str(trace.usage) + str(trace.used_ids)
    return DeletionOperation.objects.get(pk=operation_id), gone, kept, trace


def _conflict(candidates, winner):
    return {
        "memory_key": "charts.colour",
        "candidate_ids": candidates,
        "winner_id": winner,
        "rule": "authority",
        "high_impact": False,
        "clarification": False,
        "review_item_id": None,
    }


def _put_back(trace, place, gone, kept):
    """Name ``gone`` again in ``place`` of ``trace`` alone, by hand."""
    stages = trace.stages
    if place == "cited_ids":
        trace.cited_ids = [*trace.cited_ids, uuid.UUID(gone)]
    elif place == "selected_ids":
        trace.selected_ids = [*trace.selected_ids, uuid.UUID(gone)]
    elif place == "used_ids":
        trace.used_ids = [*trace.used_ids, uuid.UUID(gone)]
    elif place == "usage.memory_ids":
        trace.usage[0]["memory_ids"].append(gone)
    elif place == "usage.report":
        trace.usage.append({"kind": "answer", "reference": "msg-2", "memory_ids": [gone]})
    elif place == "stages.candidates":
        stages["candidates"].append({"id": gone, "sources": ["vector"], "content_hash": "x"})
    elif place == "stages.rejections":
        stages["rejections"].append({"id": gone, "stage": "budget", "reason": "over_max_items"})
    elif place == "stages.selected":
        stages["selected"].append({**stages["selected"][0], "id": gone})
    elif place == "stages.selected.merged_from":
        stages["selected"][0]["merged_from"] = [gone]
    elif place == "stages.dedup_merges":
        stages["dedup_merges"] = [{"kept": kept, "merged": gone, "rule": "same_content"}]
    elif place == "stages.conflicts.candidate_ids":
        stages["conflicts"] = [_conflict([kept, gone], kept)]
    elif place == "stages.conflicts.winner_id":
        stages["conflicts"] = [_conflict([kept], gone)]
    elif place == "stages.upper_case":
        stages["candidates"].append({"id": gone.upper(), "sources": ["vector"]})
    elif place == "stages.hex":
        stages["rejections"].append({"id": uuid.UUID(gone).hex, "stage": "x", "reason": "y"})
    else:
        raise AssertionError(place)
    trace.save()


PLACES = [
    "cited_ids",
    "selected_ids",
    "used_ids",
    "usage.memory_ids",
    "usage.report",
    "stages.candidates",
    "stages.rejections",
    "stages.selected",
    "stages.selected.merged_from",
    "stages.dedup_merges",
    "stages.conflicts.candidate_ids",
    "stages.conflicts.winner_id",
    "stages.upper_case",
    "stages.hex",
]


@pytest.mark.parametrize("place", PLACES)
def test_a_deleted_id_put_back_in_any_place_of_a_trace_fails_the_traces_step(tenant, place):
    operation, gone, kept, trace = _deleted_with_a_trace_kept(tenant)
    store = REGISTRY["traces"]
    assert store.verify(operation_context(operation)) == (True, {"traces_citing": 0})

    _put_back(trace, place, gone, kept)

    ok, evidence = store.verify(operation_context(operation))
    assert (ok, evidence) == (False, {"traces_citing": 1}), place

    # The step run again scrubs it (or deletes the trace), and verifies.
    ctx = operation_context(operation)
    store.purge(ctx)
    assert store.verify(ctx) == (True, {"traces_citing": 0})
    left = RetrievalTrace.objects.filter(pk=trace.pk).first()
    if left is not None:
        named = f"{left.cited_ids}{left.selected_ids}{left.used_ids}{left.stages}{left.usage}"
        assert gone not in named.lower() and uuid.UUID(gone).hex not in named.lower()
        assert uuid.UUID(kept) in left.cited_ids


def test_a_trace_of_another_tenant_naming_the_id_is_not_the_steps(tenant, other_tenant):
    """What the step reads stays the operation's tenant's traces: another tenant's trace that
    names the id (it cannot cite another tenant's memory; an id is only a string there) is
    neither counted nor touched."""
    operation, gone, kept, _ = _deleted_with_a_trace_kept(tenant)
    theirs = RetrievalTrace.objects.create(
        tenant=other_tenant, mode="task", used_ids=[uuid.UUID(gone)], stages={}
    )
    ctx = operation_context(operation)
    assert REGISTRY["traces"].verify(ctx) == (True, {"traces_citing": 0})
    REGISTRY["traces"].purge(ctx)
    theirs.refresh_from_db()
    assert theirs.used_ids == [uuid.UUID(gone)]
