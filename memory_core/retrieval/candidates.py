"""Stage 4: candidate generation. One SQL statement asks every store of the plan at once.

Every store (structured lookup by type, active task state by session/task, vector nearest
neighbours, Postgres full-text) reads only rows that pass the same ownership filter in the
WHERE clause of the CTE that reads the table: tenant, subject, agent (shared or the caller's),
readable types, allowed scopes, status active and inside the validity interval, within the
tenant's retention (``retention_filter``), an environment of none or the active one, and the
policy's confidence floor and prompt sensitivity cap. Nothing
outside that filter ever leaves the database, so similarity is never the access control.

One MATERIALIZED scan (``elig``) reads the subject's eligible rows once, and the vector,
full-text and structured stores rank it: the vector store is an exact cosine ranking (it always
fills its limit), full-text ranks with a BM25-style score over the subject's own rows (idf from
the subject's document frequencies, length-normalised), because ``ts_rank`` has no idf and lets
a common word swamp the rare one that matters. There is no approximate index: the eligible
rows are one subject's, few enough to rank exactly (docs/performance.md).

The two ranked lists are fused by reciprocal rank (``fuse``); every candidate also carries its
cosine similarity to the query (when the query was embedded), which the later stages use.
"""

# Every value is a bound parameter; only constant identifiers and clauses built here from
# constants are interpolated into the SQL text.
# ruff: noqa: S608
from __future__ import annotations

import unicodedata
from datetime import datetime

import numpy as np
import psycopg
from django.db import connection
from django.db.backends.postgresql.base import ServerBindingCursor
from psycopg import pq

from memory_core.models.choices import SENSITIVITY_RANK, sensitivities_up_to
from memory_core.models.fields import BinaryVector

from .policy import RetrievalPolicy
from .types import Candidate, RetrievalContext, RetrievalPlan

TABLE = "memory_core_memory"
# The full-text store reads a query's first this many distinct lexemes (in the order the
# query says them): BM25's cost is the pooled rows times the lexemes. The query's embedding
# reads its first 256 tokens (the model's max_seq_length) in the same spirit.
MAX_QUERY_LEXEMES = 64
SAVEPOINT = "memledger_candidates"  # around the statement, in its round trip (fetch_binary)

# Ids come back as text: a Candidate holds them as strings, and decoding binary uuids into
# uuid.UUID objects only to format them again cost ~1 ms per retrieval (docs/performance.md,
# section 10).
COLUMNS = (
    "m.id::text, m.tenant_id::text, m.subject_id::text, m.agent_id::text, m.memory_type, "
    "m.memory_key, m.scope_kind, m.scope_ref, m.content, m.content_hash, m.authority, "
    "m.confidence, m.sensitivity, m.status, m.created_at, m.updated_at, m.valid_until, "
    "m.version, m.supersedes_id::text, m.session_id, m.task_id, m.environment"
)


def environment_filter(ctx: RetrievalContext) -> tuple[str, dict]:
    """Return the condition keeping rows that apply in the active environment, and its
    parameters (``environments.environment_applies`` in SQL).

    In the WHERE clause of the eligible rows, not after ranking: a row tied to another
    environment never takes one of a store's ``LIMIT`` slots from a row that may be used.
    """
    if ctx.environment:
        return "(m.environment = '' OR m.environment = %(environment)s)", {
            "environment": ctx.environment
        }
    return "m.environment = ''", {}


def owner_filter(ctx: RetrievalContext, types_param: str, now: datetime) -> tuple[str, dict]:
    """Return the WHERE clause every store uses, and its parameters.

    ``types_param`` names the parameter holding the memory types the store may return.
    """
    params: dict = {
        "tenant_id": ctx.tenant_id,
        "subject_id": ctx.subject_id,
        "agent_id": ctx.agent_id,
        "now": now,
        # Up to the lower of the caller's maximum sensitivity and the policy's prompt cap, and
        # from the policy's confidence floor, in SQL: a row outside them is not a candidate, so
        # it is in no trace either. Applied in stage 5 alone, 40 guesses below the floor filled
        # every store's LIMIT and left out the memory that answered (stop 60's audit of
        # retrieval); stage 5 checks both again.
        "sensitivities": sensitivities_up_to(
            min(
                ctx.max_sensitivity,
                ctx.max_prompt_sensitivity,
                key=lambda level: SENSITIVITY_RANK.get(level, SENSITIVITY_RANK["sensitive"]),
            )
        ),
        "confidence_floor": ctx.confidence_floor,
    }
    scope_terms = ["m.scope_kind = 'global'"]
    for kind in ("user", "project", "repo", "task"):
        refs = sorted({ref for k, ref in ctx.allowed_scopes if k == kind})
        if refs:
            params[f"scope_{kind}"] = refs
            scope_terms.append(f"(m.scope_kind = '{kind}' AND m.scope_ref = ANY(%(scope_{kind})s))")
    agent = (
        "(m.agent_id IS NULL OR m.agent_id = %(agent_id)s)"
        if ctx.agent_id
        else "m.agent_id IS NULL"
    )
    environment, environment_params = environment_filter(ctx)
    params.update(environment_params)
    sql = (
        "m.tenant_id = %(tenant_id)s AND m.subject_id = %(subject_id)s AND "
        f"{agent} AND m.status = 'active' AND m.valid_from <= %(now)s AND "
        f"(m.valid_until IS NULL OR m.valid_until > %(now)s) AND {environment} AND "
        f"m.memory_type = ANY(%({types_param})s) AND ({' OR '.join(scope_terms)}) AND "
        "m.sensitivity = ANY(%(sensitivities)s) AND m.confidence >= %(confidence_floor)s"
    )
    if ctx.fenced_key:
        # A key whose deletion is queued: none of its memories from the ask on.
        sql += " AND m.memory_key <> %(fenced_key)s"
        params["fenced_key"] = ctx.fenced_key
    retention, retention_params = retention_filter(ctx)
    params.update(retention_params)
    return sql + retention, params


# The columns a retention rule matches a memory by (``policy_check.CLASS_RULES``): the only
# names interpolated into the retention condition.
_RETENTION_COLUMNS = ("memory_class", "authority")


def retention_filter(ctx: RetrievalContext) -> tuple[str, dict]:
    """Return the conditions leaving out the memories the tenant's retention no longer
    allows (`` AND ...``, empty without a limit), and their parameters.

    One per rule of ``ctx.retention_cutoffs``, the rule the retention sweep deletes by
    (``deletion.retention._rules``), at the request's ``now``: a memory of the rule's class
    (or, for ``inferred_days``, authority) written before the cutoff is overdue. So it
    influences nothing from the moment it is due, not from the next sweep (up to 5 minutes
    later): a row imported old, a demo's, or one whose period a new policy version shortened.
    """
    sql = ""
    params: dict = {}
    for number, rule in enumerate(ctx.retention_cutoffs):
        if rule.column not in _RETENTION_COLUMNS:
            raise ValueError(f"no retention rule matches by {rule.column!r}")
        sql += (
            f" AND NOT (m.{rule.column} = %(retention_{number}_value)s "
            f"AND m.created_at < %(retention_{number}_cutoff)s)"
        )
        params[f"retention_{number}_value"] = rule.value
        params[f"retention_{number}_cutoff"] = rule.cutoff
    return sql, params


def _shared_scan_ctes(
    *,
    where: str,
    has_vector: bool,
    want_vector: bool,
    want_fulltext: bool,
    structured: bool,
    only_semantic: bool,
    bound: bool = False,
) -> list[str]:
    """Return the CTEs of the vector, full-text and structured stores over one shared scan.

    ``elig`` (MATERIALIZED) reads the subject's eligible rows once, through the btree index on
    (tenant, subject, type, status), with what every store needs: the exact cosine distance
    (so the vector store is exact and always fills its limit), and for full-text the row's
    length and, when it matches any query lexeme, its lexemes. BM25 needs statistics over
    every eligible row anyway; the stores then rank ``elig`` instead of re-reading the heap.
    There is no ANN index to ask (migration 0007): at 1M rows the planner never chose the
    global HNSW index for these filtered queries, and forcing it was slower and inexact.

    Full-text scoring: the pool is the rows matching any query lexeme (one ``@@`` with an OR
    query per row), kept apart (``pool``) so that testing each pooled row against each query
    lexeme (a binary search in its sorted lexemes) rescans the pool, not every eligible row,
    once per lexeme. Each lexeme's idf is computed once (``idf``), not once per matching row,
    and the length norm in float8 (``0.75 * len`` alone was numeric arithmetic); df and the
    scores cost one pass over the pool's matches. The scores are bit-identical to the form
    before (docs/performance.md, section 14).

    ``only_semantic``: every eligible row is of a semantic type (the structured types are a
    subset), so the semantic stores rank ``elig`` without testing each row's type again.

    ``bound``: the plan names types and scope kinds bound to the request (``plan.bound_types``,
    ``plan.bound_kinds``: a constraint or rule of the request's repo or task). ``elig`` marks
    those rows, and the structured store takes them first, then the rest by distance: by
    distance alone, 40 closer rows of the subject's project left a rule of the request's
    repository out of every store, though it applies whatever the request's wording.
    """
    dist = "m.embedding <=> %(qvec)s::vector" if has_vector else "NULL::float8"
    ctes = []
    columns = f"m.id, m.memory_type, m.memory_key, m.updated_at, {dist} AS dist"
    if bound:
        columns += (
            ", (m.scope_kind = ANY(%(bound_kinds)s) AND m.memory_type = ANY(%(bound_types)s))"
            " AS bound"
        )
    source = f"{TABLE} m"
    if want_fulltext:
        ctes += [
            # The query's lexemes, stemmed exactly as the generated column is.
            # At most MAX_QUERY_LEXEMES, the first the query says (a lexeme's first
            # position): each is tested against every pooled row, so a 4,000-character
            # query of a thousand words the subject's rows hold took seconds.
            "qlex AS MATERIALIZED (SELECT lex, quote_literal(lex)::tsquery AS q FROM "
            "(SELECT u.lexeme AS lex FROM unnest(to_tsvector('english', %(query)s)) AS u "
            "ORDER BY u.positions[1], u.lexeme LIMIT %(max_lexemes)s) AS d)",
            "anyq AS MATERIALIZED (SELECT coalesce(string_agg(quote_literal(lex), ' | '), '')"
            "::tsquery AS q FROM qlex)",
        ]
        columns += (
            ", length(m.search_vector) AS len, "
            "CASE WHEN m.search_vector @@ anyq.q THEN m.search_vector END AS hit"
        )
        source += ", anyq"
    ctes.append(f"elig AS MATERIALIZED (SELECT {columns} FROM {source} WHERE {where})")
    type_test = "" if only_semantic else " AND memory_type = ANY(%(sem_types)s)"
    if want_vector:
        ctes.append(
            f"sem AS (SELECT id, dist FROM elig WHERE dist IS NOT NULL{type_test} "
            "ORDER BY dist, id LIMIT %(sem_limit)s), "
            "sem_r AS (SELECT id, row_number() OVER (ORDER BY dist, id) AS rnk FROM sem)"
        )
    if want_fulltext:
        ctes.append(
            "stats AS MATERIALIZED (SELECT count(*)::float AS n, "
            f"greatest(avg(len), 1)::float AS avglen FROM elig WHERE true{type_test}), "
            "pool AS MATERIALIZED (SELECT id, len, hit FROM elig "
            f"WHERE hit IS NOT NULL{type_test}), "
            "hits AS MATERIALIZED (SELECT p.id, x.lex AS lexeme, p.len FROM pool p "
            "JOIN qlex x ON p.hit @@ x.q), "
            "idf AS MATERIALIZED (SELECT lexeme, ln(1 + (s.n - df + 0.5) / (df + 0.5)) * 2.2 "
            "AS idf FROM (SELECT lexeme, count(*)::float AS df FROM hits GROUP BY lexeme) AS d "
            "CROSS JOIN stats s), "
            "fts AS (SELECT h.id, sum(i.idf / (1 + 1.2 * (0.25 + 0.75::float8 * h.len / s.avglen)))"
            " AS score FROM hits h JOIN idf i USING (lexeme) CROSS JOIN stats s "
            "GROUP BY h.id ORDER BY score DESC, h.id LIMIT %(fts_limit)s), "
            "fts_r AS (SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rnk "
            "FROM fts)"
        )
    if structured:
        first = "bound DESC, " if bound else ""
        ctes.append(
            "st AS (SELECT id FROM elig WHERE memory_type = ANY(%(st_types)s) "
            f"ORDER BY {first}dist NULLS LAST, updated_at DESC, id LIMIT %(limit_all)s)"
        )
    return ctes


def build_candidate_sql(
    *,
    ctx: RetrievalContext,
    plan: RetrievalPlan,
    query: str,
    query_vector,
    now: datetime,
    use_vector: bool = True,
    use_fulltext: bool = True,
    include_embeddings: bool = True,
) -> tuple[str, dict, list[str]]:
    """Return (sql, params, stores) for the plan's stores in one statement.

    The vector, full-text and structured stores share one scan of the eligible rows
    (``_shared_scan_ctes``); active task state is its own lookup by session and task (its
    task_id or its ``task:<id>`` scope).
    """
    ctes: list[str] = []
    stores: list[str] = []
    params: dict = {
        # In NFC, as the write path stores content: PostgreSQL's parser splits a word at an
        # NFD combining mark, and the two spellings shared no lexeme (stop 60's audit of
        # retrieval). Rows stored in NFD before stop 60 keep their index as it was.
        "query": unicodedata.normalize("NFC", query),
        "limit_all": plan.max_candidates,
        "max_lexemes": MAX_QUERY_LEXEMES,
    }
    has_vector = query_vector is not None
    if has_vector:
        params["qvec"] = BinaryVector(query_vector)  # sent in binary, as written

    semantic_types = list(plan.semantic_types)
    structured_types = list(plan.structured_types)
    want_vector = bool(semantic_types) and use_vector and has_vector
    want_fulltext = bool(semantic_types) and use_fulltext
    shared_scan = bool(want_vector or want_fulltext or structured_types)
    if shared_scan:
        types = semantic_types + [t for t in structured_types if t not in semantic_types]
        where, p = owner_filter(ctx, "elig_types", now)
        params.update(
            p,
            elig_types=types,
            sem_types=semantic_types,
            sem_limit=plan.semantic_limit,
            fts_limit=plan.fulltext_limit,
            st_types=structured_types,
        )
        bound = bool(structured_types and plan.bound_types and plan.bound_kinds)
        if bound:
            params.update(bound_types=list(plan.bound_types), bound_kinds=list(plan.bound_kinds))
        ctes += _shared_scan_ctes(
            where=where,
            has_vector=has_vector,
            want_vector=want_vector,
            want_fulltext=want_fulltext,
            structured=bool(structured_types),
            only_semantic=set(types) == set(semantic_types),
            bound=bound,
        )
        stores += ["vector"] if want_vector else []
        stores += ["fulltext"] if want_fulltext else []
        stores += ["structured"] if structured_types else []
    if plan.task_state and (ctx.session_id or ctx.task_id):
        where, p = owner_filter(ctx, "ts_types", now)
        params.update(p, ts_types=["task_state"], session_id=ctx.session_id, task_id=ctx.task_id)
        # The task's state, and the session's that is bound to no other task: a request of
        # task T2 in session S1 is not given T1's state as "this task's" (``rerank.task_fit``).
        # The task's is the state carrying its task_id or scoped to it (``task:<id>``, as
        # docs/api.md tells agents to keep each task's state apart, and as its close reads
        # it): by task_id alone, a state scoped task:T1 was never retrieved in T1 (stop 57's
        # audit of tasks). A filter on the subject's task_state rows, as the other arms are.
        own_task = (
            "(m.task_id = %(task_id)s OR (m.scope_kind = 'task' AND m.scope_ref = %(task_id)s))"
        )
        match = []
        if ctx.session_id:
            other_task = " AND m.task_id IN ('', %(task_id)s)" if ctx.task_id else ""
            match.append(f"(m.session_id = %(session_id)s{other_task})")
        if ctx.task_id:
            match.append(own_task)
        # The task's own state first, then the session's loose notes: by recency alone, 40
        # newer notes of the session bound to no task left the task's state out of every
        # store (stop 62's audit of tasks), as the structured store takes bound rows first.
        # Ties by id, as every store's: a batch's rows share one updated_at, and which of
        # them the LIMIT kept was where their tuples lay (stop 64's audit of retrieval).
        first = f"{own_task} DESC, " if ctx.task_id else ""
        ctes.append(
            f"ts AS (SELECT m.id FROM {TABLE} m WHERE {where} AND ({' OR '.join(match)}) "
            f"ORDER BY {first}m.updated_at DESC, m.id LIMIT %(limit_all)s)"
        )
        stores.append("task_state")
    if not stores:
        return "", {}, []

    # One row per candidate with its ranks and store flags, aggregated once: joining each
    # ranked CTE to the result row by row made PostgreSQL recompute their window functions per
    # row (nested loops on its 1-row estimates): ~3 ms of a ~5 ms execution
    # (docs/performance.md, section 10).
    branches = {  # store: its ranked CTE, vector rank, full-text rank and score, flags
        "vector": ("sem_r", "rnk", "NULL", "NULL", "false", "false"),
        "fulltext": ("fts_r", "NULL", "rnk", "score", "false", "false"),
        "structured": ("st", "NULL", "NULL", "NULL", "true", "false"),
        "task_state": ("ts", "NULL", "NULL", "NULL", "false", "true"),
    }
    union = " UNION ALL ".join(
        "SELECT id, {1}::bigint AS vrank, {2}::bigint AS frank, {3}::float8 AS fscore, "
        "{4} AS in_st, {5} AS in_ts FROM {0}".format(*branches[store])
        for store in stores
    )
    found = (
        "SELECT id, min(vrank) AS vrank, min(frank) AS frank, max(fscore) AS fscore, "
        f"bool_or(in_st) AS in_st, bool_or(in_ts) AS in_ts FROM ({union}) AS u GROUP BY id"
    )
    if shared_scan:
        # Rivals: every other eligible row on a memory_key a candidate holds. The stores'
        # limits rank rows one by one, so a key's second chain, worded far from the query,
        # could miss them all while the first came in: its conflict unseen, the first row
        # returned as settled. Stage 8 needs the whole group (at most ``max_candidates``
        # more rows; a key holds few active chains).
        ctes += [
            f"found AS MATERIALIZED ({found})",
            "keys AS MATERIALIZED (SELECT DISTINCT k.memory_key FROM elig k "
            "JOIN found f ON f.id = k.id WHERE k.memory_key <> '')",
            # Without any key among the candidates (EXISTS: a one-time filter), the eligible
            # rows are not read again. Closest first, then by id: with no order, which rows the
            # LIMIT kept of keys holding more was PostgreSQL's choice (stop 64's audit).
            "rivals AS (SELECT e.id FROM elig e WHERE EXISTS (SELECT 1 FROM keys) "
            "AND e.memory_key IN (SELECT memory_key FROM keys) "
            "AND e.id NOT IN (SELECT id FROM found) "
            "ORDER BY e.dist NULLS LAST, e.id LIMIT %(limit_all)s)",
            "ids AS MATERIALIZED (SELECT id, vrank, frank, fscore, in_st, in_ts, false AS in_rv "
            "FROM found UNION ALL SELECT id, NULL::bigint, NULL::bigint, NULL::float8, false, "
            "false, true FROM rivals)",
        ]
    else:
        ctes.append(f"ids AS MATERIALIZED (SELECT *, false AS in_rv FROM ({found}) AS f)")
    select = [COLUMNS]
    select.append("1 - (m.embedding <=> %(qvec)s::vector) AS cosine" if has_vector else "NULL")
    # Binary (pgvector's send format): parsing 384 floats from text cost ~5 ms per retrieval.
    select.append("vector_send(m.embedding)" if include_embeddings else "NULL")
    select += ["ids.vrank", "ids.frank", "ids.fscore", "ids.in_st", "ids.in_ts", "ids.in_rv"]
    # The outer query repeats the tenant and subject guard (belt and braces).
    sql = (
        "WITH "
        + ", ".join(ctes)
        + f" SELECT {', '.join(select)} FROM ids JOIN {TABLE} m ON m.id = ids.id"
        + " WHERE m.tenant_id = %(tenant_id)s AND m.subject_id = %(subject_id)s"
    )
    return sql, params, stores


def _parse_embedding(data) -> np.ndarray | None:
    """Return the float32 vector of pgvector's binary send format (int16 dimensions, int16
    unused, then big-endian float4s), or None."""
    if not data:
        return None
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


class _NeverPreparedCursor(ServerBindingCursor):
    """Django's server-binding cursor, but its statements are never prepared.

    The connection prepares a statement it has run five times (``prepare_threshold``,
    config/settings/base.py), and PostgreSQL may then plan it once for any parameters. For
    the candidate statement that generic plan is a poor one for the largest subjects: with it
    the 10 % bucket's p95 went from 94 to 171 ms (docs/performance.md, section 11). Each run
    is planned for its own subject instead.
    """

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=False, binary=binary)


def fetch_binary(sql: str, params: dict) -> list[tuple]:
    """Run ``sql`` with its parameters bound by the server and its rows sent in binary.

    Django's cursor returns text rows, so the embeddings (``vector_send``) would come back
    hex-encoded, and with client-side binding (the connection's ``server_side_binding``
    option off) the query vector would travel as SQL text, twice: together about 1.5 ms per
    retrieval (docs/performance.md, section 9). The cursor is Django's own server-binding
    class, wrapped as ``connection.cursor()`` wraps its cursors: database errors are
    translated, and execute wrappers and query logging see the statement.

    Inside a transaction the statement runs in a savepoint, so that its failure (a vector of
    the wrong dimension, say) leaves the transaction usable for the degraded retry and the
    trace. The savepoint, the statement and the release go out in one round trip (psycopg's
    pipeline mode) instead of three; on failure the savepoint is rolled back and the error
    raised as Django's.
    """
    connection.ensure_connection()
    pg = connection.connection
    raw = _NeverPreparedCursor(pg)
    raw.format = pq.Format.BINARY
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(raw) as cursor:
        if connection.get_autocommit():
            cursor.execute(sql, params)
            return cursor.fetchall()
        with connection.wrap_database_errors:
            try:
                with pg.pipeline():  # sent together; the results arrive when the block ends
                    pg.execute(f"SAVEPOINT {SAVEPOINT}")
                    cursor.execute(sql, params)
                    pg.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
            except psycopg.Error:
                if pg.info.transaction_status == pq.TransactionStatus.INERROR:
                    pg.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}; RELEASE SAVEPOINT {SAVEPOINT}")
                raise
        return cursor.fetchall()


def fetch_candidates(
    *,
    ctx: RetrievalContext,
    plan: RetrievalPlan,
    query: str,
    query_vector,
    now: datetime,
    policy: RetrievalPolicy,
    use_vector: bool = True,
    use_fulltext: bool = True,
) -> tuple[list[Candidate], list[str]]:
    """Run the plan's stores in one statement; return the candidates and the stores asked."""
    sql, params, stores = build_candidate_sql(
        ctx=ctx,
        plan=plan,
        query=query,
        query_vector=query_vector,
        now=now,
        use_vector=use_vector,
        use_fulltext=use_fulltext,
    )
    if not sql:
        return [], []
    candidates = [row_to_candidate(row) for row in fetch_binary(sql, params)]
    fuse(candidates, policy)
    return candidates, stores


# The signals of a store's row (``row_to_candidate``: cosine, embedding, vector and full-text
# ranks, full-text score, found by the structured, task-state and key-rival stores): none.
_NO_SIGNALS = "NULL, NULL, NULL, NULL, NULL, false, false, false"


def candidates_by_id(ids: list) -> list[Candidate]:
    """Return the memories ``ids`` as the candidates a store would make of them, without the
    signals of a request (``_NO_SIGNALS``): for stage 8's rules read outside a request, by the
    portal's "Not settled" (``selectors.portal.given_now``), which made its candidates by a
    constructor of its own (stop 64's review of the portal fix). One query."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {COLUMNS}, {_NO_SIGNALS} FROM {TABLE} m WHERE m.id = ANY(%(ids)s::uuid[])",
            {"ids": ids},
        )
        return [row_to_candidate(row) for row in cursor.fetchall()]


def row_to_candidate(row) -> Candidate:
    """Return the candidate of one result row of ``build_candidate_sql``."""
    (
        id_, tenant_id, subject_id, agent_id, memory_type, memory_key, scope_kind, scope_ref,
        content, chash, authority, confidence, sensitivity, status, created_at, updated_at,
        valid_until, version, supersedes_id, session_id, task_id, environment, cosine,
        embedding, vrank, frank, fscore, in_structured, in_task, in_rivals,
    ) = row  # fmt: skip
    sources = set()
    if vrank is not None:
        sources.add("vector")
    if frank is not None:
        sources.add("fulltext")
    if in_structured:
        sources.add("structured")
    if in_task:
        sources.add("task_state")
    if in_rivals:
        sources.add("key_rivals")
    return Candidate(
        id=id_,
        tenant_id=tenant_id,
        subject_id=subject_id,
        agent_id=agent_id,
        memory_type=memory_type,
        memory_key=memory_key,
        scope_kind=scope_kind,
        scope_ref=scope_ref,
        content=content,
        content_hash=chash,
        authority=authority,
        confidence=float(confidence),
        sensitivity=sensitivity,
        status=status,
        created_at=created_at,
        updated_at=updated_at,
        valid_until=valid_until,
        version=version,
        supersedes_id=supersedes_id,
        session_id=session_id,
        task_id=task_id,
        environment=environment,
        sources=sources,
        semantic=float(cosine) if cosine is not None else None,
        vector_rank=vrank,
        fulltext_rank=frank,
        fulltext_score=float(fscore or 0.0),
        embedding=_parse_embedding(embedding),
    )


def fuse(candidates: list[Candidate], policy: RetrievalPolicy) -> None:
    """Set each candidate's reciprocal-rank fusion of its vector and full-text ranks."""
    k = float(policy["rrf_k"])
    wv = float(policy["rrf_vector_weight"])
    wf = float(policy["rrf_fulltext_weight"])
    for c in candidates:
        fused = 0.0
        if c.vector_rank is not None:
            fused += wv / (k + c.vector_rank)
        if c.fulltext_rank is not None:
            fused += wf / (k + c.fulltext_rank)
        c.fused = fused
