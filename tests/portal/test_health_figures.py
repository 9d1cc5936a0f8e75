"""The health page's figures against worlds counted by hand (stop 50's audit: each failed on
the code before)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory_core.models import (
    DeletionOperation,
    Memory,
    RetrievalTrace,
)
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.selectors.health import health_overview
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def _charts(tenant, reviewer, **kwargs):
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), **kwargs
    )
    return {chart.key: chart for chart in overview.charts}


def test_a_deletion_queued_for_a_worker_counts_as_not_completed(
    tenant, reviewer, alice, alice_subject
):
    """A whole subject's deletion too large for a request is queued for a worker
    (Subject.deletion_queued_at; the API lists it with status "queued" and its requested_at).
    With the worker, beat or broker stopped, it waits there: the deletion chart's note, which
    docs/portal.md says shows "how many are not completed and how long ago the oldest of them
    was requested (a stopped worker, beat or broker shows there first)", must count it."""
    from memory_core.deletion.services import subject_deletion_queue

    MemoryFactory(subject=alice_subject)
    user = SubjectPrincipal(tenant_id=tenant.id, subject_id=alice_subject.pk, user_id=alice.pk)
    subject_deletion_queue(principal=user, subject_id=alice_subject.pk)
    alice_subject.refresh_from_db()
    assert alice_subject.deletion_queued_at is not None
    assert not DeletionOperation.objects.filter(tenant=tenant).exists()

    now = alice_subject.deletion_queued_at + timedelta(hours=3)
    chart = _charts(tenant, reviewer, now=now)["deletion_latency"]
    assert chart.note.startswith("1 not completed, the oldest requested 3\xa0hours"), chart.note


def test_open_count_leaves_out_writes_deleted_while_they_waited(
    client, tenant, reviewer, alice, alice_subject
):
    """A pending write its user deleted leaves the queue at once (review_queue, and the
    reviewer API's open list, exclude it: nothing is left to decide), until the deletion's
    worker closes its item. The health page's "N open" beside the decisions counted it still:
    with the worker stopped, the page said "1 open" above an empty queue."""
    from tests.portal.test_review import pending_write

    item = pending_write(alice_subject, "Alice takes insulin daily.")
    client.force_login(alice)
    client.post(reverse("portal:memory-delete", args=[item.memory_id]), {"confirm": "on"})
    assert Memory.objects.get(pk=item.memory_id).status == "deleted"
    item.refresh_from_db()
    assert item.state == "open"  # the worker has not run yet

    client.force_login(reviewer)
    queue = client.get(reverse("portal:review:queue"))
    assert queue.status_code == 200
    chart = _charts(tenant, reviewer)["approvals"]
    assert queue.context["page"].total == 0  # the queue: nothing left to decide
    assert chart.note == "0 open", chart.note


def test_a_results_file_whose_failures_is_a_number_does_not_break_the_page(
    reviewer_client, settings, tmp_path
):
    """The health page reads every *.json of the results folders and shows the newest
    evaluation result (a JSON object with ``system``, ``baseline_vector_topk`` and
    ``no_memory`` blocks). A results file whose ``failures`` is a count (an older or
    hand-written report) made the whole health page a 500 for every reviewer of every
    tenant."""
    result = tmp_path / "eval.json"
    result.write_text(
        '{"dataset": "seed-examples", "cases": 9, "failures": 2,'
        ' "system": {"precision_at_k": 0.9167},'
        ' "baseline_vector_topk": {"precision_at_k": 0.193},'
        ' "no_memory": {"precision_at_k": 0.0}}'
    )
    settings.MEMLEDGER_EVALUATION_RESULTS = [str(result)]
    settings.DATA_DIR = tmp_path
    reviewer_client.raise_request_exception = False
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.status_code == 200
    assert response.context["evaluation"]["failures"] == 2


def test_a_bar_s_title_gives_a_large_count_in_full():
    """Each bar's <title> is the value screen readers and tooltips read (docs/portal.md). A
    day's count of a million or more was written with ``:g``: "1.23457e+06 accepted"."""
    from datetime import date

    from memory_core.selectors.health import Chart, Series
    from portal.charts import chart_geometry

    chart = Chart(
        "writes",
        "Writes",
        "writes",
        [date(2026, 12, 5)],
        [Series("accepted", "accepted", [1234567])],
    )
    (bar,) = chart_geometry(chart)["bars"]
    assert bar["title"].replace(",", "") == "05 Dec: 1234567 accepted", bar["title"]


def _inferred_rule_served(api_client, tenant, *, written, changed, **fields) -> dict:
    """Store a model's inferred repository rule about "dana" (``fields`` change it), written
    at ``written`` and last changed at ``changed``; retrieve it through the API; return its
    selected entry of the trace (its score's components)."""
    from memory_core.principals import SystemPrincipal
    from memory_core.services.memories import MemoryDraft, memory_store_many
    from tests.factories import SubjectFactory

    dana = SubjectFactory(tenant=tenant, external_id="dana")
    (rule,) = memory_store_many(
        drafts=[
            MemoryDraft(**{
                "subject": dana, "memory_type": "repository_rule",
                "content": "In atlas-api every endpoint needs an OpenAPI entry.",
                "authority": "model_inference", "source_type": "model_inference",
                "confidence": 0.7, "scope_kind": "repo", "scope_ref": "atlas-api", **fields,
            })
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )  # fmt: skip
    Memory.objects.filter(pk=rule.pk).update(
        valid_from=written, created_at=written, updated_at=changed
    )
    response = api_client.post(
        "/api/v1/retrieve",
        {
            "query": "Add a new endpoint to atlas-api.",
            "intent": "apply_project_rules",
            "context": {"user_id": "dana", "project_id": "atlas", "repository_id": "atlas-api"},
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert [item["id"] for item in response.json()["items"]] == [str(rule.pk)]
    (served,) = RetrievalTrace.objects.get(pk=response.json()["trace_id"]).stages["selected"]
    return served


def test_an_inference_retrieval_served_past_its_half_life_counts_as_stale(
    api_client, tenant, reviewer
):
    """End to end: retrieval serves an inferred repository rule 20 days old, scored by
    freshness 2^(-20/14) (its inference's half-life, 14 d), so older than its half-life as
    retrieval reads it; the health page's stale-memory rate counted it as fresh (the type's
    90 d)."""
    then = timezone.now() - timedelta(days=20)
    served = _inferred_rule_served(api_client, tenant, written=then, changed=then)
    # The trace's own score: freshness 2^(-20/14) = 0.37, under 0.5: past its half-life.
    assert served["components"]["freshness"] == pytest.approx(2 ** (-20 / 14), abs=0.001)
    chart = _charts(tenant, reviewer, days=7)["stale_rate"]
    assert chart.summary == "1 of 1 memories served were past their half-life", chart.summary


def test_a_write_approved_today_served_fresh_is_not_counted_stale(api_client, tenant, reviewer):
    """The stop's review: docs/portal.md's stale-memory rate is the share of memories served
    "older than the half-life retrieval reads them by when served". Retrieval ages a memory
    from its ``updated_at`` (rerank.freshness: a write approved today, or re-affirmed, is 0
    days old); the health SQL aged it from ``valid_from`` (when it was first written). An
    inferred rule written 20 days ago and approved by a reviewer today is served at freshness
    ~1.0, and the health page counted it as past its half-life."""
    written = timezone.now() - timedelta(days=20)  # its last change (an approval) today
    served = _inferred_rule_served(api_client, tenant, written=written, changed=timezone.now())
    assert served["components"]["freshness"] > 0.99  # retrieval served it as brand new
    chart = _charts(tenant, reviewer, days=7)["stale_rate"]
    assert chart.summary == "0 of 1 memories served were past their half-life", chart.summary


def test_a_memory_served_stale_stays_counted_stale_once_it_is_corrected(
    api_client, tenant, reviewer
):
    """A figure about a past day: the rate counts the freshness each memory was served at,
    in its trace. Aged from the row as it is now, a rule served 20 days old was counted fresh
    once corrected (its last change after the trace), and stale facts are the ones people
    correct (stop 51's audit of time)."""
    then = timezone.now() - timedelta(days=20)
    _inferred_rule_served(api_client, tenant, written=then, changed=then)
    RetrievalTrace.objects.filter(tenant=tenant).update(
        created_at=timezone.now() - timedelta(days=2)
    )
    served_stale = "1 of 1 memories served were past their half-life"
    assert _charts(tenant, reviewer, days=7)["stale_rate"].summary == served_stale
    (rule,) = Memory.objects.filter(tenant=tenant)
    corrected = api_client.post(
        f"/api/v1/memories/{rule.pk}/supersede",
        {
            "content": "In atlas-api every public endpoint needs an OpenAPI entry.",
            "source": {"type": "user_input", "conversation_id": "c-9", "message_id": "m-9"},
        },
        format="json",
    )
    assert corrected.status_code == 201, corrected.json()
    assert _charts(tenant, reviewer, days=7)["stale_rate"].summary == served_stale
