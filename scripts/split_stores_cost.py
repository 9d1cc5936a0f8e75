"""The candidate statement whole, against its stores split over two connections at once.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/split_stores_cost.py \
        --memories 1000000 --tenants 10000 [--min-rows 5000] [--rounds 5] [--json OUT]

A question about a design, not a feature (docs/performance.md, section 17): would a large
subject's retrieval be faster if the full-text store ran on a second connection while the
vector store ran on the request's? The second core is idle with one client. For each of the
benchmark's queries whose subject holds at least ``--min-rows`` rows, this captures the
arguments the pipeline passes ``fetch_candidates`` (one request through Django's whole
stack), then times, per round and per query, in the tenant's transaction as a request runs:
the whole statement (``single``), the statement without the full-text store (``vector``),
without the vector store (``fulltext``), and the two at once (``split``: the full-text one
in a thread with its own connection and tenant setting, the vector one on the request's).
Prints the median and the largest of each in milliseconds. Read only.
"""

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_large_subject_arguments  # noqa: E402

VARIANTS = ("single", "vector", "fulltext", "split")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_large_subject_arguments(parser, rounds=5)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.db import connection, transaction

    from memory_core import rls
    from memory_core.benchmarks import setup
    from memory_core.retrieval import candidates

    large, asked = setup.large_subjects_of(parser, opts, key_name="split stores cost")

    def run(arguments: dict, **change) -> list:
        options = {k: v for k, v in arguments.items() if k != "policy"} | change
        sql, params, _ = candidates.build_candidate_sql(**options)
        return candidates.fetch_binary(sql, params)

    def fulltext_alone(arguments: dict) -> list:  # on the thread's own connection
        with transaction.atomic():
            rls.tenant_set(arguments["ctx"].tenant_id)
            return run(arguments, query_vector=None, use_vector=False)

    helper = ThreadPoolExecutor(max_workers=1)
    samples: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    try:
        for _ in range(opts.rounds):
            for arguments in asked:
                with transaction.atomic():
                    rls.tenant_set(arguments["ctx"].tenant_id)
                    for variant in VARIANTS:
                        started = time.perf_counter()
                        if variant == "single":
                            run(arguments)
                        elif variant == "vector":
                            run(arguments, use_fulltext=False)
                        elif variant == "fulltext":
                            run(arguments, query_vector=None, use_vector=False)
                        else:
                            other = helper.submit(fulltext_alone, arguments)
                            run(arguments, use_fulltext=False)
                            other.result()
                        samples[variant].append((time.perf_counter() - started) * 1000)
    finally:
        helper.submit(lambda: connection.close()).result()  # the thread's own connection
        helper.shutdown()
    report = {
        "queries": len(asked),
        "subject_rows": sorted(q.subject_rows for q in large),
        "rounds": opts.rounds,
        "ms": {
            variant: {
                "median": round(statistics.median(values), 2),
                "max": round(max(values), 2),
                "n": len(values),
            }
            for variant, values in samples.items()
        },
    }
    for variant, figures in report["ms"].items():
        print(f"{variant:9s} median {figures['median']:7.2f}  max {figures['max']:7.2f}")
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
