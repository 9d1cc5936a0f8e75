"""A subject owning 0.1% of the rows still gets a full candidate list from the HNSW index.

20 of 20,000 rows belong to the subject (random vectors, inserted by one INSERT ... SELECT, the
HNSW index rebuilt over them inside the test's transaction). The planner is pushed onto the index
(``enable_sort``/``enable_seqscan`` off) so the filtered ANN path is what is measured: with
``hnsw.iterative_scan = relaxed_order`` the vector store fills to min(k, eligible rows); with
iterative scan off, the same query comes back short, which is what the setting is for.
"""

import numpy as np
import pytest
from django.db import connection, transaction
from django.utils import timezone

from memory_core.principals import AgentPrincipal
from memory_core.retrieval.candidates import build_candidate_sql, fetch_candidates
from memory_core.retrieval.pipeline import build_context, lookup_subject_and_policy
from memory_core.retrieval.types import RetrievalMode, RetrievalPlan, RetrievalRequest
from tests.factories import SubjectFactory
from tests.rls_support import owner_execute

pytestmark = pytest.mark.django_db(transaction=True)

TOTAL = 20_000
MINE = 20


INSERT = """
INSERT INTO memory_core_memory (
    id, tenant_id, subject_id, memory_class, memory_type, memory_key, scope_kind, scope_ref,
    session_id, task_id, content, source_type, source_conversation_id, source_message_id,
    source_tool, authority, confidence, consent, sensitivity, valid_from, created_at,
    updated_at, status, version, content_hash, embedding, embedding_model)
SELECT gen_random_uuid(), %(tenant)s,
       CASE WHEN g <= %(mine)s THEN %(me)s ELSE (%(others)s::uuid[])[1 + g %% 50] END,
       'episodic', 'incident', '', 'global', '', '', '', 'row ' || g, 'verified_tool_output',
       '', '', '', 'tool_observation', 1.0, 'explicit', 'personal', now(), now(), now(),
       'active', 1, md5(g::text),
       (SELECT array_agg(random() - 0.5) FROM generate_series(1, 384) WHERE g > 0)::vector,
       'random'
FROM generate_series(1, %(total)s) AS g
"""


@pytest.fixture
def crowd(tenant, agent):
    me = SubjectFactory(tenant=tenant, external_id="needle")
    others = [SubjectFactory(tenant=tenant).id for _ in range(50)]
    # Index DDL and ANALYZE are the owner's (the suite runs as the app role, RLS): they run
    # on an owner connection, so the rows are committed (a transactional test).
    owner_execute("DROP INDEX memory_embedding_hnsw")  # rebuilt below, faster than inserts
    with connection.cursor() as cursor:
        cursor.execute(
            INSERT,
            {"tenant": tenant.id, "me": me.id, "others": others, "mine": MINE, "total": TOTAL},
        )
    owner_execute(
        "CREATE INDEX memory_embedding_hnsw ON memory_core_memory USING hnsw "
        "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
        "ANALYZE memory_core_memory",
    )
    query = np.random.default_rng(7).normal(size=384) - 0.0
    principal = AgentPrincipal.from_agent(agent)
    subject_id, policy = lookup_subject_and_policy(tenant_id=tenant.id, user_id="needle")
    request = RetrievalRequest(query="x", user_id="needle")
    ctx = build_context(principal=principal, request=request, subject_id=subject_id)
    return ctx, policy, query.tolist()


def vector_plan(k: int) -> RetrievalPlan:
    return RetrievalPlan(
        mode=RetrievalMode.EPISODIC_ONLY,
        intent="",
        semantic_types=("incident",),
        max_candidates=k,
        semantic_limit=k,
    )


def force_index():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off")


def test_filtered_ann_fills_to_min_k_eligible_and_needs_iterative_scan(crowd):
    ctx, policy, query = crowd
    now = timezone.now()
    for k in (10, 40):
        with transaction.atomic():
            force_index()
            found, stores = fetch_candidates(
                ctx=ctx, plan=vector_plan(k), query="x", query_vector=query, now=now,
                policy=policy, use_fulltext=False,
            )  # fmt: skip
        assert stores == ["vector"]
        assert len(found) == min(k, MINE)
        assert {c.subject_id for c in found} == {str(ctx.subject_id)}
    sql, params, _ = build_candidate_sql(
        ctx=ctx, plan=vector_plan(10), query="x", query_vector=query, now=now,
        use_fulltext=False,
    )  # fmt: skip
    with transaction.atomic(), connection.cursor() as cursor:
        force_index()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "memory_embedding_hnsw" in plan
        # The same statement without iterative scan comes back short: the setting matters.
        cursor.execute("SET LOCAL hnsw.iterative_scan = off; SET LOCAL hnsw.ef_search = 40")
        cursor.execute(sql, params)
        assert len(cursor.fetchall()) < 10
