"""A large subject's statement through lexeme postings and a covering index, under RLS.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python \
        scripts/lexeme_postings_cost.py --memories 1000000 --tenants 10000 \
        [--min-rows 5000] [--rounds 7] [--inserts 200] [--json OUT]

A question about a design, not a feature (docs/performance.md, section 23): could a large
subject's stores read indexes instead of every eligible row, as a request reads them (under
row-level security), with the statement's exact answers? Section 22 found
that a GIN index cannot serve the full-text store of a request: under row-level security
``@@`` is not leakproof, so it is never an index condition, and the store visits every row
of the subject. Equality on text is leakproof (``texteq``), so a btree index on postings,
one row per (memory, lexeme) with the memory's tenant, subject and full-text length, can be
read by ``lexeme = ANY(the query's lexemes)`` as a request reads it, with the same policy.

For each of the benchmark's queries whose subject holds at least ``--min-rows`` rows, this
captures the arguments the pipeline passes ``fetch_candidates`` (one request through
Django's whole stack), builds the postings of those subjects as the owner (a table
``probe_lexeme_postings`` with the memory table's policy, ``ENABLE`` and ``FORCE`` row-level
security, readable by the application role; dropped at the end), and times, per round and
per query, in the tenant's transaction as a request runs:

- ``whole``: the candidate statement as built;
- ``fulltext_heap``: the full-text store alone as the planner reads it today (every row of
  the subject through the btree index, ``@@`` a filter), BM25's row count and mean length
  given;
- ``fulltext_postings``: the same store from the postings: the query's lexemes looked up in
  the index, the rows they name checked against the statement's whole ownership filter by
  primary key (only those rows are visited), df counted from the postings of the rows that
  pass; the same statistics given;
- ``stats``: what those statistics cost when read from the rows (every eligible row);
- ``whole_postings``: the candidate statement with its full-text pool taken from the
  postings instead: still one visit of every eligible row (the vector store is exact, and
  BM25's statistics are the eligible rows'), but no ``@@`` on any of them, and each pooled
  row's lexemes not tested one by one (``hits`` is the postings joined to ``elig``);
- ``visit_heap`` and ``visit_covering``: the visit the other stores share, ``elig`` without
  its full-text columns, with the vector store's ranking and BM25's row count, read from the
  heap (index-only scans off) and from a covering btree index partial on the subject, which
  holds every column the ownership filter and ``elig`` read, the embedding included (built
  as the owner, the table vacuumed so that its pages are all-visible; dropped at the end);
- ``copy_as_built`` and ``copy_indexed``: both together, on a copy of the large subjects'
  rows (``probe_memory``, in random order, with the memory table's policy and a stored
  column of each row's full-text length, which an index-only scan needs: an index's
  expression it cannot return): the statement as built, against the same statement reading
  ``elig`` from a covering index (length included) and its full-text pool from the postings.
  Only the final join reads the heap.

Checked on the first round: both full-text stores rank as the statement's does;
``whole_postings`` and ``copy_indexed`` return the rows of the statement as built on the
memory table (ids, ranks; scores to 1e-9); the covering visit counts and ranks as the heap's.
Then, ``--inserts``: what writing one memory's postings costs (rows copied, rolled back).
Prints medians (per subject size too), the plans and the structures' sizes. Changes nothing
it does not undo.
"""

# The ownership filter is the statement's own (candidates.owner_filter: constant clauses, bound
# values); only it and constant identifiers are interpolated.
# ruff: noqa: S608
import argparse
import json
import re
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_large_subject_arguments, at_least  # noqa: E402

POSTINGS = "probe_lexeme_postings"

QLEX = (
    "qlex AS MATERIALIZED (SELECT lex, quote_literal(lex)::tsquery AS q FROM "
    "(SELECT u.lexeme AS lex FROM unnest(to_tsvector('english', %(query)s)) AS u "
    "ORDER BY u.positions[1], u.lexeme LIMIT %(max_lexemes)s) AS d)"
)
SCORE = (
    "idf AS MATERIALIZED (SELECT lexeme, ln(1 + (%(n)s - df + 0.5) / (df + 0.5)) * 2.2 "
    "AS idf FROM (SELECT lexeme, count(*)::float AS df FROM hits GROUP BY lexeme) AS d) "
    "SELECT h.id::text, sum(i.idf / (1 + 1.2 * (0.25 + 0.75::float8 * h.len / %(avglen)s)))"
    " AS score FROM hits h JOIN idf i USING (lexeme) "
    "GROUP BY h.id ORDER BY score DESC, h.id LIMIT %(fts_limit)s"
)
# Today's store: the pool is every row of the subject that matches any query lexeme, ``@@``
# tested on each (a filter under row-level security), then each lexeme tested on the pool.
HEAP = (
    f"WITH {QLEX}, "
    "anyq AS MATERIALIZED (SELECT coalesce(string_agg(quote_literal(lex), ' | '), '')"
    "::tsquery AS q FROM qlex), "
    "pool AS MATERIALIZED (SELECT m.id, length(m.search_vector) AS len, m.search_vector AS hit "
    "FROM memory_core_memory m, anyq WHERE {where} AND m.memory_type = ANY(%(sem_types)s) "
    "AND m.search_vector @@ anyq.q), "
    "hits AS MATERIALIZED (SELECT p.id, x.lex AS lexeme, p.len FROM pool p "
    "JOIN qlex x ON p.hit @@ x.q), " + SCORE
)
# From the postings: the index gives (memory, lexeme, length) for the query's lexemes; the
# memories they name are checked against the ownership filter by primary key.
FROM_POSTINGS = (
    f"WITH {QLEX}, "
    "post AS MATERIALIZED (SELECT p.memory_id, p.lexeme, p.len FROM "
    f"{POSTINGS} p WHERE p.tenant_id = %(tenant_id)s AND p.subject_id = %(subject_id)s "
    "AND p.lexeme = ANY(ARRAY(SELECT lex FROM qlex))), "
    "pool AS MATERIALIZED (SELECT m.id FROM memory_core_memory m "
    "WHERE m.id IN (SELECT memory_id FROM post) AND {where} "
    "AND m.memory_type = ANY(%(sem_types)s)), "
    "hits AS MATERIALIZED (SELECT p.memory_id AS id, p.lexeme, p.len FROM post p "
    "WHERE p.memory_id IN (SELECT id FROM pool)), " + SCORE
)


# The eligible rows as ``elig`` reads them, less the full-text columns, with the vector store's
# ranking and BM25's row count.
VISIT = (
    "WITH elig AS MATERIALIZED (SELECT m.id, m.memory_type, m.memory_key, m.updated_at, "
    "m.embedding <=> %(qvec)s::vector AS dist FROM memory_core_memory m WHERE {where}) "
    "SELECT (SELECT count(*) FROM elig), ARRAY(SELECT id::text FROM elig "
    "WHERE memory_type = ANY(%(sem_types)s) ORDER BY dist, id LIMIT %(sem_limit)s)"
)
# Every column the ownership filter (without retention terms: the benchmark's tenants have no
# policy) and ``VISIT`` read, beside the index's keys (type, status).
COVERED = (
    "tenant_id, subject_id, id, agent_id, valid_from, valid_until, environment, scope_kind, "
    "scope_ref, sensitivity, memory_key, updated_at, embedding"
)
COPY = "probe_memory"


def on_copy(sql: str) -> str:
    """``sql`` reading the copy of the large subjects' rows instead of the memory table."""
    table = "memory_core_memory m"
    assert table in sql and "memory_core_memory" not in sql.replace(table, "")
    return sql.replace(table, f"{COPY} m")


def with_postings(sql: str, length: str = "length(m.search_vector)") -> str:
    """The candidate statement with its full-text pool and hits taken from the postings, and
    each row's full-text length read as ``length``."""
    hit = (
        ", length(m.search_vector) AS len, "
        "CASE WHEN m.search_vector @@ anyq.q THEN m.search_vector END AS hit "
        "FROM memory_core_memory m, anyq WHERE"
    )
    pool = re.compile(
        r"pool AS MATERIALIZED \(SELECT id, len, hit FROM elig WHERE hit IS NOT NULL"
        r"(?P<types>(?: AND memory_type = ANY\(%\(sem_types\)s\))?)\), "
        r"hits AS MATERIALIZED \(SELECT p\.id, x\.lex AS lexeme, p\.len FROM pool p "
        r"JOIN qlex x ON p\.hit @@ x\.q\)"
    )
    assert sql.count(hit) == 1 and len(pool.findall(sql)) == 1, "the statement changed shape"
    sql = sql.replace(hit, f", {length} AS len FROM memory_core_memory m WHERE")
    return pool.sub(
        lambda match: (
            "post AS MATERIALIZED (SELECT memory_id, lexeme FROM "
            f"{POSTINGS} WHERE tenant_id = %(tenant_id)s AND subject_id = %(subject_id)s "
            "AND lexeme = ANY(ARRAY(SELECT lex FROM qlex))), "
            "hits AS MATERIALIZED (SELECT e.id, p.lexeme, e.len FROM post p "
            f"JOIN elig e ON e.id = p.memory_id WHERE true{match['types']})"
        ),
        sql,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_large_subject_arguments(parser, rounds=7)
    parser.add_argument(
        "--inserts",
        type=at_least(0),
        default=200,
        help="memories of the largest subject whose postings are written again per round",
    )
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.db import connection, transaction

    from memory_core import rls
    from memory_core.benchmarks import database, setup
    from memory_core.retrieval import candidates

    large, asked = setup.large_subjects_of(parser, opts, key_name="lexeme postings cost")

    def built(arguments: dict) -> tuple[str, dict]:
        """The statement's ownership filter and parameters (limits, types, query, vector)."""
        options = {k: v for k, v in arguments.items() if k != "policy"}
        _, params, _ = candidates.build_candidate_sql(**options)
        where, _ = candidates.owner_filter(arguments["ctx"], "elig_types", arguments["now"])
        return where, params

    def statement_of(arguments: dict, shape: str = "as built") -> tuple[str, dict]:
        """The candidate statement ``as built``, or with its full-text pool from the
        ``postings``, or on the ``copy`` as built, or on the copy with both indexes
        (``indexed``)."""
        options = {k: v for k, v in arguments.items() if k != "policy"}
        sql, params, _ = candidates.build_candidate_sql(**options)
        if shape == "postings":
            sql = with_postings(sql)
        elif shape == "copy":
            sql = on_copy(sql)
        elif shape == "indexed":
            sql = on_copy(with_postings(sql, length="m.search_len"))
        return sql, params

    def whole(arguments: dict, shape: str = "as built") -> list:
        return candidates.fetch_binary(*statement_of(arguments, shape))

    def stats(where: str, params: dict) -> tuple[float, float]:
        sql = (
            "SELECT count(*)::float, greatest(avg(length(m.search_vector)), 1)::float "
            f"FROM memory_core_memory m WHERE {where} AND m.memory_type = ANY(%(sem_types)s)"
        )
        return tuple(candidates.fetch_binary(sql, params)[0])

    def store(shape: str, where: str, params: dict) -> list[str]:
        return [row[0] for row in candidates.fetch_binary(shape.format(where=where), params)]

    def index_only(on: bool) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL enable_indexonlyscan = {'on' if on else 'off'}")

    def visit(where: str, params: dict, covering: bool) -> tuple:
        index_only(covering)
        try:
            return tuple(candidates.fetch_binary(VISIT.format(where=where), params)[0])
        finally:
            index_only(True)

    def plan_of(sql: str, params: dict) -> str:
        """The scan nodes of EXPLAIN ANALYZE, with the rows each gave."""
        lines = [
            row[0]
            for row in candidates.fetch_binary(
                "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) " + sql, params
            )
        ]
        keep = ("Scan", "Index Cond", "Filter", "Rows Removed", "Heap Fetches")
        return " / ".join(
            line.strip().lstrip("-> ") for line in lines if any(k in line for k in keep)
        )

    frank = len(candidates.COLUMNS.split(", ")) + 3  # the row's full-text rank
    scopes = sorted({(str(a["ctx"].tenant_id), str(a["ctx"].subject_id)) for a in asked})
    with connection.cursor() as cursor:  # the role requests run as
        cursor.execute("SELECT current_user")
        app_role = cursor.fetchone()[0]
    owner = database.connect(connection.settings_dict["NAME"], autocommit=True)
    policy = owner.execute(
        "SELECT qual FROM pg_policies WHERE tablename = 'memory_core_memory'"
    ).fetchone()[0]
    report: dict = {"queries": len(asked), "subject_rows": sorted(q.subject_rows for q in large)}
    covering: list[str] = []
    try:
        started = time.perf_counter()
        for number, (tenant, subject) in enumerate(scopes):
            covering.append(f"probe_covering_{number}")
            owner.execute(
                f"CREATE INDEX {covering[-1]} ON memory_core_memory (memory_type, status) "
                f"INCLUDE ({COVERED}) WHERE tenant_id = '{uuid.UUID(tenant)}' "
                f"AND subject_id = '{uuid.UUID(subject)}'"
            )
        owner.execute("VACUUM (ANALYZE) memory_core_memory")
        build_copy(owner, scopes, policy, app_role)
        # covering_build_ms: the covering indexes, the table's vacuum and the copy, together
        report["covering_build_ms"] = round((time.perf_counter() - started) * 1000)
        report["covering_mb"] = round(
            sum(
                owner.execute("SELECT pg_relation_size(%s::regclass)", [name]).fetchone()[0]
                for name in covering
            )
            / 2**20,
            1,
        )
        started = time.perf_counter()
        owner.execute(
            f"CREATE TABLE {POSTINGS} (tenant_id uuid NOT NULL, subject_id uuid NOT NULL, "
            "lexeme text NOT NULL, memory_id uuid NOT NULL, len integer NOT NULL)"
        )
        owner.execute(f"ALTER TABLE {POSTINGS} ENABLE ROW LEVEL SECURITY")
        owner.execute(f"ALTER TABLE {POSTINGS} FORCE ROW LEVEL SECURITY")
        owner.execute(f"CREATE POLICY tenant_isolation ON {POSTINGS} USING ({policy})")
        owner.execute(f'GRANT SELECT ON {POSTINGS} TO "{app_role}"')
        for tenant, subject in scopes:
            owner.execute(
                f"INSERT INTO {POSTINGS} SELECT m.tenant_id, m.subject_id, u.lexeme, m.id, "
                "length(m.search_vector) FROM memory_core_memory m, unnest(m.search_vector) u "
                "WHERE m.tenant_id = %s AND m.subject_id = %s",
                [tenant, subject],
            )
        owner.execute(
            f"CREATE INDEX probe_postings_lexeme ON {POSTINGS} "
            "(tenant_id, subject_id, lexeme) INCLUDE (memory_id, len)"
        )
        owner.execute(f"VACUUM (ANALYZE) {POSTINGS}")  # all-visible: index-only reads
        report["postings_build_ms"] = round((time.perf_counter() - started) * 1000)
        report["postings"] = owner.execute(f"SELECT count(*) FROM {POSTINGS}").fetchone()[0]
        report["postings_mb"] = round(
            owner.execute(f"SELECT pg_total_relation_size('{POSTINGS}')").fetchone()[0] / 2**20, 1
        )

        samples: dict[str, list[float]] = {}
        same = dict.fromkeys(
            (
                "fulltext_heap",
                "fulltext_postings",
                "whole_postings",
                "visit_covering",
                "copy_indexed",
            ),
            0,
        )
        for round_number in range(opts.rounds):
            for arguments in asked:
                where, params = built(arguments)
                with transaction.atomic():
                    rls.tenant_set(arguments["ctx"].tenant_id)
                    rows = setup.timed(samples, "whole", whole, arguments)
                    rows_postings = setup.timed(
                        samples, "whole_postings", whole, arguments, "postings"
                    )
                    setup.timed(samples, "copy_as_built", whole, arguments, "copy")
                    rows_indexed = setup.timed(samples, "copy_indexed", whole, arguments, "indexed")
                    n, avglen = setup.timed(samples, "stats", stats, where, params)
                    given = params | {"n": n, "avglen": avglen}
                    found = {
                        label: setup.timed(samples, label, store, shape, where, given)
                        for label, shape in (
                            ("fulltext_heap", HEAP),
                            ("fulltext_postings", FROM_POSTINGS),
                        )
                    }
                    heap = setup.timed(samples, "visit_heap", visit, where, params, False)
                    covered = setup.timed(samples, "visit_covering", visit, where, params, True)
                    if round_number:
                        continue
                    same["visit_covering"] += covered == heap
                    statement = [
                        r[0]
                        for r in sorted(
                            (r for r in rows if r[frank] is not None), key=lambda r: r[frank]
                        )
                    ]
                    for label, ids in found.items():
                        same[label] += ids == statement
                    same["whole_postings"] += same_rows(rows, rows_postings, frank)
                    same["copy_indexed"] += same_rows(rows, rows_indexed, frank)
                    if "plans" not in report:
                        report["plans"] = {
                            "fulltext_heap": plan_of(HEAP.format(where=where), given),
                            "fulltext_postings": plan_of(FROM_POSTINGS.format(where=where), given),
                            "visit_covering": plan_of(VISIT.format(where=where), params),
                            "copy_as_built": plan_of(*statement_of(arguments, "copy")),
                            "copy_indexed": plan_of(*statement_of(arguments, "indexed")),
                        }
        report["same_ranks"] = same
        if opts.inserts:
            largest = max(large, key=lambda q: q.subject_rows)
            report["insert_ms"] = postings_insert_cost(
                owner, str(largest.tenant_id), str(largest.subject_id), opts.inserts, opts.rounds
            )
    finally:
        owner.execute(f"DROP TABLE IF EXISTS {POSTINGS}")
        owner.execute(f"DROP TABLE IF EXISTS {COPY}")
        for name in covering:
            owner.execute(f"DROP INDEX IF EXISTS {name}")
        owner.close()

    report["rounds"] = opts.rounds
    sizes = [q.subject_rows for q in large]  # every label: one sample a round and query
    report["ms"] = setup.medians_by_subject_size(samples, sizes)
    print(
        f"{report['queries']} queries, subjects of {report['subject_rows']} rows; "
        f"{report['postings']} postings, {report['postings_mb']} MB, "
        f"built in {report['postings_build_ms']} ms; covering indexes {report['covering_mb']} "
        f"MB, built, the table vacuumed and the copy made in {report['covering_build_ms']} ms"
    )
    setup.print_medians(report["ms"], width=18)
    print(
        "ranked as the statement's full-text store: "
        + ", ".join(f"{label} {count} of {len(asked)}" for label, count in same.items())
    )
    if "insert_ms" in report:
        print(
            "ms writing one memory's postings: "
            f"{report['insert_ms']['median']} (median; {report['insert_ms']['per_memory']} "
            "postings a memory)"
        )
    for label, plan in report.get("plans", {}).items():
        print(f"plan {label}: {plan}")
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def build_copy(owner, scopes: list[tuple[str, str]], policy: str, app_role: str) -> None:
    """The copy of the large subjects' rows, in random order (a subject's rows apart, as in
    the memory table), with each row's full-text length, the policy, the statement's btree
    index and a covering one (the length included), vacuumed."""
    owner.execute("SELECT setseed(0.44)")
    pairs = " OR ".join(
        f"(tenant_id = '{uuid.UUID(tenant)}' AND subject_id = '{uuid.UUID(subject)}')"
        for tenant, subject in scopes
    )
    # The memory table's columns, their storage and the table's options (rows up to 4 kB kept
    # whole: section 2); the full-text vector a plain column, filled from the table's.
    options = owner.execute(
        "SELECT coalesce(array_to_string(reloptions, ', '), '') FROM pg_class "
        "WHERE oid = 'memory_core_memory'::regclass"
    ).fetchone()[0]
    owner.execute(
        f"CREATE TABLE {COPY} (LIKE memory_core_memory INCLUDING STORAGE)"
        + (f" WITH ({options})" if options else "")
    )
    owner.execute(f"ALTER TABLE {COPY} ADD COLUMN search_len integer NOT NULL")
    from memory_core.benchmarks import database

    names = ", ".join(database.memory_columns(owner))
    owner.execute(
        f"INSERT INTO {COPY} ({names}, search_len) SELECT {names}, length(search_vector) "
        f"FROM memory_core_memory WHERE {pairs} ORDER BY random()"
    )
    owner.execute(f"ALTER TABLE {COPY} ADD PRIMARY KEY (id)")
    keys = "tenant_id, subject_id, memory_type, status"
    owner.execute(f"CREATE INDEX probe_memory_subject_type ON {COPY} ({keys})")
    rest = COVERED.replace("tenant_id, subject_id, ", "")
    owner.execute(
        f"CREATE INDEX probe_memory_covering ON {COPY} ({keys}) INCLUDE ({rest}, search_len)"
    )
    owner.execute(f"ALTER TABLE {COPY} ENABLE ROW LEVEL SECURITY")
    owner.execute(f"ALTER TABLE {COPY} FORCE ROW LEVEL SECURITY")
    owner.execute(f"CREATE POLICY tenant_isolation ON {COPY} USING ({policy})")
    owner.execute(f'GRANT SELECT ON {COPY} TO "{app_role}"')
    owner.execute(f"VACUUM (ANALYZE) {COPY}")


def same_rows(rows: list, others: list, frank: int) -> bool:
    """Whether two candidate statements returned the same rows: every column but the
    embedding's bytes equal, the full-text score (``frank + 1``) to 1e-9 (its sum may add the
    lexemes in another order)."""

    def key(row):
        return tuple(
            round(value, 9) if i == frank + 1 and value is not None else value
            for i, value in enumerate(row)
            if not isinstance(value, (bytes, memoryview))
        )

    return sorted(map(key, rows), key=str) == sorted(map(key, others), key=str)


def postings_insert_cost(owner, tenant: str, subject: str, count: int, rounds: int) -> dict:
    """Milliseconds writing one memory's postings (one statement a memory, as a trigger on
    its row would): ``count`` of ``subject``'s memories a round, written again in a
    transaction of the owner's that is rolled back."""
    ids = [
        row[0]
        for row in owner.execute(
            "SELECT id FROM memory_core_memory WHERE tenant_id = %s AND subject_id = %s LIMIT %s",
            [tenant, subject, count],
        ).fetchall()
    ]
    write = (
        f"INSERT INTO {POSTINGS} SELECT m.tenant_id, m.subject_id, u.lexeme, m.id, "
        "length(m.search_vector) FROM memory_core_memory m, unnest(m.search_vector) u "
        "WHERE m.id = %s"
    )
    samples: list[float] = []
    written = 0
    for _ in range(rounds):
        with owner.transaction(force_rollback=True):
            started = time.perf_counter()
            for memory_id in ids:
                written += owner.execute(write, [memory_id]).rowcount
            samples.append((time.perf_counter() - started) * 1000 / len(ids))
    return {
        "median": round(statistics.median(samples), 3),
        "all": [round(v, 3) for v in samples],
        "per_memory": round(written / (len(ids) * rounds), 1),
    }


if __name__ == "__main__":
    sys.exit(main())
