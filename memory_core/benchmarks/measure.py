"""Measurements over a benchmark corpus: query sets, percentiles, filtered recall, baselines."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from memory_core.models import Agent, Subject, Tenant
from memory_core.models.fields import BinaryVector

from .corpus import BUCKETS, TENANT_SLUG, CorpusSpec, bucket_tenants, query_texts

BENCH_AGENT = "bench-agent"


@dataclass
class BenchQuery:
    """One retrieval the benchmark asks: who (tenant, agent, subject) and what."""

    bucket: str
    tenant_id: object
    tenant_rows: int
    agent_id: object
    subject_id: object
    user_id: str
    subject_rows: int
    text: str
    vector: np.ndarray | None = None


def percentiles(samples_ms: list[float]) -> dict:
    """p50/p95/p99 (nearest-rank) and mean of ``samples_ms``, rounded to 0.01 ms."""
    if not samples_ms:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None, "n": 0}
    ordered = sorted(samples_ms)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]

    return {
        "p50_ms": round(rank(0.50), 2),
        "p95_ms": round(rank(0.95), 2),
        "p99_ms": round(rank(0.99), 2),
        "mean_ms": round(sum(ordered) / len(ordered), 2),
        "n": len(ordered),
    }


def ensure_agents(tenant_ids) -> dict:
    """One reading agent (all types, any subject) per tenant; tenant id -> Agent."""
    agents = {}
    for tenant in Tenant.objects.filter(id__in=list(tenant_ids)):
        agent, _ = Agent.objects.get_or_create(tenant=tenant, name=BENCH_AGENT)
        agents[tenant.id] = agent
    return agents


def build_queries(spec: CorpusSpec, count: int, *, seed: int) -> list[BenchQuery]:
    """``count`` queries spread evenly over the tenant-size buckets.

    In each bucket a query's subject is drawn with probability proportional to its rows (a
    random memory's subject), so big subjects, where an approximate index is tested hardest,
    get most queries.
    """
    rng = np.random.default_rng(seed + 17)
    ranks = bucket_tenants(spec)
    # A tiny corpus may give two buckets the same tenant.
    pairs = [(TENANT_SLUG.format(rank=r), label) for label, rs in ranks.items() for r in rs]
    tenants = {t.slug: t for t in Tenant.objects.filter(slug__in=[s for s, _ in pairs])}
    agents = ensure_agents([t.id for t in tenants.values()])
    texts = query_texts(count, seed)
    per_bucket = {label: [] for label in BUCKETS}
    for slug, label in sorted(pairs):
        tenant = tenants[slug]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT subject_id, count(*) FROM memory_core_memory WHERE tenant_id = %s "
                "GROUP BY subject_id",
                [tenant.id],
            )
            counts = dict(cursor.fetchall())
        external = dict(
            Subject.objects.filter(id__in=list(counts)).values_list("id", "external_id")
        )
        per_bucket[label].append((tenant, counts, external))
    queries: list[BenchQuery] = []
    labels = list(BUCKETS)
    for i in range(count):
        label = labels[i % len(labels)]
        tenant, counts, external = per_bucket[label][int(rng.integers(len(per_bucket[label])))]
        subject_ids = list(counts)
        weights = np.array([counts[s] for s in subject_ids], dtype=np.float64)
        subject_id = subject_ids[int(rng.choice(len(subject_ids), p=weights / weights.sum()))]
        queries.append(
            BenchQuery(
                bucket=label,
                tenant_id=tenant.id,
                tenant_rows=sum(counts.values()),
                agent_id=agents[tenant.id].id,
                subject_id=subject_id,
                user_id=external[subject_id],
                subject_rows=counts[subject_id],
                text=texts[i],
            )
        )
    return queries


def exact_top(query: BenchQuery, k: int, types: list[str]) -> list[str]:
    """The exact k nearest eligible rows: brute-force distances, no vector index.

    Same ownership filter as the pipeline (tenant, subject, agent shared, active, valid,
    readable types, global scope: every bench row is global and agent-less).
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        # The reference, not the measured pipeline: --statement-timeout-ms is not for it (a
        # sequential scan of a corpus not yet in memory took longer and ended the run).
        cursor.execute("SET LOCAL statement_timeout = 0")
        cursor.execute(
            "SELECT m.id FROM memory_core_memory m WHERE m.tenant_id = %s AND m.subject_id = %s "
            "AND m.agent_id IS NULL AND m.status = 'active' AND m.valid_from <= %s "
            "AND (m.valid_until IS NULL OR m.valid_until > %s) AND m.memory_type = ANY(%s) "
            "AND m.embedding IS NOT NULL "
            "ORDER BY m.embedding <=> %s::vector, m.id LIMIT %s",
            [
                query.tenant_id,
                query.subject_id,
                timezone.now(),
                timezone.now(),
                types,
                BinaryVector(query.vector),
                k,
            ],
        )
        return [str(row[0]) for row in cursor.fetchall()]


def postfilter_top(query: BenchQuery, k: int, types: list[str]) -> tuple[list[str], float]:
    """The anti-pattern: ANN top-k over every row (default HNSW settings), filter after.

    Over ``bench_ann``, the corpus's vectors with an HNSW index (the memory table has none).

    Returns the ids that survive the tenant/subject/status/type filter, and the SQL time in ms.
    """
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = off")
        cursor.execute("SET LOCAL hnsw.ef_search = 40")
        cursor.execute(
            "SELECT id, tenant_id, subject_id, agent_id, status, memory_type, valid_until "
            "FROM bench_ann ORDER BY embedding <=> %s::vector LIMIT %s",
            [BinaryVector(query.vector), k],
        )
        rows = cursor.fetchall()
    elapsed = (time.perf_counter() - started) * 1000
    now = timezone.now()
    kept = [
        str(row[0])
        for row in rows
        if row[1] == query.tenant_id
        and row[2] == query.subject_id
        and row[3] is None
        and row[4] == "active"
        and row[5] in types
        and (row[6] is None or row[6] > now)
    ]
    return kept, elapsed


def recall(found: list[str], exact: list[str], k: int) -> float:
    """Share of the exact top-min(k, eligible) found; 1.0 when nothing is eligible."""
    truth = exact[:k]
    if not truth:
        return 1.0
    return len(set(found[:k]) & set(truth)) / len(truth)


def summarize_recall(rows: list[dict]) -> dict:
    """Per-bucket mean recall@10 and the share of queries filled to min(k, eligible)."""
    by_bucket = {}
    for label in BUCKETS:
        values = [r["recall"] for r in rows if r["bucket"] == label]
        by_bucket[label] = round(float(np.mean(values)), 4) if values else None
    filled = [r["filled"] for r in rows]
    return {
        "recall_at_10": by_bucket,
        "recall_at_10_min": round(min((r["recall"] for r in rows), default=1.0), 4),
        "filled_share": round(float(np.mean(filled)), 4) if filled else None,
    }


# --- The read path's own code, called as it is (never a copy of it) ---------------------------


def bench_context(query: BenchQuery):
    """The RetrievalContext the pipeline builds for the bench agent and ``query``'s subject,
    under the default policy its tenants have (no policy version): the stores' confidence
    floor and prompt cap with it, as in every request since stop 60."""
    from memory_core.retrieval.pipeline import policy_limits
    from memory_core.retrieval.plan import ALL_TYPES
    from memory_core.retrieval.policy import RetrievalPolicy
    from memory_core.retrieval.types import RetrievalContext

    return RetrievalContext(
        tenant_id=query.tenant_id,
        agent_id=query.agent_id,
        subject_id=query.subject_id,
        user_id=query.user_id,
        read_types=tuple(ALL_TYPES),
        **policy_limits(RetrievalPolicy.from_document(None)),
    )


def pipeline_vector_top(query: BenchQuery, k: int) -> tuple[list[str], float]:
    """The pipeline's vector store as the pipeline runs it, top ``k`` by its rank.

    Runs ``memory_core.retrieval.candidates.fetch_candidates`` with the pipeline's hybrid plan
    (every store, so the vector store is the one of the shared scan the pipeline uses), in a
    transaction like the pipeline. Returns the vector store's ids and the statement's time in
    ms.
    """
    from memory_core.retrieval.candidates import fetch_candidates
    from memory_core.retrieval.plan import build_plan
    from memory_core.retrieval.policy import RetrievalPolicy
    from memory_core.retrieval.types import RetrievalMode

    ctx = bench_context(query)
    policy = RetrievalPolicy.from_document(None)
    plan = build_plan(
        mode=RetrievalMode.HYBRID, intent="", ctx=ctx, policy=policy, query=query.text
    )
    started = time.perf_counter()
    with transaction.atomic():
        candidates, _ = fetch_candidates(
            ctx=ctx,
            plan=plan,
            query=query.text,
            query_vector=query.vector,
            now=timezone.now(),
            policy=policy,
        )
    elapsed = (time.perf_counter() - started) * 1000
    ranked = sorted(
        (c for c in candidates if c.vector_rank is not None), key=lambda c: c.vector_rank
    )
    return [c.id for c in ranked[:k]], elapsed


def semantic_types() -> list[str]:
    """The memory types the pipeline's hybrid plan searches semantically."""
    from memory_core.retrieval.plan import ALL_TYPES

    return [t for t in ALL_TYPES if t != "task_state"]


def stage_timings(result) -> dict[str, float]:
    """Per-stage milliseconds the pipeline recorded for one retrieval (its trace's timings).

    Reads ``result.timings`` / ``result.stage_ms`` or the trace's ``stages`` document: any
    number under a key ending in ``_ms`` (or inside a ``latency_ms``/``timings_ms`` mapping).
    """
    found: dict[str, float] = {}
    for attr in ("timings", "stage_ms", "timings_ms"):
        value = getattr(result, attr, None)
        if isinstance(value, dict):
            _collect(value, "", found)
    trace = getattr(result, "trace", None)
    stages = getattr(trace, "stages", None) if trace is not None else None
    if stages is None and isinstance(trace, dict):
        stages = trace.get("stages", trace)
    if isinstance(stages, dict):
        _collect(stages, "", found)
    return found


def _collect(doc: dict, prefix: str, found: dict) -> None:
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            inner = key in ("latency_ms", "timings_ms", "timings", "stage_ms")
            _collect(value, "" if inner else f"{name}.", found)
            if inner:
                for k2, v2 in value.items():
                    if isinstance(v2, int | float) and not isinstance(v2, bool):
                        found[k2 if k2.endswith("_ms") else f"{k2}_ms"] = float(v2)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if key.endswith("_ms"):
                found[name] = float(value)


def pipeline_store_ms(query: BenchQuery) -> dict[str, float]:
    """SQL time of the pipeline's candidate statement, and of the shared scan inside it.

    ``sql_statement_ms``: the statement the pipeline runs for a hybrid plan (every store),
    sent as the pipeline sends it (``candidates.fetch_binary``: its savepoint in the same
    round trip, binary rows), the transaction's BEGIN and COMMIT not counted.
    ``sql_shared_scan_ms``: its ``elig`` CTE alone (reading the subject's eligible rows with
    their distances, lengths and lexeme matches), so the stores' own ranking and scoring cost
    is the difference.
    """
    from memory_core.retrieval.candidates import build_candidate_sql, fetch_binary
    from memory_core.retrieval.plan import build_plan
    from memory_core.retrieval.policy import RetrievalPolicy
    from memory_core.retrieval.types import RetrievalMode

    ctx = bench_context(query)
    policy = RetrievalPolicy.from_document(None)
    plan = build_plan(
        mode=RetrievalMode.HYBRID, intent="", ctx=ctx, policy=policy, query=query.text
    )
    sql, params, _ = build_candidate_sql(
        ctx=ctx, plan=plan, query=query.text, query_vector=query.vector, now=timezone.now()
    )
    # The statement's CTEs up to and including elig (always followed by sem or stats).
    cut = min(i for i in (sql.find(", sem AS ("), sql.find(", stats AS ")) if i > 0)
    scan = sql[:cut] + " SELECT count(*), count(hit) FROM elig"  # noqa: S608 (constants)
    timings = {}
    for name, statement in (("statement", sql), ("shared_scan", scan)):
        with transaction.atomic():
            started = time.perf_counter()
            fetch_binary(statement, params)
            timings[f"sql_{name}_ms"] = (time.perf_counter() - started) * 1000
    return timings


def embedder_report(embedder) -> dict:
    """Which model made the query (and written) vectors: name and precision."""
    return {
        "model_name": embedder.model_name,
        "precision": getattr(embedder, "precision", None),
        "batch_size": getattr(embedder, "batch_size", None),
    }
