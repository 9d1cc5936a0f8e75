"""What the deleted-tenant trigger (migration 0011) costs a retrieval request, A/B in one process.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/tenant_trigger_cost.py \
        --memories 1000000 --tenants 10000 [--bucket 0.1%] [--rounds 10] [--json OUT]

Sends the benchmark's queries (built by ``bench_retrieval`` beforehand) to ``POST
/api/v1/retrieve`` through Django's test client, one at a time, in rounds; before each round
the trigger ``tenant_not_deleted`` is enabled or disabled on every table that has it (an owner
connection, ``ALTER TABLE ... ENABLE/DISABLE TRIGGER``), alternating, so the machine's drift
falls on both states alike. Prints the median and p95 of the whole request and of the trace
insert (the one insert a retrieval makes) for each state, in milliseconds. The trigger is left
enabled.
"""

import argparse
import functools
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_corpus_arguments, at_least  # noqa: E402

TABLES = [
    "memory_core_memory",
    "memory_core_subject",
    "memory_core_admissiondecision",
    "memory_core_reviewitem",
    "memory_core_retrievaltrace",
    "memory_core_export",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--queries", type=at_least(1), default=90)
    parser.add_argument("--bucket", choices=("0.1%", "1%", "10%"), default="0.1%")
    parser.add_argument("--rounds", type=at_least(2), default=10)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test import Client

    from memory_core.benchmarks import database, setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.models import RetrievalTrace

    settings.DEBUG = False
    settings.MEMLEDGER_RATE_LIMIT = None
    spec = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    try:
        setup.open_corpus(spec)
    except BenchDatabaseError as exc:
        parser.error(str(exc))
    queries, keys = setup.queries_with_keys(spec, opts.queries, key_name="trigger cost")
    queries = [q for q in queries if q.bucket == opts.bucket]
    owner = database.connect(connection.settings_dict["NAME"], autocommit=True)

    def trigger(enabled: bool) -> None:
        for table in TABLES:
            state = "ENABLE" if enabled else "DISABLE"
            owner.execute(f"ALTER TABLE {table} {state} TRIGGER tenant_not_deleted")

    insert_ms: list[float] = []
    manager = type(RetrievalTrace.objects)
    create = manager.create

    @functools.wraps(create)
    def timed_create(*args, **kwargs):
        started = time.perf_counter()
        try:
            return create(*args, **kwargs)
        finally:
            insert_ms.append((time.perf_counter() - started) * 1000)

    manager.create = timed_create
    client = Client()

    def send(query) -> float:
        body = {"query": query.text, "context": {"user_id": query.user_id}}
        started = time.perf_counter()
        response = client.post(
            "/api/v1/retrieve",
            json.dumps(body),
            content_type="application/json",
            HTTP_HOST="127.0.0.1",
            HTTP_AUTHORIZATION=f"Bearer {keys[query.agent_id]}",
        )
        if response.status_code != 200:
            raise SystemExit(f"retrieve answered {response.status_code}: {response.content[:300]}")
        return (time.perf_counter() - started) * 1000

    for query in queries[:20]:
        send(query)  # warm
    samples = {state: {"request": [], "trace_insert": []} for state in ("on", "off")}
    try:
        for round_number in range(opts.rounds):
            state = "on" if round_number % 2 == 0 else "off"
            trigger(state == "on")
            for query in queries:
                insert_ms.clear()
                samples[state]["request"].append(send(query))
                samples[state]["trace_insert"].extend(insert_ms)
    finally:
        trigger(True)
    report = {}
    for state, parts in samples.items():
        report[state] = {}
        for name, values in parts.items():
            values.sort()
            report[state][name] = {
                "p50_ms": round(statistics.median(values), 3),
                "p95_ms": round(values[int(len(values) * 0.95)], 3),
                "n": len(values),
            }
            print(
                f"trigger {state:3s} {name:13s} p50 {report[state][name]['p50_ms']:7.3f}"
                f"  p95 {report[state][name]['p95_ms']:7.3f}"
            )
    if opts.json_out:
        document = {"bucket": opts.bucket, "rounds": opts.rounds, "states": report}
        Path(opts.json_out).write_text(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
