"""A subject owning 0.1% of the rows gets its exact nearest rows, filled to min(k, eligible).

20 of 20,000 rows belong to the subject (random vectors, inserted by one INSERT ... SELECT).
The memory table has no approximate index (migration 0007): the vector store ranks the
subject's eligible rows by exact distance, so it neither misses a near row nor comes back
short, however small the subject's share of the table.
"""

import numpy as np
import pytest
from django.db import connection, transaction
from django.utils import timezone

from memory_core.principals import AgentPrincipal
from memory_core.retrieval.candidates import fetch_candidates
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
    with connection.cursor() as cursor:
        cursor.execute(
            INSERT,
            {"tenant": tenant.id, "me": me.id, "others": others, "mine": MINE, "total": TOTAL},
        )
    owner_execute("ANALYZE memory_core_memory")  # the owner's (the suite runs as the app role)
    query = np.random.default_rng(7).normal(size=384) - 0.0
    principal = AgentPrincipal.from_agent(agent)
    subject_id, _, policy, _, _ = lookup_subject_and_policy(tenant_id=tenant.id, user_id="needle")
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


def exact_order(ctx, query) -> list[str]:
    """The subject's row ids by exact cosine distance to ``query``, computed in numpy."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id::text, embedding::text FROM memory_core_memory WHERE subject_id = %s",
            [ctx.subject_id],
        )
        rows = cursor.fetchall()
    ids = [row[0] for row in rows]
    matrix = np.array([np.array(row[1][1:-1].split(","), dtype=np.float64) for row in rows])
    q = np.asarray(query, dtype=np.float64)
    cosine = matrix @ q / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(q))
    return [ids[i] for i in np.argsort(-cosine, kind="stable")]


def test_vector_store_is_exact_and_fills_to_min_k_eligible(crowd):
    ctx, policy, query = crowd
    now = timezone.now()
    expected = exact_order(ctx, query)
    assert len(expected) == MINE
    for k in (10, 40):
        with transaction.atomic():
            found, stores = fetch_candidates(
                ctx=ctx, plan=vector_plan(k), query="x", query_vector=query, now=now,
                policy=policy, use_fulltext=False,
            )  # fmt: skip
        assert stores == ["vector"]
        assert len(found) == min(k, MINE)
        assert {c.subject_id for c in found} == {str(ctx.subject_id)}
        ranked = [c.id for c in sorted(found, key=lambda c: c.vector_rank)]
        assert ranked == expected[: min(k, MINE)]


def test_memory_table_has_no_approximate_index():
    # An ANN index over every tenant is what the seed warns about (uneven recall once filters
    # apply) and costs ~3 ms per insert at 1M rows; retrieval never reads one.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_core_memory' "
            "AND (indexdef ILIKE '%% USING hnsw %%' OR indexdef ILIKE '%% USING ivfflat %%')"
        )
        assert cursor.fetchall() == []


def test_outside_a_transaction_the_statement_runs_without_its_savepoint(crowd):
    # In autocommit there is no transaction to protect, and PostgreSQL refuses a savepoint.
    ctx, policy, query = crowd
    assert connection.get_autocommit()
    found, stores = fetch_candidates(
        ctx=ctx, plan=vector_plan(10), query="x", query_vector=query, now=timezone.now(),
        policy=policy, use_fulltext=False,
    )  # fmt: skip
    assert stores == ["vector"]
    ranked = [c.id for c in sorted(found, key=lambda c: c.vector_rank)]
    assert ranked == exact_order(ctx, query)[:10]
