"""The candidate statement with and without the retention terms, alternated per query.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/retention_terms_ab.py \
        --memories 1000000 --tenants 10000 [--bucket 10%] [--rounds 4] [--json OUT]

Retrieval leaves out what the tenant's retention no longer allows: one term per limited class
in every store's WHERE (``candidates.retention_filter``). The benchmark's tenants have no
policy, so ``bench_retrieval`` measures the statement without them. This script builds each
of the bucket's queries (``bench_retrieval``'s, on its corpus) three ways: without the terms
(``none``), with the terms at cutoffs a century back, which remove nothing (``far``: their
cost alone), and with the default policy's (``default``: fewer rows eligible). Each round
sends every query once per variant, the order reversed every other round, and times
``fetch_binary``. It also writes the plan of the largest subject's statement without and with
the default terms (``EXPLAIN (ANALYZE, BUFFERS, TIMING OFF)``) into the JSON. Read only.
"""

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_corpus_arguments, at_least  # noqa: E402

CENTURY_DAYS = 36_500


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--queries", type=at_least(1), default=90)
    parser.add_argument("--bucket", choices=("0.1%", "1%", "10%"), default="10%")
    parser.add_argument("--rounds", type=at_least(1), default=4)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.db import connection, transaction
    from django.utils import timezone

    from memory_core import rls
    from memory_core.benchmarks import measure, setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.embeddings import get_embedder
    from memory_core.policy_check import retention_cutoffs
    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.retrieval import candidates
    from memory_core.retrieval.plan import build_plan
    from memory_core.retrieval.policy import RetrievalPolicy
    from memory_core.retrieval.types import RetrievalMode

    corpus = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    setup.measure_as_production()
    try:
        setup.open_corpus(corpus)
    except BenchDatabaseError as exc:
        parser.error(str(exc))
    with rls.platform_scope("retention terms a/b"):
        queries = [
            query
            for query in measure.build_queries(corpus, opts.queries, seed=corpus.seed)
            if query.bucket == opts.bucket
        ]
    embedder = get_embedder()
    vectors = [embedder.embed([query.text])[0] for query in queries]
    policy = RetrievalPolicy.from_document(None)
    far = {
        "working_hours": CENTURY_DAYS * 24,
        "episodic_days": CENTURY_DAYS,
        "inferred_days": CENTURY_DAYS,
    }
    variants = {"none": None, "far": far, "default": DEFAULT_POLICY["retention"]}

    def statement(query, vector, variant):
        now = timezone.now()
        ctx = measure.bench_context(query)
        if variants[variant] is not None:
            ctx = replace(ctx, retention_cutoffs=tuple(retention_cutoffs(variants[variant], now)))
        plan = build_plan(
            mode=RetrievalMode.HYBRID, intent="", ctx=ctx, policy=policy, query=query.text
        )
        sql, params, _ = candidates.build_candidate_sql(
            ctx=ctx, plan=plan, query=query.text, query_vector=vector, now=now
        )
        return sql, params

    samples = {variant: [] for variant in variants}
    rows = {variant: [] for variant in variants}
    plans = {}
    with rls.platform_scope("retention terms a/b"), transaction.atomic():
        largest = max(range(len(queries)), key=lambda i: queries[i].subject_rows)
        for variant in ("none", "default"):
            sql, params = statement(queries[largest], vectors[largest], variant)
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) " + sql, params)
                plans[variant] = [line for (line,) in cursor.fetchall()]
        for query, vector in list(zip(queries, vectors, strict=True))[:10]:  # warm the cache
            for variant in variants:
                candidates.fetch_binary(*statement(query, vector, variant))
        for number in range(opts.rounds):
            order = list(variants) if number % 2 == 0 else list(reversed(variants))
            for query, vector in zip(queries, vectors, strict=True):
                for variant in order:
                    sql, params = statement(query, vector, variant)
                    started = time.perf_counter()
                    fetched = candidates.fetch_binary(sql, params)
                    samples[variant].append((time.perf_counter() - started) * 1000)
                    if number == 0:
                        rows[variant].append(len(fetched))

    report = {
        "memories": opts.memories,
        "tenants": opts.tenants,
        "bucket": opts.bucket,
        "queries": len(queries),
        "rounds": opts.rounds,
        "largest_subject_rows": queries[largest].subject_rows,
        "statement_ms": {
            variant: {
                "p50_ms": round(statistics.median(spent), 2),
                "p95_ms": round(sorted(spent)[int(len(spent) * 0.95)], 2),
                "mean_ms": round(statistics.mean(spent), 2),
                "n": len(spent),
                "candidate_rows_mean": round(statistics.mean(rows[variant]), 1),
            }
            for variant, spent in samples.items()
        },
        "plans": plans,
    }
    for variant, figures in report["statement_ms"].items():
        print(f"{variant:8s} {figures}")
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
