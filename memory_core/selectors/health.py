"""Health figures of one tenant over time, for the reviewers' health page.

Every figure is a daily series over the last ``days`` days, computed from the records the
system already keeps (admission decisions, review items, deletion operations, retrieval traces,
memory events); nothing is sampled or stored separately.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.db.models import Count, Min
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.timesince import timesince

from memory_core.admission.codes import SCOPE_CODES
from memory_core.json_types import json_loads
from memory_core.models import (
    AccessDenial,
    AdmissionDecision,
    DeletionOperation,
    MemoryEvent,
    ReviewItem,
    Status,
    Subject,
    reviewer_decided_condition,
)
from memory_core.principals import require_reviewer

logger = logging.getLogger(__name__)


@dataclass
class Series:
    """One line of a chart: a value per day."""

    key: str
    label: str
    values: list[float]


@dataclass
class Chart:
    """A figure over time: one or more series on the same days, in one unit."""

    key: str
    title: str
    unit: str
    days: list[date]
    series: list[Series]
    summary: str = ""
    note: str = ""
    # The moment a note's last words tell the age of ("the oldest requested 3 hours ago"),
    # which the page shows as a <time> holding it (docs/portal.md: every time or date shown
    # is one); ``note_lead`` is the note before them, ``since`` the age.
    note_lead: str = ""
    oldest: datetime | None = None
    since: str = ""

    @property
    def total(self) -> float:
        return sum(sum(v for v in s.values if v is not None) for s in self.series)

    @property
    def rows(self) -> list[tuple[date, list[float]]]:
        """Return the chart as a table: one row per day, one value per series."""
        return [(day, [s.values[i] for s in self.series]) for i, day in enumerate(self.days)]


@dataclass
class HealthOverview:
    """Every chart of the health page, plus the latest evaluation figures."""

    charts: list[Chart]
    evaluation: dict | None = None
    # The results file's name, never its folder: the page is a tenant's reviewers', and the
    # server's folders are the operator's (as a dead letter's paths are left out).
    evaluation_file: str = ""
    evaluation_time: datetime | None = None


def _days(now: datetime, count: int) -> list[date]:
    today = timezone.localdate(now)
    return [today - timedelta(days=offset) for offset in range(count - 1, -1, -1)]


def _daily_counts(queryset, date_field: str, days: list[date], **split) -> dict:
    """Return ``{split_value: [count per day]}`` (or ``{None: [...]}`` without a split)."""
    split_field = next(iter(split), None)
    values = ["day"] + ([split_field] if split_field else [])
    rows = (
        queryset.annotate(day=TruncDate(date_field))
        .values(*values)
        .annotate(n=Count("pk"))
        .order_by()
    )
    index = {day: position for position, day in enumerate(days)}
    out: dict = {}
    for wanted in split.get(split_field, [None]) if split_field else [None]:
        out[wanted] = [0] * len(days)
    for row in rows:
        key = row.get(split_field) if split_field else None
        if key in out and row["day"] in index:
            out[key][index[row["day"]]] += row["n"]
    return out


# Per day, over every trace of the window: the memories served, and how many of them were
# past the half-life retrieval read them by when it served them: the freshness the trace
# stored for each (``rerank.freshness``, 2^(-age / half-life), under 0.5 past it; their
# type's half-life, or a model's inference's when shorter, aged since their last change).
# Aged here from the rows as they are now (until stop 51), a memory served stale and then
# corrected, revoked or expired was counted fresh: its last change came after the trace.
_TRACE_STALE_SQL = """
SELECT (t.created_at AT TIME ZONE %(tz)s)::date AS day, count(*),
       count(*) FILTER (WHERE (s.item -> 'components' ->> 'freshness')::float8 < 0.5)
FROM memory_core_retrievaltrace t
CROSS JOIN jsonb_array_elements(
    CASE WHEN jsonb_typeof(t.stages -> 'selected') = 'array'
         THEN t.stages -> 'selected' ELSE '[]'::jsonb END
) AS s(item)
WHERE t.tenant_id = %(tenant)s AND t.created_at >= %(start)s
GROUP BY 1
"""


# Per day (and, in the row whose day is null, over the whole window): the median and the
# longest time from request to verified completion of the deletions completed that day.
_DELETION_LATENCY_SQL = """
SELECT day, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds), max(seconds), count(*)
FROM (
    SELECT (o.completed_at AT TIME ZONE %(tz)s)::date AS day,
           extract(epoch FROM o.completed_at - o.requested_at)::float8 AS seconds
    FROM memory_core_deletionoperation o
    WHERE o.tenant_id = %(tenant)s AND o.status = 'completed'
      AND o.completed_at >= %(start)s AND o.completed_at < %(end)s
) AS done
GROUP BY GROUPING SETS ((day), ())
"""
# Per day, the writes admission refused with a code of the tenant's boundary (``SCOPE_CODES``:
# the tenancy and grant rules, 1 and 2, of memory_core/admission/codes.py). Retrieval never
# meets another scope's rows (its candidate statement reads only the request's tenant, subject
# and scopes): its denials are the agents' requests the API refused, ``AccessDenial``.
_ADMISSION_SCOPE_SQL = """
SELECT (d.created_at AT TIME ZONE %(tz)s)::date, count(*)
FROM memory_core_admissiondecision d
WHERE d.tenant_id = %(tenant)s AND d.outcome = 'rejected'
  AND d.created_at >= %(start)s AND d.created_at < %(end)s
  AND d.rule_codes && %(codes)s::varchar[]
GROUP BY 1
"""


def _trace_series(tenant_id, start, day_list):
    """Return per day (served, stale) over every retrieval trace since ``start``."""
    params = {"tz": timezone.get_current_timezone_name(), "tenant": tenant_id, "start": start}
    index = {day: position for position, day in enumerate(day_list)}
    served, stale = [0] * len(day_list), [0] * len(day_list)
    with connection.cursor() as cursor:
        cursor.execute(_TRACE_STALE_SQL, params)
        for day, count, past in cursor.fetchall():
            if day in index:
                served[index[day]], stale[index[day]] = count, past
    return served, stale


def evaluation_results_folder() -> Path:
    """Return the folder of evaluation results the health page reads: ``evaluation-results``
    in the data folder (``MEMLEDGER_DATA_DIR``)."""
    return Path(getattr(settings, "DATA_DIR", settings.BASE_DIR / ".data")) / "evaluation-results"


EVALUATION_APPROACHES = (
    ("system", "memledger"),
    ("baseline_vector_topk", "vector top-k"),
    ("no_memory", "no memory"),
)


def evaluation_latest() -> tuple[dict | None, str, datetime | None]:
    """Return the newest evaluation result written by ``eval_retrieval --json OUT``, its file,
    and the time it was written.

    The files looked at are every ``*.json`` in ``DATA_DIR/evaluation-results`` and those
    ``MEMLEDGER_EVALUATION_RESULTS`` names (a file, or a folder whose ``*.json`` are read; a
    path that is neither, or that cannot be looked at, is skipped). Only evaluation results
    count (``is_evaluation_result``); the newest one wins. The time is the one read while
    listing: the page stat'ed the file again, unguarded, and a result removed in between (a job
    clearing old results) was a 500 (stop 55's audit of eval).
    (``DATA_DIR/eval`` holds evaluation datasets, which deletion scrubs; they are not results.)
    """
    dated: list[tuple[float, Path]] = []
    for place in [*map(Path, settings.MEMLEDGER_EVALUATION_RESULTS), evaluation_results_folder()]:
        # A path the web user may not look at (shared storage: EACCES, which pathlib's
        # is_dir raises), or a file replaced between the listing and its stat, is skipped:
        # else the health page fails for every reviewer.
        try:
            for path in place.glob("*.json") if place.is_dir() else [place]:
                if path.is_file():
                    dated.append((path.stat().st_mtime, path))
        except OSError:
            logger.warning("evaluation results: cannot read %s; skipped", place, exc_info=True)
    for mtime, path in sorted(dated, key=lambda pair: pair[0], reverse=True):
        try:
            # json_loads: a file nested deeper than Python's parser goes (any other job's JSON
            # on shared storage) raised RecursionError, a 500 (stop 55's audit of eval).
            data = json_loads(path.read_text())
        except (OSError, ValueError):
            continue
        if is_evaluation_result(data):
            return data, str(path), datetime.fromtimestamp(mtime, tz=UTC)
    return None, "", None


def is_evaluation_result(data) -> bool:
    """Return whether ``data`` has the shape of an ``eval_retrieval`` result: an object with a
    ``system``, a ``baseline_vector_topk`` and a ``no_memory`` object, ``system`` holding
    numbers. Any object with a ``system`` object counted: a newer ``eval_locomo --json`` result
    (recall per category) replaced the figures with an empty table (stop 55's audit of eval)."""
    if not isinstance(data, dict):
        return False
    if not all(isinstance(data.get(key), dict) for key, _label in EVALUATION_APPROACHES):
        return False
    return any(
        isinstance(value, int | float) and not isinstance(value, bool)
        for value in data["system"].values()
    )


def evaluation_figures(data: dict | None) -> dict:
    """Return the evaluation result as a table: one row per scalar metric, one column per
    approach (memledger, the vector top-k baseline, no memory), plus the run's header."""
    if not data:
        return {}
    approaches = [
        (key, label) for key, label in EVALUATION_APPROACHES if isinstance(data.get(key), dict)
    ]
    if not approaches:
        return {}
    columns = [data[key] for key, _label in approaches]
    metrics = [
        name
        for name, value in columns[0].items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    ]
    rows = [
        (name.replace("_", " "), [column.get(name, "") for column in columns]) for name in metrics
    ]
    return {
        "dataset": data.get("dataset", ""),
        "cases": data.get("cases", ""),
        "columns": [label for _key, label in approaches],
        "rows": rows,
        "failures": _failure_count(data.get("failures")),
    }


def _failure_count(failures) -> int:
    """Return how many failed cases a result's ``failures`` holds: a list of them, or a count
    (an older or hand-written report: ``len`` of a number made the page a 500 for every
    reviewer of every tenant, stop 50's audit); anything else holds none."""
    if isinstance(failures, list):
        return len(failures)
    if isinstance(failures, int) and not isinstance(failures, bool) and failures >= 0:
        return failures
    return 0


@dataclass
class Window:
    """The days a health page covers, for one tenant: ``start`` (midnight of the first day)
    to ``end`` (midnight after the last)."""

    tenant_id: uuid.UUID
    days: list[date]
    start: datetime
    end: datetime
    now: datetime

    @property
    def index(self) -> dict[date, int]:
        return {day: position for position, day in enumerate(self.days)}

    @property
    def sql_params(self) -> dict:
        return {
            "tz": timezone.get_current_timezone_name(),
            "tenant": self.tenant_id,
            "start": self.start,
            "end": self.end,
        }


def _writes_chart(window: Window) -> Chart:
    """Writes through admission, by outcome."""
    decisions = AdmissionDecision.objects.filter(
        tenant_id=window.tenant_id, created_at__gte=window.start
    )
    outcomes = _daily_counts(
        decisions, "created_at", window.days, outcome=["accepted", "pending_approval", "rejected"]
    )
    return Chart(
        "writes",
        "Writes through admission",
        "writes",
        window.days,
        [
            Series("accepted", "accepted", outcomes["accepted"]),
            Series("pending", "sent for approval", outcomes["pending_approval"]),
            Series("rejected", "rejected", outcomes["rejected"]),
        ],
    )


def _approvals_chart(window: Window) -> Chart:
    """Reviewer decisions. Items are also closed without a reviewer: by the deletion worker
    (resolution "deleted") or by a revoke or consent withdrawal (resolution "revoked",
    "consent_withdrawn"); only approve, reject and a conflict outcome are decisions."""
    tenant_id = window.tenant_id
    reviews = ReviewItem.objects.filter(tenant_id=tenant_id, resolved_at__gte=window.start).filter(
        reviewer_decided_condition()
    )
    states = _daily_counts(
        reviews, "resolved_at", window.days, state=["approved", "rejected", "resolved"]
    )
    open_items = ReviewItem.objects.filter(
        tenant_id=tenant_id, state=ReviewItem.State.OPEN
    ).exclude(memory__status=Status.DELETED)
    return Chart(
        "approvals",
        "Reviewer decisions",
        "items",
        window.days,
        [
            Series("approved", "approved", states["approved"]),
            Series("rejected", "rejected", states["rejected"]),
            Series("resolved", "conflicts resolved", states["resolved"]),
        ],
        # As the queue counts them: a write deleted while it waited has nothing left to
        # decide, and its deletion's worker closes the item (stop 50's audit).
        note=f"{open_items.count()} open",
    )


def _deletion_latency_chart(window: Window) -> Chart:
    """Deletion latency: request to verified completion, per day and over the window, counted
    in SQL (a retention sweep opens an operation per subject a run: the rows were read one by
    one, ~3 s for 100,000 operations)."""
    index = window.index
    # A day without a completed deletion has no latency (None: no point), not one of 0 s.
    medians, slowest = [None] * len(window.days), [None] * len(window.days)
    overall = count = None
    with connection.cursor() as cursor:
        cursor.execute(_DELETION_LATENCY_SQL, window.sql_params)
        for day, median, longest, n in cursor.fetchall():
            if day is None:
                overall, count = median, n
            elif day in index:
                medians[index[day]] = round(median, 2)
                slowest[index[day]] = round(longest, 2)
    unfinished = (
        DeletionOperation.objects.filter(tenant_id=window.tenant_id)
        .exclude(status="completed")
        .aggregate(count=Count("pk"), oldest=Min("requested_at"))
    )
    # And the deletions queued for a worker, which no operation records until one makes the
    # request (``Subject.deletion_queued_at``): behind a stopped worker they were not counted.
    queued = Subject.objects.filter(
        tenant_id=window.tenant_id, deletion_queued_at__isnull=False
    ).aggregate(count=Count("pk"), oldest=Min("deletion_queued_at"))
    oldest = min(filter(None, (unfinished["oldest"], queued["oldest"])), default=None)
    lead = f"{unfinished['count'] + queued['count']} not completed"
    note, since = lead, ""
    if oldest is not None:
        # How long the oldest has waited: what shows a stopped worker, beat or broker, which
        # leave deletions pending without an error anywhere but the log.
        since = timesince(oldest, window.now)
        note += f", the oldest requested {since} ago"
    return Chart(
        "deletion_latency",
        "Deletion latency (request to verified)",
        "seconds",
        window.days,
        [Series("median", "median", medians), Series("max", "slowest", slowest)],
        summary=(
            f"median {overall:.1f} s over {count} deletions"
            if count
            else "no completed deletions in this window"
        ),
        note=note,
        note_lead=lead,
        oldest=oldest,
        since=since,
    )


def _cross_scope_chart(window: Window) -> Chart:
    """Cross-scope denials: agents' requests refused (403) and writes refused at the boundary."""
    refused = _daily_counts(
        AccessDenial.objects.filter(tenant_id=window.tenant_id, created_at__gte=window.start),
        "created_at",
        window.days,
    )[None]
    index = window.index
    admission_scope = [0] * len(window.days)
    with connection.cursor() as cursor:
        cursor.execute(_ADMISSION_SCOPE_SQL, window.sql_params | {"codes": sorted(SCOPE_CODES)})
        for day, n in cursor.fetchall():
            if day in index:
                admission_scope[index[day]] = n
    return Chart(
        "cross_scope",
        "Cross-scope denials",
        "denials",
        window.days,
        [
            Series("requests", "agent requests refused (403)", refused),
            Series("admission", "writes refused at the boundary", admission_scope),
        ],
    )


def _stale_rate_chart(window: Window) -> Chart:
    """Retrieval traces: the share of stale memories handed out."""
    served, stale = _trace_series(window.tenant_id, window.start, window.days)
    # A day without retrievals has no rate (None: no point), not one of 0 %.
    rates = [round(100 * s / n, 1) if n else None for s, n in zip(stale, served, strict=True)]
    return Chart(
        "stale_rate",
        "Stale-memory rate in retrieved packages",
        "%",
        window.days,
        [Series("stale", "older than its type's half-life", rates)],
        summary=(
            f"{sum(stale)} of {sum(served)} memories served were past their half-life"
            if sum(served)
            else "no retrievals in this window"
        ),
    )


def _corrections_chart(window: Window) -> Chart:
    """Corrections end users made in the portal (and through the API as themselves): a new
    version (``corrected``), or one kept beside a memory of higher authority than theirs, an
    administrator's, with a conflict for a reviewer (``conflict``; a person writes nothing
    else, and retrieval's conflict events are memledger's). Those went uncounted (stop 51)."""
    corrections = _daily_counts(
        MemoryEvent.objects.filter(
            tenant_id=window.tenant_id,
            action__in=[MemoryEvent.Action.CORRECTED, MemoryEvent.Action.CONFLICT],
            actor_type="user",
            created_at__gte=window.start,
        ),
        "created_at",
        window.days,
    )[None]
    return Chart(
        "corrections",
        "User corrections",
        "corrections",
        window.days,
        [Series("corrections", "corrections", corrections)],
    )


CHARTS = (
    _writes_chart,
    _approvals_chart,
    _deletion_latency_chart,
    _cross_scope_chart,
    _stale_rate_chart,
    _corrections_chart,
)


def health_overview(*, principal, days: int = 14, now: datetime | None = None) -> HealthOverview:
    """Return the health charts of the reviewer's tenant over the last ``days`` days."""
    require_reviewer(principal, message="No health page for this login.")
    now = now or timezone.now()
    day_list = _days(now, days)
    window = Window(
        tenant_id=principal.tenant_id,
        days=day_list,
        start=timezone.make_aware(datetime.combine(day_list[0], datetime.min.time())),
        end=timezone.make_aware(datetime.combine(day_list[-1] + timedelta(days=1), time.min)),
        now=now,
    )
    charts = [chart(window) for chart in CHARTS]
    for chart in charts:
        if not chart.summary:
            chart.summary = f"{int(chart.total)} in the last {days} days"

    evaluation, source, evaluation_time = evaluation_latest()
    return HealthOverview(
        charts=charts,
        evaluation=evaluation,
        evaluation_file=Path(source).name if source else "",
        evaluation_time=evaluation_time,
    )
