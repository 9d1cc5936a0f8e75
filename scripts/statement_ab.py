"""The candidate statement of this checkout against another checkout's, alternated per query.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/statement_ab.py \
        --memories 1000000 --tenants 10000 --other /tmp/wt-start [--bucket 10%] \
        [--rounds 6] [--repo-and-task] [--json OUT]

``--other``: a checkout (a ``git worktree``) whose ``memory_core/retrieval/candidates.py``
builds the other statement; everything else (the pipeline, the request through Django's test
client, the database) is this checkout's. Each of the benchmark's queries (built by
``bench_retrieval`` beforehand) is sent twice per round, once with each statement, the order
swapped every round, and the statement's own time is taken around ``fetch_binary``. Prints
the median, p95 and mean of each in milliseconds: the ratio of the two holds on a machine
whose speed moves within minutes (docs/performance-history.md, "Stop 29").
``--repo-and-task``: every request's context names a repository and a task (the benchmark's
name neither), so the statement takes the rows bound to them first (docs/performance.md,
section 19).
"""

import argparse
import importlib.util
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
    parser.add_argument("--other", required=True, help="a checkout of the other statement")
    parser.add_argument("--queries", type=at_least(1), default=90)
    parser.add_argument("--bucket", choices=("0.1%", "1%", "10%"), help="only this bucket")
    parser.add_argument("--rounds", type=at_least(1), default=6)
    parser.add_argument(
        "--repo-and-task", action="store_true", help="name a repository and a task in each request"
    )
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()
    other_file = Path(opts.other) / "memory_core" / "retrieval" / "candidates.py"
    if not other_file.is_file():
        parser.error(f"{other_file} does not exist: --other names a checkout")

    import django

    django.setup()
    from memory_core.benchmarks import setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.retrieval import candidates

    spec = importlib.util.spec_from_file_location(
        "memory_core.retrieval.candidates_other", other_file
    )
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    corpus = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    try:
        queries, send_one = setup.retrieval_requests(
            corpus, opts.queries, key_name="statement a/b", bucket=opts.bucket,
            context={"repository_id": "atlas-api", "task_id": "task-1"}
            if opts.repo_and_task else None,
        )  # fmt: skip
    except BenchDatabaseError as exc:
        parser.error(str(exc))

    versions = {
        "this": (candidates.build_candidate_sql, candidates.row_to_candidate),
        "other": (other.build_candidate_sql, other.row_to_candidate),
    }
    fetch = candidates.fetch_binary
    spent: list[float] = []

    def timed_fetch(sql, params):
        started = time.perf_counter()
        try:
            return fetch(sql, params)
        finally:
            spent.append((time.perf_counter() - started) * 1000)

    candidates.fetch_binary = timed_fetch

    def send(query, version: str) -> float:
        candidates.build_candidate_sql, candidates.row_to_candidate = versions[version]
        spent.clear()
        send_one(query)
        return sum(spent)

    for query in queries[:20]:  # warm both
        send(query, "this")
        send(query, "other")
    samples: dict[str, list[float]] = defaultdict(list)
    for round_number in range(opts.rounds):
        order = ("this", "other") if round_number % 2 == 0 else ("other", "this")
        for query in queries:
            for version in order:
                samples[version].append(send(query, version))
    report = {}
    for version, values in samples.items():
        values.sort()
        report[version] = {
            "p50_ms": round(statistics.median(values), 2),
            "p95_ms": round(values[int(len(values) * 0.95)], 2),
            "mean_ms": round(statistics.mean(values), 2),
            "n": len(values),
        }
        figures = report[version]
        print(
            f"{version:6s} p50 {figures['p50_ms']:7.2f}  p95 {figures['p95_ms']:7.2f}  "
            f"mean {figures['mean_ms']:7.2f}  n {figures['n']}"
        )
    if opts.json_out:
        document = {
            "bucket": opts.bucket,
            "other": str(opts.other),
            "repo_and_task": opts.repo_and_task,
            "statement": report,
        }
        Path(opts.json_out).write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
