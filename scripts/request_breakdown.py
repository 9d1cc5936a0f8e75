"""Where a retrieval request's time goes, part by part, through Django's whole request stack.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/request_breakdown.py \
        --memories 1000000 --tenants 10000 [--bucket 0.1%] [--rounds 3] [--json OUT]

Sends the benchmark's queries (built by ``bench_retrieval`` beforehand) to ``POST
/api/v1/retrieve`` through Django's test client (every middleware, DRF, the request's
transaction; DEBUG and the per-key rate limit off, as ``bench_retrieval``'s gunicorn runs),
in-process, one at a time, and times the parts that the pipeline's own trace does not: the API
key lookup, the transaction's tenant setting and commit, the trace insert and the response's
rendering, beside the pipeline's candidate statement, query embedding and budget. Each part
is timed by wrapping the function that does it; the parts overlap nothing but their callers.
Prints the median and p95 of each part in milliseconds (docs/performance.md, section 15).
"""

import argparse
import functools
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_corpus_arguments, at_least  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--queries", type=at_least(1), default=90)
    parser.add_argument("--bucket", choices=("0.1%", "1%", "10%"), help="only this bucket")
    parser.add_argument("--rounds", type=at_least(1), default=3)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.db.backends.postgresql.base import DatabaseWrapper

    import api.authentication
    import api.retrieval
    from memory_core.benchmarks import setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.models import RetrievalTrace
    from memory_core.retrieval import budget, candidates, pipeline

    spec = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    try:
        queries, send_one = setup.retrieval_requests(
            spec, opts.queries, key_name="request breakdown", bucket=opts.bucket
        )
    except BenchDatabaseError as exc:
        parser.error(str(exc))

    parts: dict[str, float] = {}

    def timed(name, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                parts[name] = parts.get(name, 0.0) + (time.perf_counter() - started) * 1000

        return wrapper

    # Each name is rebound where its caller looks it up.
    api.authentication.api_key_resolve = timed("api_key", api.authentication.api_key_resolve)
    api.authentication.request_tenant_set = timed(
        "tenant_set", api.authentication.request_tenant_set
    )
    api.retrieval.retrieve = timed("pipeline", pipeline.retrieve)
    pipeline.lookup_subject_and_policy = timed(
        "subject_and_policy", pipeline.lookup_subject_and_policy
    )
    pipeline._embed_query = timed("embed_query", pipeline._embed_query)
    candidates.fetch_binary = timed("candidate_statement", candidates.fetch_binary)
    budget.select_within_budget = timed("budget", budget.select_within_budget)
    manager = type(RetrievalTrace.objects)
    manager.create = timed("trace_insert", manager.create)
    DatabaseWrapper._commit = timed("commit", DatabaseWrapper._commit)
    output = api.retrieval.RetrieveOutput
    output.data = property(timed("render", output.data.fget))

    def send(query) -> dict[str, float]:
        parts.clear()
        parts["request"] = send_one(query)
        return dict(parts)

    for query in queries[:20]:
        send(query)  # warm
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(opts.rounds):
        for query in queries:
            for name, ms in send(query).items():
                samples[name].append(ms)
    report = {}
    for name, values in sorted(samples.items(), key=lambda kv: -statistics.median(kv[1])):
        values.sort()
        report[name] = {
            "p50_ms": round(statistics.median(values), 2),
            "p95_ms": round(values[int(len(values) * 0.95)], 2),
            "n": len(values),
        }
        print(f"{name:22s} p50 {report[name]['p50_ms']:7.2f}  p95 {report[name]['p95_ms']:7.2f}")
    if opts.json_out:
        document = {"bucket": opts.bucket, "parts": report}
        Path(opts.json_out).write_text(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
