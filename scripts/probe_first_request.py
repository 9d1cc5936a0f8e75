"""How long a gunicorn worker's first retrievals take, once the worker has had time to start.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/probe_first_request.py \
        --memories 1000000 --tenants 10000 [--wait 20] [--requests 3]

Starts one gunicorn worker (production settings, as ``bench_retrieval`` does) against the
benchmark corpus of that size (built by ``bench_retrieval`` beforehand), waits, then sends a
few retrievals one at a time and prints their latencies as JSON. With ``MEMLEDGER_WARM_UP``
on (the default) the worker loaded the model before it took a request; run with
``MEMLEDGER_WARM_UP=false`` to see what the first request costs without (docs/performance.md,
section 14).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_corpus_arguments, at_least, positive_seconds  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument(
        "--wait", type=positive_seconds, default=20.0, help="seconds before the first retrieval"
    )
    parser.add_argument("--requests", type=at_least(1), default=3)
    opts = parser.parse_args()

    import django

    django.setup()
    from memory_core.benchmarks import setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.benchmarks.load import run_load, start_gunicorn

    spec = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    try:
        name = setup.open_corpus(spec)
    except BenchDatabaseError as exc:
        parser.error(str(exc))
    queries, keys = setup.queries_with_keys(spec, opts.requests, key_name="first-request probe")
    bodies = [
        (
            keys[q.agent_id],
            {"query": f"{q.text} (probe {time.time()})", "context": {"user_id": q.user_id}},
        )
        for q in queries
    ]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memledger-probe-") as logs:
        server = start_gunicorn(
            database=name, workers=1, threads=1, torch_threads=1, log_dir=Path(logs)
        )
        try:
            listening_s = time.monotonic() - started
            time.sleep(opts.wait)
            latencies = []
            for body in bodies:
                result = run_load(port=server.port, requests=[body], concurrency=1, max_seconds=120)
                if result.errors:
                    raise SystemExit(f"retrieval failed: {result.errors} {result.error_samples}")
                latencies.append(round(result.latencies_ms[0], 1))
        finally:
            server.stop()
    print(json.dumps({"database": name, "listening_s": round(listening_s, 1),
                      "wait_s": opts.wait, "latencies_ms": latencies}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
