"""What a whole-subject deletion request costs, by the subject's number of memories.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python \
        scripts/deletion_request_cost.py [--memories 5000,20000] [--json OUT]

For each size, in one transaction that is rolled back at the end (nothing stays, no journal
line is written, no task is sent): a scratch tenant and subject, the subject's memories
(copies of one memory with a vector, each with its own content and key, inserted by one
statement), then ``deletion_request`` for the whole subject, timed as a request runs it: the
locks, tombstones, events, the operation and its steps, the scrubbing UPDATE, and the checks
its commit runs (the deferred chain trigger and foreign keys, run by ``SET CONSTRAINTS ALL
IMMEDIATE``; the setup's own checks run before the clock starts). Not timed: the commit's WAL
flush and the journal append after it (one fsynced line each). Also prints the five slowest
statements. docs/operations.md ("Scaling") quotes it: the request grows with the subject, and
a large enough one outlasts a web worker's timeout.
"""

import argparse
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class _Rollback(Exception):
    pass


_COMMIT_CHECKS = "SET CONSTRAINTS ALL IMMEDIATE"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", default="5000,20000", help="comma-separated sizes")
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()
    try:
        sizes = [int(part) for part in opts.memories.split(",")]
    except ValueError:
        parser.error("--memories is a comma-separated list of whole numbers")
    if any(size < 1 for size in sizes):
        parser.error("--memories must be at least 1")

    import django

    django.setup()
    results = []
    for size in sizes:
        result = measure(size)
        results.append(result)
        print(
            f"{size:>8} memories: request {result['request_s']:.2f} s"
            f" (SQL {result['sql_s']:.2f} s, of it the commit's checks"
            f" {result['commit_checks_s']:.2f} s), {result['per_memory_ms']} ms a memory",
            flush=True,
        )
        for row in result["slowest_statements"]:
            print(f"           {row['ms']:>8.1f} ms  {row['sql']}")
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps({"sizes": results}, indent=2) + "\n")
    return 0


def measure(size: int) -> dict:
    """Time one whole-subject deletion request of ``size`` memories; leave nothing behind."""
    from django.db import connection, transaction

    from memory_core.deletion.services import deletion_request
    from memory_core.models import (
        Authority,
        Memory,
        MemoryClass,
        MemoryType,
        SourceType,
        Subject,
        Tenant,
    )
    from memory_core.principals import SystemPrincipal
    from memory_core.rls import tenant_atomic

    copied = [
        field.column
        for field in Memory._meta.concrete_fields
        if not field.generated
        and field.column not in ("id", "content", "memory_key", "content_hash")
    ]
    statements = []

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            statements.append((time.perf_counter() - started, " ".join(sql.split())[:120]))

    try:
        with transaction.atomic():
            tag = uuid.uuid4().hex[:10]
            tenant = Tenant.objects.create(name=f"deletion cost {tag}", slug=f"dc-{tag}")
            with tenant_atomic(tenant.id):
                subject = Subject.objects.create(tenant=tenant, external_id=f"user-{tag}")
                seed = Memory.objects.create(
                    tenant=tenant, subject=subject, memory_class=MemoryClass.PREFERENCE,
                    memory_type=MemoryType.USER_PREFERENCE, content="User fact 0.",
                    content_hash="0", source_type=SourceType.USER_INPUT,
                    authority=Authority.EXPLICIT_USER, embedding=[0.1] * 384,
                    embedding_model="scratch",
                )  # fmt: skip
                with connection.cursor() as cursor:
                    cursor.execute(
                        "INSERT INTO memory_core_memory"  # noqa: S608 (field names)
                        f" (id, content, memory_key, content_hash, {', '.join(copied)})"
                        " SELECT gen_random_uuid(), 'User fact ' || i || '.', 'key.' || i,"
                        f" md5(i::text), {', '.join(copied)}"
                        " FROM memory_core_memory, generate_series(1, %s) AS i WHERE id = %s",
                        [size - 1, seed.id],
                    )
                    # The inserts' own deferred checks run now, not in the timed commit.
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                    cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            started = time.perf_counter()
            with connection.execute_wrapper(timed), tenant_atomic(tenant.id):
                operation = deletion_request(
                    principal=SystemPrincipal(tenant_id=tenant.id),
                    subject_id=subject.id,
                    time_limited=False,  # the cost, not MEMLEDGER_DELETION_REQUEST_BUDGET
                )
                with connection.cursor() as cursor:
                    # What the commit would run: the deferred chain trigger and foreign keys.
                    cursor.execute(_COMMIT_CHECKS)
            elapsed = time.perf_counter() - started
            deleted = len(operation.memory_ids)
            raise _Rollback
    except _Rollback:
        pass
    sql = sum(seconds for seconds, _ in statements)
    checks = sum(seconds for seconds, text in statements if text == _COMMIT_CHECKS)
    return {
        "memories": size,
        "deleted": deleted,
        "request_s": round(elapsed, 3),
        "sql_s": round(sql, 3),
        "per_memory_ms": round(elapsed * 1000 / size, 3),
        "commit_checks_s": round(checks, 3),
        "slowest_statements": [
            {"ms": round(seconds * 1000, 1), "sql": text}
            for seconds, text in sorted(statements, reverse=True)[:5]
        ],
    }


if __name__ == "__main__":
    sys.exit(main())
