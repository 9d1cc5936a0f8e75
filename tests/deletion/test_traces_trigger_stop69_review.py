"""Stop 69's review of the traces step's trigger (migrations 0055 and 0056).

The step finds and verifies a trace by ``cited_ids`` alone, which a trigger keeps holding
every id the trace names in the places the scrub cleans. Here: the trigger reads exactly those
places (and no id outside them, which ``cited_ids`` would then call a memory); a null in
``cited_ids`` no longer blinds it; no stored shape makes it raise; and a scrubbed trace keeps no
figure measured against the deleted memory (``score``, ``components.redundancy_penalty``).
"""

import importlib
import json
import uuid

import pytest
from django.db import connection, transaction

from memory_core.deletion.runner import operation_context
from memory_core.deletion.stores import REGISTRY
from memory_core.models import RetrievalTrace
from memory_core.retrieval.traces import _as_the_agent_sees_it
from tests.deletion.test_traces_step_stop69 import _deleted_with_a_trace_kept
from tests.rls_support import run_as_a_migration

pytestmark = pytest.mark.django_db

# The places of a trace the deletion's scrub removes a memory id from (migrations 0025 and
# 0033, ``traces.trace_without``), each given an id of its own below.
SCRUBBED_PLACES = (
    "candidates.id",
    "rejections.id",
    "selected.id",
    "selected.merged_from",
    "dedup_merges.kept",
    "dedup_merges.merged",
    "conflicts.candidate_ids",
    "conflicts.winner_id",
    "usage.memory_ids",
)


def _ids(*places):
    return {place: str(uuid.uuid4()) for place in places}


def _trace_of(ids, others):
    """A trace's ``(stages, usage)`` naming ``ids[place]`` in each scrubbed place, and
    ``others[...]`` (ids of no memory: an agent, a review item) where a trace holds them."""
    stages = {
        "context": {"agent_id": others["agent"], "allowed_scopes": ["global"]},
        "candidates": [{"id": ids["candidates.id"], "sources": ["vector"]}],
        "rejections": [{"id": ids["rejections.id"], "stage": "budget", "reason": "x"}],
        "selected": [
            {
                "id": ids["selected.id"],
                "score": 0.5,
                "components": {"cosine": 0.8, "redundancy_penalty": 0.1},
                "merged_from": [ids["selected.merged_from"]],
            }
        ],
        "dedup_merges": [
            {"kept": ids["dedup_merges.kept"], "merged": ids["dedup_merges.merged"], "rule": "r"}
        ],
        "conflicts": [
            {
                "memory_key": "k",
                "candidate_ids": [ids["conflicts.candidate_ids"]],
                "winner_id": ids["conflicts.winner_id"],
                "review_item_id": others["review_item"],
            }
        ],
    }
    usage = [{"kind": "answer", "reference": "msg-1", "memory_ids": [ids["usage.memory_ids"]]}]
    return stages, usage


def test_the_trigger_reads_exactly_the_places_the_scrub_cleans(tenant):
    """Compared one by one: each id the SQL scrub removes from a place is one the trigger
    cites, and the trigger cites no other string of the document (an agent's or a review
    item's id in ``cited_ids`` would read as a memory the agent lost sight of)."""
    ids = _ids(*SCRUBBED_PLACES)
    others = {"agent": str(uuid.uuid4()), "review_item": str(uuid.uuid4())}
    stages, usage = _trace_of(ids, others)
    trace = RetrievalTrace.objects.create(tenant=tenant, mode="task", stages=stages, usage=usage)
    trace.refresh_from_db()
    assert {str(i) for i in trace.cited_ids} == set(ids.values())

    for place, memory_id in ids.items():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT memory_core_trace_without(stages, %s::text[]), "
                "memory_core_usage_without(usage, %s::text[]) "
                "FROM memory_core_retrievaltrace WHERE id = %s",
                [[memory_id], [memory_id], trace.pk],
            )
            scrubbed = json.dumps(cursor.fetchone(), default=str)
        assert memory_id not in scrubbed, place  # the scrub cleans the place
        # ... and leaves the other ids (a conflict left citing none goes whole, with its item).
        assert others["agent"] in scrubbed
        assert (others["review_item"] in scrubbed) == (place != "conflicts.candidate_ids")


NULL_PUT_BACK = ("used_ids", "usage.memory_ids", "stages.candidates", "selected_ids")


@pytest.mark.parametrize("place", NULL_PUT_BACK)
def test_a_null_in_cited_ids_does_not_hide_an_id_put_back(tenant, place):
    """``named <> ALL(cited_ids)`` is null, not true, once ``cited_ids`` holds a null: an id
    put back by hand beside one (``cited_ids || NULL``) was not cited, and the step's
    verification passed over a trace naming the deleted memory (migration 0056)."""
    operation, gone, kept, trace = _deleted_with_a_trace_kept(tenant)
    trace.cited_ids = [*trace.cited_ids, None]
    if place == "used_ids":
        trace.used_ids = [*trace.used_ids, uuid.UUID(gone)]
    elif place == "selected_ids":
        trace.selected_ids = [*trace.selected_ids, uuid.UUID(gone)]
    elif place == "usage.memory_ids":
        trace.usage[0]["memory_ids"].append(gone)
    else:
        trace.stages["candidates"].append({"id": gone, "sources": ["vector"]})
    trace.save()

    trace.refresh_from_db()
    assert uuid.UUID(gone) in trace.cited_ids, place
    ctx = operation_context(operation)
    assert REGISTRY["traces"].verify(ctx) == (False, {"traces_citing": 1})
    REGISTRY["traces"].purge(ctx)
    assert REGISTRY["traces"].verify(operation_context(operation)) == (
        True,
        {"traces_citing": 0},
    )


G = "0b7c9b1e-54f2-4f0e-9d4c-2f0a0e4d5c11"
ODD = [
    ("stages", {}, []),
    ("stages", [], []),
    ("stages", "text", []),
    ("stages", 5, []),
    ("stages", {"candidates": None, "selected": {}, "conflicts": "x"}, []),
    ("stages", {"candidates": {"id": G}}, [G]),  # lax: one object read as a list of it
    ("stages", {"candidates": [None, 5, "x", [], {}, {"id": None}, {"id": 5}]}, []),
    ("stages", {"selected": [{"id": G, "merged_from": None}]}, [G]),
    ("stages", {"conflicts": [{"candidate_ids": None, "winner_id": None}]}, []),
    ("stages", {"candidates": [{"id": G.upper()}, {"id": "g" * 32}, {"id": "0" * 31}]}, [G]),
    ("stages", {"rejections": [{"id": uuid.UUID(G).hex}]}, [G]),
    ("usage", {}, []),
    ("usage", "x", []),
    ("usage", [None, {}, {"memory_ids": None}, {"memory_ids": [None, 5]}], []),
    ("selected_ids", [None], []),
    ("used_ids", [None, uuid.UUID(G)], [G]),
]


@pytest.mark.parametrize(
    "field,value,cited", ODD, ids=[f"{i}-{f}" for i, (f, _, _) in enumerate(ODD)]
)
def test_the_trigger_takes_any_shape_a_row_may_hold(tenant, field, value, cited):
    """Old documents, lists absent or null, items of any type: the row is written (the
    trigger raises on none), citing the ids it names; nulls are no ids; a trace with them
    reads and takes a usage report."""
    with transaction.atomic():
        trace = RetrievalTrace.objects.create(tenant=tenant, mode="task", **{field: value})
    trace.refresh_from_db()
    assert sorted(str(i) for i in trace.cited_ids if i is not None) == cited
    trace.stages = trace.stages  # an update of every column the trigger fires on
    trace.save()


def test_a_scrubbed_trace_keeps_no_score_or_redundancy_penalty(tenant):
    """The API answers a trace one of whose memories is deleted without its items' scores and
    redundancy penalties (``traces._unscored``, stop 68): measured against the items above,
    the deleted memory perhaps among them. The stored row kept them, shown by the Django
    admin; the traces step nulls them as it nulls the prompt's tokens."""
    _, gone, kept, trace = _deleted_with_a_trace_kept(tenant)
    stored = RetrievalTrace.objects.get(pk=trace.pk)
    items = stored.stages["selected"]
    assert [item["id"] for item in items] == [kept]
    assert items[0]["score"] is None
    assert items[0]["components"]["redundancy_penalty"] is None
    assert items[0]["components"]["cosine"] is not None  # its own figures stay
    # What the API answers is what it answered before: the stored row as the agent sees it.
    answered = _as_the_agent_sees_it(RetrievalTrace.objects.get(pk=trace.pk), set())
    assert answered.stages["selected"] == items


def test_migration_0056_unscores_the_traces_scrubbed_before(tenant):
    """The traces the step scrubbed before it nulled the figures (their document says
    ``deleted_since``) lose them too; the others keep theirs."""
    item = {"id": G, "score": 0.7, "components": {"cosine": 0.9, "redundancy_penalty": 0.2}}
    scrubbed, untouched = (
        RetrievalTrace.objects.create(
            tenant=tenant, mode="task", stages={"selected": [item, "odd"], **extra}
        )
        for extra in ({"deleted_since": 1}, {})
    )

    run_as_a_migration(
        importlib.import_module(
            "memory_core.migrations.0056_trace_cites_every_id_cheaper"
        ).UNSCORE_SCRUBBED
    )

    scrubbed.refresh_from_db()
    untouched.refresh_from_db()
    assert scrubbed.stages["selected"] == [
        {"id": G, "score": None, "components": {"cosine": 0.9, "redundancy_penalty": None}},
        "odd",
    ]
    assert untouched.stages["selected"] == [item, "odd"]
