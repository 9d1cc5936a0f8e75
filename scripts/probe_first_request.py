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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, required=True)
    parser.add_argument("--tenants", type=int, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--wait", type=float, default=20.0, help="seconds before the first one")
    parser.add_argument("--requests", type=int, default=3)
    opts = parser.parse_args()

    import django

    django.setup()
    from memory_core import rls
    from memory_core.benchmarks import database, measure
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.load import run_load, start_gunicorn
    from memory_core.models import Agent
    from memory_core.services.api_keys import api_key_create

    spec = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    name = database.bench_database_name(
        memories=spec.memories, tenants=spec.tenants, seed=spec.seed
    )
    database.use_database(name)
    with rls.platform_scope("probe_first_request"):
        queries = measure.build_queries(spec, opts.requests, seed=spec.seed)
        agents = Agent.objects.filter(id__in={q.agent_id for q in queries})
        keys = {
            agent.id: api_key_create(agent=agent, name="first-request probe")[1] for agent in agents
        }
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
