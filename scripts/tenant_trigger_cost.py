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
    from django.db import connection

    from memory_core.benchmarks import database, setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.models import RetrievalTrace

    spec = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    try:
        queries, send = setup.retrieval_requests(
            spec, opts.queries, key_name="trigger cost", bucket=opts.bucket
        )
    except BenchDatabaseError as exc:
        parser.error(str(exc))
    owner = database.connect(connection.settings_dict["NAME"], autocommit=True)
    # Every table the trigger of migration 0011 is on.
    tables = [
        row[0]
        for row in owner.execute(
            "SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname = 'tenant_not_deleted'"
        )
    ]

    def trigger(enabled: bool) -> None:
        for table in tables:
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
