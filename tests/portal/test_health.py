"""The health page: daily series from the tenant's own records, drawn as inline SVG."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory_core.exceptions import NotFound
from memory_core.models import (
    AccessDenial,
    AdmissionDecision,
    DeletionOperation,
    MemoryEvent,
    RetrievalTrace,
    ReviewItem,
)
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.selectors.health import health_overview
from portal.charts import chart_geometry
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def served(fresh, old) -> list[dict]:
    """A trace's selected items as retrieval stores them: each with the freshness it was
    served at (the stale-memory rate counts those under 0.5, past their half-life)."""
    return [
        {"id": str(fresh.pk), "components": {"freshness": 0.98}},
        {"id": str(old.pk), "components": {"freshness": 0.02}},
    ]


@pytest.fixture
def activity(tenant, other_tenant, alice_subject, stranger_subject):
    now = timezone.now()
    yesterday = now - timedelta(days=1)
    for outcome, count, when in (
        ("accepted", 3, now),
        ("rejected", 2, now),
        ("accepted", 1, yesterday),
    ):
        for _ in range(count):
            AdmissionDecision.objects.create(
                tenant=tenant,
                outcome=outcome,
                rule_codes=["tenant.subject_mismatch"] if outcome == "rejected" else [],
                created_at=when,
            )
    AdmissionDecision.objects.create(tenant=other_tenant, outcome="accepted", created_at=now)
    pending = MemoryFactory(subject=alice_subject, status="pending_approval")
    ReviewItem.objects.create(
        tenant=tenant,
        subject=alice_subject,
        kind="sensitive_write",
        memory=pending,
        state="approved",
        resolved_at=now,
    )
    DeletionOperation.objects.create(
        tenant=tenant,
        subject=alice_subject,
        target="memory",
        status="completed",
        requested_at=now - timedelta(seconds=4),
        completed_at=now,
    )
    fresh = MemoryFactory(subject=alice_subject)
    long_ago = now - timedelta(days=400)  # written then, unchanged since
    old = MemoryFactory(
        subject=alice_subject, valid_from=long_ago, created_at=long_ago, updated_at=long_ago
    )
    RetrievalTrace.objects.create(
        tenant=tenant,
        mode="hybrid",
        selected_ids=[fresh.pk, old.pk],
        cited_ids=[fresh.pk, old.pk],
        stages={
            "selected": served(fresh, old),
            "rejections": [
                {"id": "x", "stage": "hard_filters", "reason": "other_subject"},
                {"id": "y", "stage": "hard_filters", "reason": "expired"},
            ],
        },
    )
    MemoryEvent.objects.create(
        tenant=tenant, memory_id=fresh.pk, action="corrected", actor_type="user", actor_id="1"
    )
    AccessDenial.objects.create(tenant=tenant, code="subject_not_granted", endpoint="retrieve")
    AccessDenial.objects.create(tenant=tenant, code="forbidden", created_at=yesterday)
    AccessDenial.objects.create(tenant=other_tenant, code="forbidden")
    return now


def test_health_overview_counts_own_tenant(tenant, reviewer, activity):
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), days=7
    )
    charts = {chart.key: chart for chart in overview.charts}
    writes = {s.key: s.values for s in charts["writes"].series}
    assert writes["accepted"][-1] == 3 and writes["accepted"][-2] == 1
    assert writes["rejected"][-1] == 2
    assert sum(sum(v) for v in writes.values()) == 6  # the other tenant's write is not counted
    assert charts["approvals"].series[0].values[-1] == 1
    assert charts["deletion_latency"].series[0].values[-1] == pytest.approx(4, abs=0.5)
    denials = {s.key: s.values[-2:] for s in charts["cross_scope"].series}
    assert denials == {"requests": [1, 1], "admission": [0, 2]}
    assert charts["stale_rate"].series[0].values[-1] == 50.0
    assert charts["corrections"].series[0].values[-1] == 1


def test_health_is_for_reviewers_only(tenant, alice, alice_subject):
    with pytest.raises(NotFound):
        health_overview(
            principal=SubjectPrincipal(
                tenant_id=tenant.id, subject_id=alice_subject.pk, user_id=alice.pk
            )
        )


def test_health_page_draws_svg_charts(reviewer_client, activity):
    response = reviewer_client.get(reverse("portal:review:health"), {"days": 7})
    body = response.content.decode()
    assert response.status_code == 200
    assert body.count("<svg") >= 6
    assert "<rect" in body and '<circle class="dot' in body  # one day's point: a dot, no line
    assert "Deletion latency" in body and "Stale-memory rate" in body
    assert "Latest evaluation" in body


def test_other_tenant_reviewer_sees_empty_health(client, other_reviewer, activity):
    client.force_login(other_reviewer)
    response = client.get(reverse("portal:review:health"), {"days": 7})
    writes = {c.key: c for c in response.context["overview"].charts}["writes"]
    assert sum(writes.series[0].values) == 1
    assert sum(writes.series[2].values) == 0


def test_chart_geometry_stacks_bars_inside_the_plot(tenant, reviewer, activity):
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), days=7
    )
    geometry = chart_geometry(overview.charts[0])
    assert geometry["kind"] == "bars"
    for bar in geometry["bars"]:
        assert geometry["top"] <= bar["y"] and bar["y"] + bar["h"] <= geometry["bottom"] + 0.2
    latency = chart_geometry(overview.charts[2])
    completed_days = [v for v in overview.charts[2].series[0].values if v is not None]
    assert latency["kind"] == "line"
    assert len(latency["lines"][0]["dots"]) == len(completed_days) < 7


def test_a_line_has_no_point_on_a_day_without_a_value_and_round_ticks():
    """Days without a completed deletion (or a retrieval) were drawn as 0 s (0 %), and an
    axis to 0.5 s was labelled 0.12 and 0.38; a rate's axis ran from 0 to 1 "%"."""
    from datetime import date, timedelta

    from memory_core.selectors.health import Chart, Series

    days = [date(2026, 12, 1) + timedelta(days=i) for i in range(5)]
    latency = Chart(
        "l", "Latency", "seconds", days, [Series("m", "median", [None, 0.3, 0.38, None, 0.2])]
    )
    geometry = chart_geometry(latency)
    assert len(geometry["lines"][0]["dots"]) == 3
    assert len(geometry["lines"][0]["segments"]) == 1  # the lone point after the gap: a dot
    assert [tick["label"] for tick in geometry["ticks"]] == ["0", "0.1", "0.2", "0.3", "0.4", "0.5"]
    assert latency.total == pytest.approx(0.88)
    rate = Chart("r", "Stale", "%", days, [Series("s", "stale", [None, 0, 0, None, 0])])
    labels = [tick["label"] for tick in chart_geometry(rate)["ticks"]]
    assert labels == ["0%", "2.5%", "5%", "7.5%", "10%"]


def test_latest_evaluation_figures_are_shown(reviewer_client, evaluation):
    response = reviewer_client.get(reverse("portal:review:health"))
    evaluation = response.context["evaluation"]
    assert evaluation["columns"] == ["memledger", "vector top-k", "no memory"]
    assert ("precision at k", [0.9167, 0.193, 0.0]) in evaluation["rows"]
    assert b"seed-examples" in response.content


@pytest.mark.parametrize(
    ("peak", "axis"), [(0, (4, 4)), (5, (5, 5)), (7, (8, 4)), (41, (50, 5)), (101, (200, 4))]
)
def test_count_axes_use_whole_numbers(peak, axis):
    from portal.charts import _count_axis

    assert _count_axis(peak) == axis


def test_files_that_are_not_evaluation_results_are_ignored(reviewer_client, settings, tmp_path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text('{"cases": [{"expected_ids": []}]}')
    settings.MEMLEDGER_EVALUATION_RESULTS = [str(dataset)]
    settings.DATA_DIR = tmp_path  # no results of other runs in the shared data folder
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.context["evaluation"] == {}
    assert b"No evaluation has been recorded yet" in response.content


def test_a_folder_named_by_the_setting_gives_its_newest_result(reviewer_client, settings, tmp_path):
    """MEMLEDGER_EVALUATION_RESULTS may name a folder (shared storage an evaluation job
    writes to), whose newest result the page shows; it named files only."""
    import os

    shared = tmp_path / "shared-results"
    shared.mkdir()
    for name, precision, age in (("old.json", 0.5, 3600), ("new.json", 0.9167, 0)):
        path = shared / name
        path.write_text(
            '{"dataset": "seed-examples", "cases": 9, "failures": [],'
            f' "system": {{"precision_at_k": {precision}, "by_tag": {{}}}},'
            ' "baseline_vector_topk": {"precision_at_k": 0.193},'
            ' "no_memory": {"precision_at_k": 0.0}}'
        )
        stamp = path.stat().st_mtime - age
        os.utime(path, (stamp, stamp))
    settings.MEMLEDGER_EVALUATION_RESULTS = [str(shared)]
    settings.DATA_DIR = tmp_path / "host-data"  # this host's own folder holds none
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.context["overview"].evaluation_file == "new.json"
    assert b"0.9167" in response.content
    # The file's name, never the server's folder: the page is a tenant's reviewers'.
    assert str(tmp_path) not in response.content.decode()
    assert "not this tenant" in response.content.decode()


def test_without_an_evaluation_the_page_says_where_an_operator_writes_one(
    reviewer_client, settings, tmp_path
):
    """The hint said ".data/evaluation-results" whatever MEMLEDGER_DATA_DIR was, and then
    named the server's folder to a tenant's reviewers; it now names the folder by its
    settings, as the operator configured them, and shows no path of the server's."""
    settings.MEMLEDGER_EVALUATION_RESULTS = []
    settings.DATA_DIR = tmp_path / "elsewhere"
    response = reviewer_client.get(reverse("portal:review:health"))
    body = response.content.decode()
    assert "No evaluation has been recorded yet" in body
    assert "--json &lt;folder&gt;/latest.json" in body
    assert "<code>MEMLEDGER_DATA_DIR</code>" in body
    assert "MEMLEDGER_EVALUATION_RESULTS" in body
    assert str(tmp_path) not in body and ".data/evaluation-results" not in body


def test_reviewer_decisions_leave_out_items_closed_without_a_reviewer(
    tenant, reviewer, alice, alice_subject
):
    now = timezone.now()
    for state, kind, resolution, decided_by in (
        ("approved", "sensitive_write", "approved", reviewer),
        ("rejected", "sensitive_write", "rejected", reviewer),
        ("resolved", "conflict", "choose_winner", reviewer),
        ("resolved", "conflict", "ask_user", reviewer),
        # Closed by the deletion worker, a user's revoke or consent withdrawal: no decision.
        ("resolved", "sensitive_write", "deleted", None),
        ("resolved", "conflict", "deleted", None),
        ("resolved", "sensitive_write", "revoked", None),
        ("resolved", "conflict", "consent_withdrawn", None),
    ):
        ReviewItem.objects.create(
            tenant=tenant,
            subject=alice_subject,
            kind=kind,
            memory_key=f"k.{state}.{kind}.{resolution}",
            state=state,
            resolution=resolution,
            resolved_by=decided_by,
            resolved_at=now,
        )
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.pk, user_id=reviewer.pk), days=7
    )
    chart = next(c for c in overview.charts if c.key == "approvals")
    totals = {series.key: sum(series.values) for series in chart.series}
    assert totals == {"approved": 1, "rejected": 1, "resolved": 2}


def test_a_pending_write_deleted_by_its_user_is_no_reviewer_decision(
    client, alice, reviewer, tenant, alice_subject
):
    from memory_core.deletion.runner import deletion_run
    from tests.portal.test_review import pending_write

    item = pending_write(alice_subject, "Alice takes insulin daily.")
    client.force_login(alice)
    client.post(reverse("portal:memory-delete", args=[item.memory_id]), {"confirm": "on"})
    deletion_run(operation_id=DeletionOperation.objects.get().pk)
    item.refresh_from_db()
    assert item.state == "resolved" and item.resolution == "deleted"
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.pk, user_id=reviewer.pk), days=7
    )
    chart = next(c for c in overview.charts if c.key == "approvals")
    assert all(sum(series.values) == 0 for series in chart.series)


def test_an_approved_sensitive_correction_counts_as_the_user_s_correction(
    tenant, reviewer, alice, alice_subject
):
    from memory_core.models import MemoryEvent
    from memory_core.services.reviews import review_approve
    from memory_core.services.writes import memory_correct

    memory = MemoryFactory(subject=alice_subject, content="Alice walks to work.", memory_key="")
    user = SubjectPrincipal(tenant_id=tenant.id, subject_id=alice_subject.pk, user_id=alice.pk)
    result = memory_correct(
        principal=user, memory_id=memory.id, data={"content": "Alice has asthma; takes the bus."}
    )
    assert result.decision == "pending_approval"
    reviewer_principal = ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk)
    review_approve(principal=reviewer_principal, item_id=result.review_item.id, reason="ok")
    corrected = MemoryEvent.objects.get(memory_id=result.memory.id, action="corrected")
    assert (corrected.actor_type, corrected.actor_id) == ("user", str(alice.pk))
    overview = health_overview(principal=reviewer_principal, days=7)
    charts = {chart.key: chart for chart in overview.charts}
    assert charts["corrections"].series[0].values[-1] == 1


def test_trace_charts_count_every_trace_of_every_day(
    tenant, reviewer, alice_subject, django_assert_max_num_queries
):
    now = timezone.now()
    fresh = MemoryFactory(subject=alice_subject)
    long_ago = now - timedelta(days=800)  # written then, unchanged since
    old = MemoryFactory(
        subject=alice_subject, valid_from=long_ago, created_at=long_ago, updated_at=long_ago
    )
    for days_ago in range(5):
        for _ in range(days_ago + 1):  # 1, 2, 3, 4, 5 traces: counts that tell days apart
            trace = RetrievalTrace.objects.create(
                tenant=tenant,
                mode="hybrid",
                selected_ids=[fresh.pk, old.pk],
                cited_ids=[fresh.pk, old.pk],
                stages={
                    "selected": served(fresh, old),
                    "rejections": [
                        {"id": "x", "stage": "hard_filters", "reason": "scope_not_allowed"},
                        {"id": "y", "stage": "hard_filters", "reason": "below_confidence_floor"},
                    ],
                },
            )
            RetrievalTrace.objects.filter(pk=trace.pk).update(
                created_at=now - timedelta(days=days_ago)
            )
    principal = ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk)
    with django_assert_max_num_queries(30):  # the same for 15 traces as for 15 million
        overview = health_overview(principal=principal, days=7)
    charts = {chart.key: chart for chart in overview.charts}
    assert charts["stale_rate"].series[0].values[-5:] == [50.0] * 5


def test_deletion_latency_and_boundary_refusals_are_counted_per_day(
    tenant, other_tenant, reviewer, alice_subject
):
    """Both series come from one aggregate query each, not from every row of the window."""
    now = timezone.now().replace(hour=12)
    yesterday = now - timedelta(days=1)
    for completed, seconds in [(now, 2), (now, 4), (now, 9), (yesterday, 1), (yesterday, 3)]:
        DeletionOperation.objects.create(
            tenant=tenant,
            subject=alice_subject,
            target="memory",
            status="completed",
            requested_at=completed - timedelta(seconds=seconds),
            completed_at=completed,
        )
    for status, completed, owner in [
        ("completed", now + timedelta(days=2), tenant),  # after the window
        ("completed", now - timedelta(days=30), tenant),  # before it
        ("completed", now, other_tenant),
        ("failed", None, tenant),
    ]:
        DeletionOperation.objects.create(
            tenant=owner,
            target="memory",
            status=status,
            requested_at=now - timedelta(days=40),
            completed_at=completed,
        )
    for outcome, codes, when, owner in [
        ("rejected", ["tenant.subject_not_granted"], now, tenant),
        ("rejected", ["injection.instruction_override", "grant.type_not_allowed"], now, tenant),
        ("rejected", ["injection.instruction_override"], now, tenant),
        ("rejected", ["tenant.subject_mismatch"], yesterday, tenant),
        ("accepted", ["ttl.defaulted"], now, tenant),
        ("rejected", ["tenant.subject_unknown"], now - timedelta(days=30), tenant),
        ("rejected", ["tenant.subject_unknown"], now, other_tenant),
    ]:
        AdmissionDecision.objects.create(
            tenant=owner, outcome=outcome, rule_codes=codes, created_at=when
        )
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), days=7, now=now
    )
    charts = {chart.key: chart for chart in overview.charts}
    latency = {s.key: s.values for s in charts["deletion_latency"].series}
    assert (latency["median"][-1], latency["max"][-1]) == (4, 9)
    assert (latency["median"][-2], latency["max"][-2]) == (2, 3)
    assert latency["median"][:-2] == [None] * 5  # no deletion completed: no point
    assert charts["deletion_latency"].summary == "median 3.0 s over 5 deletions"
    admission = {s.key: s.values for s in charts["cross_scope"].series}["admission"]
    assert (admission[-1], admission[-2], sum(admission)) == (2, 1, 3)


def test_only_the_boundary_rules_codes_count_as_cross_scope_denials(tenant, reviewer):
    """A code counted when "subject", "scope", "tenant" or "cross" stood anywhere in it: a
    refusal of another rule whose code happened to hold one of those words was counted too."""
    now = timezone.now()
    for codes in (
        ["grant.sensitivity_above_max"],  # rule 2: counted
        ["fields.subject_too_long"],  # a field rule's code (rule 3) naming the subject
        ["fields.scope_invalid"],
        ["sensitivity.above_agent_max"],  # rule 8, not the grant's
    ):
        AdmissionDecision.objects.create(
            tenant=tenant, outcome="rejected", rule_codes=codes, created_at=now
        )
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), days=7, now=now
    )
    charts = {chart.key: chart for chart in overview.charts}
    admission = {s.key: s.values for s in charts["cross_scope"].series}["admission"]
    assert sum(admission) == admission[-1] == 1


def test_the_deletion_chart_says_how_long_the_oldest_unfinished_deletion_has_waited(
    tenant, other_tenant, reviewer, alice_subject
):
    """A stopped worker, beat or broker leaves deletions pending with no error but a log
    line: the page said only how many were not completed, never for how long."""
    now = timezone.now()
    for status, age, owner in [
        ("pending", timedelta(hours=3, minutes=5), tenant),
        ("running", timedelta(minutes=10), tenant),
        ("completed", timedelta(days=2), tenant),
        ("pending", timedelta(days=5), other_tenant),
    ]:
        DeletionOperation.objects.create(
            tenant=owner,
            target="memory",
            status=status,
            requested_at=now - age,
            completed_at=now - age if status == "completed" else None,
        )
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), now=now
    )
    (chart,) = [chart for chart in overview.charts if chart.key == "deletion_latency"]
    assert chart.note == "2 not completed, the oldest requested 3\xa0hours, 5\xa0minutes ago"


def test_a_results_path_that_cannot_be_looked_at_is_skipped(
    reviewer_client, settings, tmp_path, evaluation
):
    """A MEMLEDGER_EVALUATION_RESULTS path whose stat fails (shared storage the web user may
    not traverse: EACCES, which running as root cannot make; a name too long stands in, an
    OSError pathlib's is_dir does not swallow either) is skipped, not a 500 of the page."""
    settings.MEMLEDGER_EVALUATION_RESULTS = [
        str(tmp_path / ("x" * 300)),
        *settings.MEMLEDGER_EVALUATION_RESULTS,
    ]
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.status_code == 200
    assert ("precision at k", [0.9167, 0.193, 0.0]) in response.context["evaluation"]["rows"]


def _newer_than_the_result(settings, name: str, text: str) -> None:
    """Write ``text`` as ``name`` in the data folder's results folder, newer than the
    ``evaluation`` fixture's result (aged an hour, as a coarse clock could make them equal)."""
    import os
    from pathlib import Path

    (result,) = map(Path, settings.MEMLEDGER_EVALUATION_RESULTS)
    stamp = result.stat().st_mtime - 3600
    os.utime(result, (stamp, stamp))
    folder = Path(settings.DATA_DIR) / "evaluation-results"
    folder.mkdir()
    (folder / name).write_text(text)


def test_a_deeply_nested_json_beside_the_result_is_ignored_not_a_500(
    reviewer_client, settings, evaluation
):
    """docs/operations.md (MEMLEDGER_EVALUATION_RESULTS): "the newest evaluation result among
    them is shown, other JSON is ignored". A newer JSON file nested deeper than Python's
    parser goes (valid JSON; any other job's file on the shared storage) raised
    RecursionError, which ``evaluation_latest`` did not catch: the health page was a 500 for
    every reviewer of every tenant (stop 55's audit of eval)."""
    _newer_than_the_result(settings, "other.json", "[" * 100_000 + "]" * 100_000)
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.status_code == 200
    assert response.context["overview"].evaluation_file == "eval.json"
    assert ("precision at k", [0.9167, 0.193, 0.0]) in response.context["evaluation"]["rows"]


def test_a_newer_locomo_result_does_not_replace_the_retrieval_evaluation(
    reviewer_client, settings, evaluation
):
    """docs/portal.md: the health page's latest evaluation is "the newest JSON written by
    `manage.py eval_retrieval --dataset ... --json`": memledger vs the vector top-k baseline
    vs no memory. ``eval_locomo --json`` writes an object with a ``system`` block too (recall@k
    per category), and any object with a ``system`` object was taken for a result: written
    into the same results folder, it became the "latest evaluation", a table of no figures
    with one column, and the retrieval evaluation's figures were no longer shown (stop 55's
    audit of eval)."""
    import json

    recall = {"cat1_4": 0.5, "1": 0.5, "2": 0.0, "3": 0.0, "4": 0.0, "5": 0.0}
    locomo = {"questions": 3, "system": {"recall@5": recall},
              "baseline_dense": {"recall@5": recall}, "baseline_fulltext": {"recall@5": recall},
              "loading": {"path": "trusted_import", "turns_stored": 10},
              "latency_ms_p50": 12.0, "latency_ms_p95": 20.0}  # fmt: skip
    _newer_than_the_result(settings, "locomo.json", json.dumps(locomo))
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.status_code == 200
    assert response.context["overview"].evaluation_file == "eval.json"
    assert ("precision at k", [0.9167, 0.193, 0.0]) in response.context["evaluation"]["rows"]


def test_a_result_removed_after_it_was_read_is_no_500(
    reviewer_client, settings, evaluation, monkeypatch
):
    """``evaluation_latest`` skips a file replaced or removed between its listing and its
    stat, but ``health_overview`` stat'ed the chosen file once more, unguarded, for the
    result's time: a result removed in that window (an evaluation job clearing old results)
    made the page a 500, FileNotFoundError (stop 55's audit of eval). The time read while
    listing is shown."""
    from datetime import UTC, datetime
    from pathlib import Path

    from memory_core.selectors import health

    (result,) = map(Path, settings.MEMLEDGER_EVALUATION_RESULTS)
    written = datetime.fromtimestamp(result.stat().st_mtime, tz=UTC)
    read = health.evaluation_latest

    def read_then_removed():
        found = read()
        result.unlink()  # the job removes it just after the page read it
        return found

    monkeypatch.setattr(health, "evaluation_latest", read_then_removed)
    response = reviewer_client.get(reverse("portal:review:health"))
    assert response.status_code == 200
    assert response.context["overview"].evaluation_time == written
