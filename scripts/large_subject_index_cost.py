"""A large subject's stores through indexes of its own, against the statement as built.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python \
        scripts/large_subject_index_cost.py --memories 1000000 --tenants 10000 \
        [--min-rows 5000] [--rounds 5] [--ef-search 40 100] [--per subject|tenant] \
        [--inserts 200] [--subject-statistics] [--json OUT]

A question about a design, not a feature (docs/performance.md, section 22): a large
subject's retrieval is its visit of every eligible row (sections 14, 17, 21). Would indexes
kept for it alone, an HNSW index on the embedding and a GIN index on the full-text vector,
each partial on its tenant and subject (``--per tenant``: on its tenant; the global ones
starved on a 1.4 % filter, section 1), let its stores visit only the rows they rank?

For each of the benchmark's queries whose subject holds at least ``--min-rows`` rows, this
captures the arguments the pipeline passes ``fetch_candidates`` (one request through
Django's whole stack), builds the partial indexes (as the owner; dropped at the end),
and times, per round and per query, in the tenant's transaction as a request runs:

- ``whole``: the candidate statement as built (every store over one visit of every row);
- ``ann_vector_ef*``: the vector store alone, ``ORDER BY embedding <=>`` under the same
  ownership filter with ``hnsw.iterative_scan = relaxed_order`` at each ``--ef-search``, and
  its recall@10 against the exact store's top 10 (the statement's own ``vector_rank``);
- ``gin_fulltext``: the full-text store alone over the rows matching a query lexeme, with
  BM25's row count and mean length given (as a store of per-subject statistics would give
  them), as the planner chooses to read them; checked to rank as the statement's store does;
- ``stats``: what those statistics cost when read from the rows (every eligible row again);
- ``structured`` and ``ann_structured_ef40``: the structured store alone as the statement
  orders it, and ordered by distance alone with the HNSW settings (the plans say which index
  the planner took for each);
- ``gin_fulltext_steered`` (``--per subject``): the same store naming the subject as text,
  as a third index does, a GIN index partial on ``subject_id::text``, which no btree index
  serves. The planner reads that index, but under row-level security without ``@@`` as its
  condition: ``@@`` is not leakproof, so the policy's test comes first and ``@@`` is a filter
  after it (section 13 found the same), and the index hands over every row of the subject;
- ``gin_fulltext_forced``: the full-text store through the GIN index, in a transaction of
  the owner's (a superuser here: no row-level security) that drops the table's other indexes
  and is rolled back: what the index would give a role that row-level security let use it;

then, ``--inserts``: what an insert into the largest subject costs without and with its HNSW
and GIN indexes (rows copied, rolled back). Prints medians (per subject size too) and the
largest of each in milliseconds, and the plan of each store. Changes nothing it does not
undo. ``PROBE_PLANS=1`` prints the plans whole, ``PROBE_ANALYZE=1`` runs them (``EXPLAIN
ANALYZE``).
"""

# The ownership filter is the statement's own (candidates.owner_filter: constant clauses, bound
# values); only it and constant identifiers are interpolated.
# ruff: noqa: S608
import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_large_subject_arguments, at_least  # noqa: E402

FULLTEXT = (
    "WITH qlex AS MATERIALIZED (SELECT lex, quote_literal(lex)::tsquery AS q FROM "
    "(SELECT u.lexeme AS lex FROM unnest(to_tsvector('english', %(query)s)) AS u "
    "ORDER BY u.positions[1], u.lexeme LIMIT %(max_lexemes)s) AS d), "
    "anyq AS MATERIALIZED (SELECT coalesce(string_agg(quote_literal(lex), ' | '), '')"
    "::tsquery AS q FROM qlex), "
    "pool AS MATERIALIZED (SELECT m.id, length(m.search_vector) AS len, m.search_vector AS hit "
    "FROM memory_core_memory m WHERE {where} AND m.search_vector @@ %(anyq)s::tsquery{types}), "
    "hits AS MATERIALIZED (SELECT p.id, x.lex AS lexeme, p.len FROM pool p "
    "JOIN qlex x ON p.hit @@ x.q), "
    "idf AS MATERIALIZED (SELECT lexeme, ln(1 + (%(n)s - df + 0.5) / (df + 0.5)) * 2.2 "
    "AS idf FROM (SELECT lexeme, count(*)::float AS df FROM hits GROUP BY lexeme) AS d) "
    "SELECT h.id::text, sum(i.idf / (1 + 1.2 * (0.25 + 0.75::float8 * h.len / %(avglen)s)))"
    " AS score FROM hits h JOIN idf i USING (lexeme) "
    "GROUP BY h.id ORDER BY score DESC, h.id LIMIT %(fts_limit)s"
)


# Index scans off for ``gin_fulltext``, a first try at having the GIN index read: the planner
# then reads the btree index as a bitmap (it expects a few hundred rows of any subject).
FULLTEXT_SETTINGS = {"enable_indexscan": "off"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_large_subject_arguments(parser, rounds=5)
    parser.add_argument("--ef-search", type=at_least(1), nargs="+", default=[40, 100])
    parser.add_argument(
        "--per",
        choices=("subject", "tenant"),
        default="subject",
        help="what each partial index holds: one large subject's rows, or its whole tenant's",
    )
    parser.add_argument(
        "--inserts",
        type=at_least(0),
        default=200,
        help="rows copied into the largest subject per round, without and with its indexes",
    )
    parser.add_argument(
        "--subject-statistics",
        action="store_true",
        help="also extended statistics on (tenant_id, subject_id), dropped at the end",
    )
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.db import connection, transaction

    from memory_core import rls
    from memory_core.benchmarks import database, setup
    from memory_core.retrieval import candidates

    large, asked = setup.large_subjects_of(parser, opts, key_name="large subject index cost")

    def parts(arguments: dict) -> dict:
        """The statement's ownership filter and parameters (its limits, types, vector)."""
        options = {k: v for k, v in arguments.items() if k != "policy"}
        _, params, _ = candidates.build_candidate_sql(**options)
        where, _ = candidates.owner_filter(arguments["ctx"], "elig_types", arguments["now"])
        return {"where": where, "params": params}

    def whole(arguments: dict) -> list:
        options = {k: v for k, v in arguments.items() if k != "policy"}
        sql, params, _ = candidates.build_candidate_sql(**options)
        return candidates.fetch_binary(sql, params)

    @contextlib.contextmanager
    def local(settings: dict):
        """The planner's ``settings`` for the statements in the block (SET LOCAL)."""
        with connection.cursor() as cursor:
            for name, value in settings.items():
                cursor.execute(f"SET LOCAL {name} = {value}")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                for name in settings:
                    cursor.execute(f"SET LOCAL {name} TO DEFAULT")

    def vector_sql(built: dict, types: str = "sem_types", limit: str = "sem_limit") -> str:
        return (
            f"SELECT m.id::text FROM memory_core_memory m WHERE {built['where']} "
            f"AND m.memory_type = ANY(%({types})s) "
            f"ORDER BY m.embedding <=> %(qvec)s::vector LIMIT %({limit})s"
        )

    def ann_vector(built: dict, ef: int, *store) -> list[str]:
        with local({"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": int(ef)}):
            rows = candidates.fetch_binary(vector_sql(built, *store), built["params"])
        return [row[0] for row in rows]

    def fulltext_sql(built: dict) -> str:
        return FULLTEXT.format(
            where=built["where"], types=" AND m.memory_type = ANY(%(sem_types)s)"
        )

    def gin_fulltext(built: dict, n: float, avglen: float) -> list[tuple]:
        params = built["params"] | {"n": n, "avglen": avglen, "anyq": any_lexeme(built)}
        with local(FULLTEXT_SETTINGS):
            return candidates.fetch_binary(fulltext_sql(built), params)

    def steered(built: dict) -> dict:
        """The filter naming the subject as text, as the ftext index's predicate does."""
        subject = "m.subject_id = %(subject_id)s"
        assert subject in built["where"]
        return {
            "where": built["where"].replace(subject, "m.subject_id::text = %(subject_text)s"),
            "params": built["params"] | {"subject_text": str(built["params"]["subject_id"])},
        }

    def steered_fulltext(built: dict, n: float, avglen: float) -> list[tuple]:
        built = steered(built)
        params = built["params"] | {"n": n, "avglen": avglen, "anyq": any_lexeme(built)}
        return candidates.fetch_binary(fulltext_sql(built), params)

    def any_lexeme(built: dict) -> str:
        """The query's OR of lexemes, read first: a constant the planner can cost the GIN
        index by (its own CTE's value it cannot)."""
        sql = FULLTEXT.split(", pool AS")[0] + " SELECT q::text FROM anyq"
        return candidates.fetch_binary(sql, built["params"])[0][0]

    def stats_sql(built: dict) -> str:
        return (
            "SELECT count(*)::float, greatest(avg(length(m.search_vector)), 1)::float "
            f"FROM memory_core_memory m WHERE {built['where']} "
            "AND m.memory_type = ANY(%(sem_types)s)"
        )

    def stats(built: dict) -> tuple[float, float]:
        return tuple(candidates.fetch_binary(stats_sql(built), built["params"])[0])

    def structured_sql(built: dict) -> str:
        return (
            f"SELECT m.id::text FROM memory_core_memory m WHERE {built['where']} "
            "AND m.memory_type = ANY(%(st_types)s) "
            "ORDER BY m.embedding <=> %(qvec)s::vector NULLS LAST, m.updated_at DESC, m.id "
            "LIMIT %(limit_all)s"
        )

    def structured(built: dict) -> list:
        return candidates.fetch_binary(structured_sql(built), built["params"])

    def plan_of(sql: str, params: dict, settings: dict | None = None) -> str:
        """How the planner reads the rows: the scan nodes of EXPLAIN on the memory table."""
        with local(settings or {}):
            analyze = os.environ.get("PROBE_ANALYZE")  # and PROBE_PLANS=1 prints the plans
            explain = "EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN "
            lines = [row[0] for row in candidates.fetch_binary(explain + sql, params)]
        if os.environ.get("PROBE_PLANS"):
            print("\n".join(lines))
        scans = [line.strip().lstrip("-> ").split("  (cost")[0] for line in lines]
        return " / ".join(line for line in scans if "Scan" in line and "CTE" not in line)

    # The statement's row: COLUMNS, the cosine, the embedding, then the vector and full-text ranks.
    vrank = len(candidates.COLUMNS.split(", ")) + 2
    frank = vrank + 1
    scopes = sorted({(str(a["ctx"].tenant_id), str(a["ctx"].subject_id)) for a in asked})
    owner = database.connect(connection.settings_dict["NAME"], autocommit=True)
    created: list[str] = []
    created_statistics = False
    report: dict = {"queries": len(asked), "subject_rows": sorted(q.subject_rows for q in large)}
    report["per"] = opts.per
    try:
        report["index_build_ms"] = {}
        for tenant, subject in scopes if opts.per == "subject" else {(t, "") for t, _ in scopes}:
            tag = (subject or tenant).replace("-", "")[:16]
            predicate = f"tenant_id = '{tenant}'" + (
                f" AND subject_id = '{subject}'" if subject else ""
            )
            # ftext: the GIN index again, on the subject as text, which only the steered
            # statement names (no btree index serves it: the planner has no other way in).
            kinds = [
                ("hnsw", "hnsw (embedding vector_cosine_ops)", predicate),
                ("gin", "gin (search_vector)", predicate),
            ]
            if subject:
                as_text = f"tenant_id = '{tenant}' AND subject_id::text = '{subject}'"
                kinds.append(("ftext", "gin (search_vector)", as_text))
            for kind, using, where in kinds:
                index = f"probe_{kind}_{tag}"
                started = time.perf_counter()
                owner.execute(
                    f"CREATE INDEX {index} ON memory_core_memory USING {using} WHERE {where}"
                )
                created.append(index)
                report["index_build_ms"][index] = round((time.perf_counter() - started) * 1000)
        # A subject's rows are all its tenant's: without this the planner multiplies the two
        # filters' selectivities and expects a few hundred rows of a 13.6k-row subject.
        if opts.subject_statistics:
            owner.execute(
                "CREATE STATISTICS probe_subject_tenant (dependencies, mcv) "
                "ON tenant_id, subject_id FROM memory_core_memory"
            )
            created_statistics = True
        owner.execute("ANALYZE memory_core_memory")
        report["tenant_rows"] = [
            owner.execute(
                "SELECT count(*) FROM memory_core_memory WHERE tenant_id = %s", [tenant]
            ).fetchone()[0]
            for tenant in sorted({t for t, _ in scopes})
        ]

        samples: dict[str, list[float]] = {}
        recall: dict[str, list[float]] = {}
        report["plans"] = {}
        report["fulltext_same_ranks"] = 0
        statements: list[list[str]] = []  # each query's full-text ids, as the statement ranks
        for round_number in range(opts.rounds):
            for arguments in asked:
                built = parts(arguments)
                with transaction.atomic():
                    rls.tenant_set(arguments["ctx"].tenant_id)

                    rows = setup.timed(samples, "whole", whole, arguments)
                    n, avglen = setup.timed(samples, "stats", stats, built)
                    found = setup.timed(samples, "gin_fulltext", gin_fulltext, built, n, avglen)
                    if opts.per == "subject":
                        found_steered = setup.timed(
                            samples, "gin_fulltext_steered", steered_fulltext, built, n, avglen
                        )
                    exact_structured = setup.timed(samples, "structured", structured, built)
                    ann_structured = setup.timed(
                        samples,
                        "ann_structured_ef40",
                        ann_vector,
                        built,
                        40,
                        "st_types",
                        "limit_all",
                    )
                    ann = {
                        ef: setup.timed(samples, f"ann_vector_ef{ef}", ann_vector, built, ef)
                        for ef in opts.ef_search
                    }
                    if round_number:
                        continue
                    exact = [
                        r[0]
                        for r in sorted(
                            (r for r in rows if r[vrank] is not None), key=lambda r: r[vrank]
                        )
                    ]
                    same = {r[0] for r in exact_structured} == set(ann_structured)
                    report["structured_same_ids"] = report.get("structured_same_ids", 0) + same
                    for ef, ids in ann.items():
                        truth = exact[:10]
                        recall.setdefault(f"ef{ef}", []).append(
                            len(set(ids[:10]) & set(truth)) / len(truth) if truth else 1.0
                        )
                    statement = [
                        r[0]
                        for r in sorted(
                            (r for r in rows if r[frank] is not None), key=lambda r: r[frank]
                        )
                    ]
                    report["fulltext_same_ranks"] += [r[0] for r in found] == statement
                    if opts.per == "subject":
                        report["steered_same_ranks"] = report.get("steered_same_ranks", 0) + (
                            [r[0] for r in found_steered] == statement
                        )
                    statements.append(statement)
                    if not report["plans"]:
                        params = built["params"]
                        report["plans"] = {
                            "vector": plan_of(
                                vector_sql(built), params, {"hnsw.iterative_scan": "relaxed_order"}
                            ),
                            "fulltext": plan_of(
                                fulltext_sql(built),
                                params | {"n": n, "avglen": avglen, "anyq": any_lexeme(built)},
                                FULLTEXT_SETTINGS,
                            ),
                            "fulltext_steered": plan_of(
                                fulltext_sql(steered(built)),
                                steered(built)["params"]
                                | {"n": n, "avglen": avglen, "anyq": any_lexeme(built)},
                            ),
                            "stats": plan_of(stats_sql(built), params),
                            "structured": plan_of(structured_sql(built), params),
                            "ann_structured": plan_of(
                                vector_sql(built, "st_types", "limit_all"),
                                params,
                                {"hnsw.iterative_scan": "relaxed_order"},
                            ),
                        }
        report["forced_same_ranks"] = forced_fulltext(
            owner, asked, parts, fulltext_sql, stats, any_lexeme, samples, opts, statements
        )
        report["owner_is_superuser"] = owner.execute("SHOW is_superuser").fetchone()[0]
        if opts.inserts:
            largest = max(large, key=lambda q: q.subject_rows)
            report["insert_ms"] = insert_cost(
                owner, str(largest.tenant_id), str(largest.subject_id), opts.inserts, opts.rounds
            )
    finally:
        for index in created:
            owner.execute(f"DROP INDEX IF EXISTS {index}")
        if created_statistics:
            owner.execute("DROP STATISTICS IF EXISTS probe_subject_tenant")
            owner.execute("ANALYZE memory_core_memory")
        owner.close()

    report["rounds"] = opts.rounds
    # Every label has one sample a round and query, in the order of ``asked``.
    sizes = [q.subject_rows for q in large]
    report["ms"] = setup.medians_by_subject_size(samples, sizes)
    report["recall_at_10"] = {
        label: {"mean": round(statistics.fmean(values), 4), "min": round(min(values), 4)}
        for label, values in recall.items()
    }
    print(
        f"{report['queries']} queries, subjects of {report['subject_rows']} rows, "
        f"tenants of {report['tenant_rows']} rows"
    )
    print(f"indexes built in {report['index_build_ms']} ms")
    setup.print_medians(report["ms"])
    for label, figures in report["recall_at_10"].items():
        print(f"recall@10 {label}: mean {figures['mean']:.4f}, min {figures['min']:.4f}")
    print(
        "the structured store ordered by distance alone, the same ids: "
        f"{report.get('structured_same_ids', 0)} of {len(asked)}"
    )
    print(
        f"full-text ranks as the statement's: {report['fulltext_same_ranks']} of {len(asked)}, "
        f"forced through the GIN index {report['forced_same_ranks']} of {len(asked)}, "
        f"steered to it {report.get('steered_same_ranks', '-')} of {len(asked)} "
        f"(the owner a superuser: {report['owner_is_superuser']})"
    )
    if "insert_ms" in report:
        print(
            f"ms an insert into the largest subject, without / with its two indexes: "
            f"{report['insert_ms']['without']['median']} / {report['insert_ms']['with']['median']}"
        )
    for store, plan in report["plans"].items():
        print(f"plan {store}: {plan}")
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def forced_fulltext(
    owner, asked, parts, fulltext_sql, stats, any_lexeme, samples, opts, expected
) -> int:
    """The full-text store through the subject's GIN index whatever the planner would choose.

    The planner expects a large subject to hold a tenth of its rows (it multiplies the tenant's
    and the subject's selectivities) and reads it by the btree index. Here the table's other
    indexes are dropped in a transaction of the owner's that is rolled back, and the store
    runs there as ``gin_fulltext_forced`` (the owner's connection, acting for the tenant).
    Returns how many of the queries it ranked as ``expected`` (the statement's ids, in order).
    """
    from django.db import connection, transaction

    from memory_core import rls
    from memory_core.benchmarks import setup

    droppable = [
        row[0]
        for row in owner.execute(
            "SELECT i.indexrelid::regclass::text FROM pg_index i "
            "WHERE i.indrelid = 'memory_core_memory'::regclass "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) "
            "AND i.indexrelid::regclass::text NOT LIKE 'probe_gin_%'"
        ).fetchall()
    ]
    same = 0
    for round_number in range(opts.rounds):
        for arguments, ids in zip(asked, expected, strict=True):
            built = parts(arguments)
            sql = fulltext_sql(built)
            with transaction.atomic():
                rls.tenant_set(arguments["ctx"].tenant_id)
                n, avglen = stats(built)
                anyq = any_lexeme(built)
            connection.close()  # holds no lock on the table while the owner drops its indexes
            params = {k: v for k, v in built["params"].items() if f"%({k})s" in fulltext_sql(built)}
            params |= {"n": n, "avglen": avglen, "anyq": anyq}
            with owner.transaction(force_rollback=True):
                for index in droppable:
                    owner.execute(f"DROP INDEX {index}")
                owner.execute(
                    "SELECT set_config('memledger.tenant_id', %s, true)",
                    [str(arguments["ctx"].tenant_id)],
                )
                rows = setup.timed(
                    samples,
                    "gin_fulltext_forced",
                    lambda sql=sql, params=params: owner.execute(sql, params).fetchall(),
                )
            same += round_number == 0 and [str(row[0]) for row in rows] == ids
    return same


def insert_cost(owner, tenant: str, subject: str, count: int, rounds: int) -> dict:
    """Milliseconds an insert into ``subject`` takes without and with its two partial indexes.

    Each round and variant copies ``count`` of the subject's rows (new ids) one statement
    each, in a transaction of the owner's that is rolled back (the indexes too).
    """
    from memory_core.benchmarks import database

    names = ", ".join(database.memory_columns(owner, stored=True))
    copy = (
        f"INSERT INTO memory_core_memory (id, {names}) SELECT gen_random_uuid(), {names} "
        "FROM memory_core_memory WHERE id = %s"
    )
    predicate = f"tenant_id = '{tenant}' AND subject_id = '{subject}'"
    samples: dict[str, list[float]] = {"without": [], "with": []}
    for _ in range(rounds):
        for variant in samples:
            with owner.transaction(force_rollback=True):
                if variant == "with":
                    for kind, using in (
                        ("hnsw", "hnsw (embedding vector_cosine_ops)"),
                        ("gin", "gin (search_vector)"),
                    ):
                        owner.execute(
                            f"CREATE INDEX probe_insert_{kind} ON memory_core_memory "
                            f"USING {using} WHERE {predicate}"
                        )
                ids = owner.execute(
                    "SELECT id FROM memory_core_memory WHERE tenant_id = %s AND subject_id = %s "
                    "AND supersedes_id IS NULL LIMIT %s",
                    [tenant, subject, count],
                ).fetchall()
                started = time.perf_counter()
                for (memory_id,) in ids:
                    owner.execute(copy, [memory_id])
                samples[variant].append((time.perf_counter() - started) * 1000 / len(ids))
    return {
        variant: {
            "median": round(statistics.median(values), 3),
            "all": [round(v, 3) for v in values],
        }
        for variant, values in samples.items()
    }


if __name__ == "__main__":
    sys.exit(main())
