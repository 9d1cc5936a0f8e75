"""Retrieval benchmark at scale: latency (in-process and HTTP), per-stage cost, filtered recall.

    python manage.py bench_retrieval --memories 1000000 --tenants 10000 --concurrency 4 \
        --queries 300 --json perf.json

The corpus lives in its own database ``memledger_bench_<N>_<T>_s<seed>`` on the same server
(created and migrated here, reused when it already holds the same corpus); the development
database and the test databases are never touched. See docs/performance.md.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import OperationalError, connection

from memory_core.benchmarks import database, measure
from memory_core.benchmarks.args import (
    PG_INT_MAX,
    add_corpus_arguments,
    at_least,
    positive_seconds,
)
from memory_core.benchmarks.corpus import BUCKETS, CorpusSpec
from memory_core.benchmarks.setup import measure_as_production, prepare_corpus, use_torch_threads
from memory_core.embeddings import get_embedder
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.rls import platform_command, tenant_atomic

SERVER_SETTINGS = (
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "maintenance_work_mem",
    "random_page_cost",
    "max_connections",
    "jit",
    "max_parallel_workers_per_gather",
)


class Command(BaseCommand):
    help = (
        "Build (or reuse) a synthetic corpus in its own database memledger_bench_<N>_<T>_s<seed> "
        "and print one JSON report of retrieval latency, stage costs and filtered recall."
    )

    def add_arguments(self, parser):
        add_corpus_arguments(parser)
        parser.add_argument("--concurrency", type=at_least(1), default=4)
        parser.add_argument(
            "--queries", type=at_least(1), default=300, help="queries per measurement"
        )
        parser.add_argument(
            "--sample", type=at_least(1), default=2000, help="texts embedded for real"
        )
        parser.add_argument("--json", dest="json_out", default="")
        parser.add_argument("--rebuild", action="store_true", help="rebuild the corpus")
        parser.add_argument("--build-only", action="store_true", help="only build the corpus")
        parser.add_argument("--no-http", action="store_true", help="skip the gunicorn part")
        parser.add_argument("--workers", type=at_least(1), default=2, help="gunicorn workers")
        parser.add_argument(
            "--threads", type=at_least(1), default=1, help="gunicorn threads per worker"
        )
        parser.add_argument(
            "--torch-threads",
            type=at_least(0),
            default=1,
            help="torch threads per web worker (0: the configured value)",
        )
        parser.add_argument(
            "--http-seconds",
            type=positive_seconds,
            default=60.0,
            help="time bound of each HTTP run",
        )
        parser.add_argument(
            "--statement-timeout-ms",
            type=at_least(0, PG_INT_MAX),
            default=10_000,
            help="statement_timeout for the measured pipeline, in-process and in gunicorn "
            "(0 = none); a timed-out retrieval counts at its full cost (in-process) or as an "
            "error (HTTP)",
        )

    @platform_command
    def handle(self, *args, **opts):
        if opts["tenants"] > opts["memories"]:
            raise CommandError("--tenants must not exceed --memories (every tenant holds a row)")
        try:
            # Before anything is created: a size the database's name cannot hold ended in a
            # BenchDatabaseError traceback (stop 56's audit of the benchmarks).
            database.bench_database_name(
                memories=opts["memories"], tenants=opts["tenants"], seed=opts["seed"]
            )
        except database.BenchDatabaseError as exc:
            raise CommandError(str(exc)) from exc
        target = check_output_path(opts["json_out"])  # before the run, not after it
        spec = CorpusSpec(
            memories=opts["memories"],
            tenants=opts["tenants"],
            seed=opts["seed"],
            sample=opts["sample"],
        )
        use_torch_threads(opts["torch_threads"])
        measure_as_production()
        corpus = prepare_corpus(spec, rebuild=opts["rebuild"], log=self._log)
        if opts["build_only"]:
            self.stdout.write(json.dumps(corpus, indent=2))
            return
        if opts["statement_timeout_ms"]:
            # After the build (HNSW takes minutes); Django reconnects with this option.
            connection.close()
            options = connection.settings_dict.setdefault("OPTIONS", {})
            options["options"] = f"-c statement_timeout={opts['statement_timeout_ms']}"
        report = self.run(spec, corpus, opts)
        text = json.dumps(report, indent=2, default=str)
        self.stdout.write(text)
        write_output(self, target, text + "\n")

    # ------------------------------------------------------------------------------------------

    def run(self, spec: CorpusSpec, corpus: dict, opts: dict) -> dict:
        count = opts["queries"]
        queries = measure.build_queries(spec, count, seed=spec.seed)
        embedder = get_embedder()
        embedder.embed(["warm up the model"])
        types = measure.semantic_types()

        # 1. One query embedding at a time, as a request does.
        embed_ms = []
        for query in queries:
            started = time.perf_counter()
            query.vector = np.asarray(embedder.embed([query.text])[0], dtype=np.float32)
            embed_ms.append((time.perf_counter() - started) * 1000)
        self._log(f"embedding only: {measure.percentiles(embed_ms)}")

        # 2. Recall@10 after filters: the pipeline's vector store and the post-filter baseline,
        #    both against brute-force distances under the same filter.
        recall_rows, baseline_rows = [], []
        vector_ms, baseline_ms = [], []
        for query in queries:
            exact = measure.exact_top(query, 10, types)
            found, elapsed = measure.pipeline_vector_top(query, 10)
            vector_ms.append(elapsed)
            recall_rows.append(
                {
                    "bucket": query.bucket,
                    "recall": measure.recall(found, exact, 10),
                    "filled": len(found[:10]) >= len(exact[:10]),
                }
            )
            kept, elapsed = measure.postfilter_top(query, 10, types)
            baseline_ms.append(elapsed)
            baseline_rows.append(
                {
                    "bucket": query.bucket,
                    "recall": measure.recall(kept, exact, 10),
                    "filled": len(kept) >= len(exact[:10]),
                }
            )
        recall = measure.summarize_recall(recall_rows)
        baseline = measure.summarize_recall(baseline_rows)
        self._log(f"recall: {recall}; baseline: {baseline}")

        # 3. The full pipeline in-process (query embedding included).
        in_process, stages = self.in_process(queries)
        self._log(f"in-process: {in_process}")

        report = {
            "memories": spec.memories,
            "tenants": spec.tenants,
            "queries": len(queries),
            "database": corpus["database"],
            "corpus": {
                "reused": corpus["reused"],
                "vectors": corpus["stats"].get("embedding"),
                "build_seconds": corpus["stats"].get("seconds"),
                "subjects": corpus["stats"].get("subjects"),
                "table_mb": corpus["stats"].get("table_mb"),
                # The post-filter baseline's index (bench_ann); the memory table has none.
                "baseline_hnsw_mb": corpus["stats"].get("hnsw_mb"),
                "baseline_hnsw": {"m": spec.hnsw_m, "ef_construction": spec.hnsw_ef_construction},
                "buckets": self.bucket_sizes(queries),
            },
            "embedder": measure.embedder_report(embedder),
            "embedding_only": measure.percentiles(embed_ms),
            "in_process": in_process,
            "stages": stages,
            "candidate_sql_ms": measure.percentiles(vector_ms),
            "recall_at_10": recall["recall_at_10"],
            "recall_at_10_min": recall["recall_at_10_min"],
            "filled_share": recall["filled_share"],
            "baseline_postfilter": {
                "recall_at_10": baseline["recall_at_10"],
                "recall_at_10_min": baseline["recall_at_10_min"],
                "filled_share": baseline["filled_share"],
                "sql_ms": measure.percentiles(baseline_ms),
            },
            "machine": self.machine(),
        }
        if not opts["no_http"]:
            report.update(self.over_http(corpus["database"], queries, opts))
            http = report["http"]
            emb95 = report["embedding_only"]["p95_ms"]
            if http.get("p95_ms") and emb95:
                # At C clients (queueing on the cores included) and at one client (the cost of
                # one retrieval).
                report["http_p95_over_embedding_p95"] = round(http["p95_ms"] / emb95, 2)
                single = report.get("http_single", {}).get("p95_ms")
                if single:
                    report["http_single_p95_over_embedding_p95"] = round(single / emb95, 2)
                # The same, against the embedding as a request pays it: the pipeline's own
                # embed_query stage. The loop above embeds back to back, so the model's
                # weights stay in the CPU cache; inside a request other work has evicted them.
                in_request = stages.get("embed_query_ms", {}).get("p95_ms")
                if single and in_request:
                    report["embedding_in_request"] = stages["embed_query_ms"]
                    report["http_single_p95_over_request_embedding_p95"] = round(
                        single / in_request, 2
                    )
        return report

    def in_process(self, queries) -> tuple[dict, dict]:
        """Run the real pipeline for every query; return latency and per-stage percentiles."""
        try:
            from memory_core.retrieval.pipeline import retrieve
        except ImportError:
            return {"available": False}, {}
        from memory_core.models import Agent
        from memory_core.principals import AgentPrincipal
        from memory_core.retrieval.types import RetrievalRequest

        principals = {
            a.id: AgentPrincipal.from_agent(a)
            for a in Agent.objects.filter(id__in={q.agent_id for q in queries})
        }
        latencies, stage_samples, by_bucket = [], {}, {}
        for query in queries[:3]:  # warm the connection, caches and lazy imports
            try:
                with tenant_atomic(query.tenant_id):  # as a request: the tenant set (RLS)
                    retrieve(
                        principal=principals[query.agent_id],
                        request=RetrievalRequest(query=query.text + " warm", user_id=query.user_id),
                    )
            except OperationalError:
                pass
        # A vector statement past the timeout degrades (the stores without it answer): counted
        # apart, as its latency is a degraded answer's; a request whose statements both run
        # past it fails, counted at its full cost.
        timeouts = {"pipeline": 0, "degraded": 0, "stores": 0}
        for query in queries:
            started = time.perf_counter()
            try:
                with tenant_atomic(query.tenant_id):  # as a request: the tenant set (RLS)
                    result = retrieve(
                        principal=principals[query.agent_id],
                        request=RetrievalRequest(query=query.text, user_id=query.user_id),
                    )
            except OperationalError:  # --statement-timeout-ms hit: counted at its full cost
                timeouts["pipeline"] += 1
                result = None
            if result is not None and result.degraded:
                timeouts["degraded"] += 1
            elapsed = (time.perf_counter() - started) * 1000
            latencies.append(elapsed)
            by_bucket.setdefault(query.bucket, []).append(elapsed)
            for name, value in measure.stage_timings(result).items():
                stage_samples.setdefault(name, []).append(value)
        # SQL: the candidate statement and its shared scan, each run alone.
        for query in queries:
            try:
                timings = measure.pipeline_store_ms(query)
            except OperationalError:
                timeouts["stores"] += 1
                continue
            for name, value in timings.items():
                stage_samples.setdefault(name, []).append(value)
        stages = {name: measure.percentiles(values) for name, values in stage_samples.items()}
        summary = measure.percentiles(latencies)
        summary["debug"] = settings.DEBUG  # False: measured as a deployed process runs
        summary["statement_timeouts"] = timeouts
        summary["by_bucket"] = {
            label: measure.percentiles(values) for label, values in by_bucket.items()
        }
        return summary, stages

    def over_http(self, database: str, queries, opts) -> dict:
        """Start gunicorn against the bench database and load it with 1 and C clients."""
        from memory_core.benchmarks.load import run_load, start_gunicorn
        from memory_core.models import Agent
        from memory_core.services.api_keys import api_key_create

        keys = {}
        for agent in Agent.objects.filter(id__in={q.agent_id for q in queries}):
            keys[agent.id] = api_key_create(agent=agent, name="bench")[1]
        bodies = [
            (keys[q.agent_id], {"query": q.text, "context": {"user_id": q.user_id}})
            for q in queries
        ]
        server = start_gunicorn(
            database=database,
            workers=opts["workers"],
            threads=opts["threads"],
            torch_threads=opts["torch_threads"],
            statement_timeout_ms=opts["statement_timeout_ms"],
            log_dir=Path(settings.DATA_DIR) / "bench",
        )
        try:
            # Warm every worker (model load, first connection) outside the measurement.
            warm = [(k, {**b, "query": b["query"] + " warm"}) for k, b in bodies[:20]]
            warm_result = run_load(
                port=server.port,
                requests=warm,
                concurrency=max(2, opts["workers"] * opts["threads"]),
                max_seconds=120,
            )
            if not warm_result.latencies_ms:
                raise CommandError(
                    f"no successful HTTP retrieval while warming up: {warm_result.errors} "
                    f"{warm_result.error_samples}; see {server.log_path}"
                )
            single = run_load(
                port=server.port,
                requests=bodies,
                concurrency=1,
                max_seconds=opts["http_seconds"],
            )
            concurrent = run_load(
                port=server.port,
                requests=bodies,
                concurrency=opts["concurrency"],
                max_seconds=opts["http_seconds"],
            )
            rss = server.worker_rss_mb()
        finally:
            server.stop()
        return {
            "http_single": {
                **self.http_figures(single, queries),
                "rps": single.rps,
                "concurrency": 1,
                "errors": single.errors,
            },
            "http": {
                **self.http_figures(concurrent, queries),
                "rps": concurrent.rps,
                "concurrency": opts["concurrency"],
                "errors": concurrent.errors,
                "error_samples": concurrent.error_samples,
            },
            "server": {
                "gunicorn_workers": opts["workers"],
                "threads_per_worker": opts["threads"],
                "torch_threads_per_worker": opts["torch_threads"],
                "settings": "config.settings.production (DEBUG off), rate limit off",
                "statement_timeout_ms": opts["statement_timeout_ms"],
            },
            "worker_rss_mb": max(rss) if rss else None,
            "worker_rss_mb_all": rss,
        }

    @staticmethod
    def http_figures(result, queries) -> dict:
        """Percentiles of ``result``'s answered requests, by tenant-size bucket too, and the
        slowest five with the size of the subject they read: which requests set the p95."""
        by_bucket: dict[str, list[float]] = {}
        timed = []
        for index, elapsed in zip(result.answered, result.latencies_ms, strict=True):
            query = queries[index]
            by_bucket.setdefault(query.bucket, []).append(elapsed)
            timed.append((elapsed, query))
        timed.sort(key=lambda pair: pair[0], reverse=True)
        return {
            **measure.percentiles(result.latencies_ms),
            "by_bucket": {
                label: measure.percentiles(by_bucket[label])
                for label in BUCKETS
                if label in by_bucket
            },
            "slowest": [
                {
                    "ms": round(elapsed, 2),
                    "bucket": query.bucket,
                    "subject_rows": query.subject_rows,
                }
                for elapsed, query in timed[:5]
            ],
        }

    @staticmethod
    def bucket_sizes(queries) -> dict:
        sizes = {}
        for label in BUCKETS:
            picked = [q for q in queries if q.bucket == label]
            if picked:
                sizes[label] = {
                    "tenant_rows": sorted({q.tenant_rows for q in picked}),
                    "subject_rows_p50": int(np.median([q.subject_rows for q in picked])),
                    "subject_rows_max": max(q.subject_rows for q in picked),
                    "queries": len(picked),
                }
        return sizes

    @staticmethod
    def machine() -> dict:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT name, setting, unit FROM pg_settings WHERE name = ANY(%s)",
                [list(SERVER_SETTINGS)],
            )
            pg = {name: f"{setting}{' ' + unit if unit else ''}" for name, setting, unit in cursor}
            cursor.execute(
                "SELECT version(), extversion FROM pg_extension, version() WHERE extname = 'vector'"
            )
            version, pgvector = cursor.fetchone()
        mem_kb = 0
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
        return {
            "nproc": os.cpu_count(),
            "ram_gb": round(mem_kb / 2**20, 1),
            "load_avg_1m": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
            "postgres": version.split(" on ")[0],
            "pgvector": pgvector,
            "postgres_settings": pg,
        }

    def _log(self, message: str) -> None:
        self.stderr.write(str(message))
