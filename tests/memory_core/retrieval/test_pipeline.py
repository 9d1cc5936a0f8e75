"""The pipeline against real PostgreSQL + pgvector and the real model."""

import copy
import json
import math
import re
import unicodedata

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from memory_core.embeddings import EmbeddingError, SentenceTransformerEmbedder, get_embedder
from memory_core.models import RetrievalTrace
from memory_core.models.fields import BinaryVector
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval import candidates
from memory_core.retrieval.candidates import fetch_candidates
from memory_core.retrieval.pipeline import build_context, lookup_subject_and_policy, retrieve
from memory_core.retrieval.plan import build_plan
from memory_core.retrieval.types import Budget, RetrievalMode, RetrievalRequest
from memory_core.services.memories import MemoryDraft, memory_store_many
from memory_core.services.policy import policy_publish
from tests.factories import SubjectFactory

from .conftest import draft

pytestmark = pytest.mark.django_db

ATLAS_API = {"project_id": "atlas", "repository_id": "atlas-api"}


class FailingEmbedder(SentenceTransformerEmbedder):
    """The configured model, broken: embedding fails, the tokenizer still counts."""

    def embed(self, texts):
        raise EmbeddingError("model weights unreadable")


def ask(principal, query, **kw):
    return retrieve(
        principal=principal, request=RetrievalRequest(query=query, user_id="dana", **kw)
    )


def candidate_statement(principal, query, **kw) -> str:
    """The candidate statement ``ask`` sends, with its parameters as the literals it binds."""
    statements = []

    def record(execute, sql, params, many, context):
        statements.append(connection.ops.compose_sql(sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        ask(principal, query, **kw)
    return next(s for s in statements if s.lstrip().startswith("WITH"))


def test_tenant_subject_agent_scope_status_and_validity_are_in_every_store_s_sql(world, tenant):
    sql = candidate_statement(
        world["principal"], "Why did the atlas-api staging deploy fail?", **ATLAS_API
    )
    subject = world["subject"]
    # Every read of the memory table inside the statement carries the whole ownership filter
    # in its own WHERE (up to the next CTE); the stores read only those filtered reads.
    reads = re.split(r"\bFROM memory_core_memory m\b", sql)[1:]
    assert reads, sql
    for body in reads:
        where = re.split(r" AS (?:MATERIALIZED )?\(", body, maxsplit=1)[0].split("WHERE", 1)[1]
        assert f"m.tenant_id = '{tenant.id.hex}'" in where, body
        assert f"m.subject_id = '{subject.id.hex}'" in where, body
        assert "m.agent_id IS NULL OR m.agent_id =" in where, body
        assert "m.status = 'active'" in where, body
        assert "m.valid_until IS NULL OR m.valid_until >" in where, body
        assert "m.environment = ''" in where, body  # no active environment: untied rows only
        assert "m.scope_kind = 'repo' AND m.scope_ref = ANY" in where, body
        assert "atlas-api" in where and "atlas-web" not in where, body
    # The vector, full-text and structured stores rank the filtered shared scan.
    for store in ("sem", "pool", "st"):
        ranks_elig = rf"\b{store} AS (?:MATERIALIZED )?\(SELECT [^()]*? FROM elig\b"  # noqa: S608
        assert re.search(ranks_elig, sql), store
    scan = r"\belig AS MATERIALIZED \(SELECT .*? FROM memory_core_memory m, anyq WHERE"
    assert re.search(scan, sql)
    # The final join repeats the tenant and subject guard.
    outer = sql.rsplit("JOIN memory_core_memory m ON m.id = ids.id", 1)[1]
    assert f"m.tenant_id = '{tenant.id.hex}'" in outer
    assert f"m.subject_id = '{subject.id.hex}'" in outer


def test_rows_outside_the_filter_never_leave_the_database(world):
    result = ask(world["principal"], "Why did the atlas-api staging deploy fail?", **ATLAS_API)
    m = world["memories"]
    returned = {c.id for c in result.items}
    assert str(m["mine_incident"].id) in returned
    seen = {c["id"] for c in result.trace["candidates"]}  # everything the SQL returned
    for name in ("other_repo", "other_agent", "colleague", "twin"):
        assert str(m[name].id) not in seen, name


def test_another_agent_sees_its_own_memories(world):
    from memory_core.principals import AgentPrincipal

    support = AgentPrincipal.from_agent(world["other_agent"])
    result = ask(support, "atlas-api staging deploy DATABASE_URL", intent="find_previous_fix",
                 **ATLAS_API)  # fmt: skip
    assert str(world["memories"]["other_agent"].id) in {c.id for c in result.items} | {
        m for c in result.items for m in c.merged_from
    }


def test_trace_is_stored_with_stages_and_citations_but_no_content(world):
    result = ask(world["principal"], "Why did the atlas-api staging deploy fail?", **ATLAS_API)
    trace = RetrievalTrace.objects.get(pk=result.trace_id)
    text = json.dumps(trace.stages)
    for memory in world["memories"].values():
        assert memory.content not in text
    assert "Why did the" not in text
    for key in ("gate", "plan", "stores_queried", "counts", "rejections", "dedup_merges",
                "conflicts", "selected", "tokens", "latency_ms"):  # fmt: skip
        assert key in trace.stages, key
    assert set(trace.stages["stores_queried"]) == {"structured", "vector", "fulltext"}
    assert {str(i) for i in trace.selected_ids} <= {str(i) for i in trace.cited_ids}
    assert {c["id"] for c in trace.stages["candidates"]} <= {str(i) for i in trace.cited_ids}
    assert trace.prompt_tokens == result.prompt_tokens > 0
    # The budget stage's last count is the package's: the prompt as returned, counted again.
    assert result.prompt_tokens == get_embedder().count_tokens(result.prompt)
    selected = trace.stages["selected"][0]
    assert {"semantic", "task_fit", "scope", "authority", "freshness"} <= set(
        selected["components"]
    )


def test_self_contained_request_queries_nothing(world):
    with CaptureQueriesContext(connection) as captured:
        result = ask(world["principal"], "Convert {'a': 1} to YAML", intent="transform",
                     has_complete_context=True)  # fmt: skip
    assert result.mode == "none" and result.items == []
    assert not any(q["sql"].lstrip().startswith("WITH") for q in captured.captured_queries)


def test_unknown_user_gets_an_empty_package(world):
    result = retrieve(
        principal=world["principal"],
        request=RetrievalRequest(query="What do I like?", user_id="nobody"),
    )
    assert result.items == [] and result.prompt == "<agent_memory></agent_memory>"


def test_query_budget_is_small_and_constant(world, django_assert_max_num_queries):
    ask(world["principal"], "warm up the model", **ATLAS_API)
    # subject+policy lookup and the subject's queue read (one round trip), the candidate
    # statement (its SAVEPOINT and RELEASE go in the same round trip, not through Django's
    # cursor), the trace insert.
    with django_assert_max_num_queries(4):
        ask(world["principal"], "Why did the atlas-api staging deploy fail?", **ATLAS_API)


def test_repeated_statements_are_prepared_but_never_the_candidate_statement(world):
    # The connection prepares what it has run five times (prepare_threshold); the candidate
    # statement must stay planned for its own subject each time (a generic plan is poor for
    # large subjects).
    assert connection.settings_dict["OPTIONS"]["prepare_threshold"] == 5
    for i in range(7):
        ask(world["principal"], f"Why did the atlas-api staging deploy fail? ({i})", **ATLAS_API)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any(s.startswith('INSERT INTO "memory_core_retrievaltrace"') for s in prepared)
    assert any("JOIN memory_core_subject s" in s for s in prepared)
    assert not any(s.lstrip().startswith("WITH") for s in prepared), prepared


@pytest.fixture
def failing_embedder():
    with override_settings(
        MEMLEDGER_EMBEDDER={
            "BACKEND": "tests.memory_core.retrieval.test_pipeline.FailingEmbedder",
            "DIMENSIONS": 384,
        }
    ):
        yield


def test_embedding_failure_degrades_to_structured_and_fulltext(world, failing_embedder):
    result = ask(world["principal"], "atlas-api staging deploy DATABASE_URL", **ATLAS_API)
    assert result.degraded
    ids = {c.id for c in result.items}
    assert str(world["memories"]["mine_incident"].id) in ids  # found by full-text
    assert str(world["memories"]["mine_repo"].id) in ids  # structured, bound to the repo
    trace = RetrievalTrace.objects.get(pk=result.trace_id)
    assert trace.degraded and trace.stages["degraded"]["reason"] == "embedding_failed"
    assert "vector" not in trace.stages["stores_queried"]


def test_vector_search_failure_degrades_too(world, monkeypatch):
    # A query vector of the wrong dimension: pgvector refuses the distance, the statement fails.
    monkeypatch.setattr(candidates, "BinaryVector", lambda vector: BinaryVector([1.0, 2.0, 3.0]))
    result = ask(world["principal"], "atlas-api staging deploy DATABASE_URL", **ATLAS_API)
    assert result.degraded
    assert str(world["memories"]["mine_incident"].id) in {c.id for c in result.items}
    assert result.trace["degraded"]["reason"] == "vector_search_failed"


def test_a_vector_failure_with_structured_stores_only_degrades_too(world, monkeypatch):
    # Structured-only intents have no semantic store, but their store orders by the vector.
    monkeypatch.setattr(candidates, "BinaryVector", lambda vector: BinaryVector([1.0, 2.0, 3.0]))
    result = ask(
        world["principal"], "which rules apply here?", intent="apply_project_rules", **ATLAS_API
    )
    assert result.degraded
    assert result.trace["degraded"]["reason"] == "vector_search_failed"
    assert str(world["memories"]["mine_repo"].id) in {c.id for c in result.items}


@pytest.mark.parametrize("intent", ["", "load_preferences", "chit_chat"])
def test_a_missing_model_folder_degrades_and_still_fits_the_budget(
    world, settings, tmp_path, intent
):
    from django.conf import settings as django_settings

    settings.MEMLEDGER_EMBEDDER = {
        **django_settings.MEMLEDGER_EMBEDDER,
        "MODEL_PATH": str(tmp_path / "no-such-model"),
    }
    result = ask(
        world["principal"],
        "atlas-api staging deploy DATABASE_URL",
        intent=intent,
        budget=Budget(max_items=8, max_tokens=200, max_items_per_type=3),
        **ATLAS_API,
    )
    assert result.degraded
    assert result.trace["degraded"]["reason"] in ("embedding_failed", "tokenizer_failed")
    # Counted in characters, never fewer than the model's tokens: the prompt still fits.
    assert len(result.prompt) <= 200 and result.prompt_tokens == len(result.prompt)


def test_counted_in_characters_a_korean_package_still_fits_the_budget(
    tenant, api_client, settings, tmp_path
):
    """The fallback counted the raw characters; the tokenizer reads a Korean syllable as two
    or three jamo, each a piece, so this package of 857 characters was 1,046 tokens against a
    max_tokens of 1,000 (stop 47's audit)."""
    from django.conf import settings as django_settings

    from tests.factories import SubjectFactory

    me = SubjectFactory(tenant=tenant, external_id="dana")
    rule = "atlas-api 저장소에서는 모든 엔드포인트에 OpenAPI 항목이 필요합니다. " + (
        "데이터베이스 마이그레이션 검토 필요 " * 25
    )
    memory_store_many(
        drafts=[draft(me, rule, "repository_rule", scope_kind="repo", scope_ref="atlas-api")],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    count = get_embedder().count_tokens  # the model's tokenizer, kept before it breaks
    settings.MEMLEDGER_EMBEDDER = {
        **django_settings.MEMLEDGER_EMBEDDER,
        "MODEL_PATH": str(tmp_path / "no-such-model"),
    }
    for max_tokens, items in ((1000, 0), (2500, 1)):  # it costs 1,046 of the model's tokens
        body = {
            "query": "rules for atlas-api",
            "intent": "apply_project_rules",
            "context": {"user_id": "dana", "repository_id": "atlas-api"},
            "budget": {"max_tokens": max_tokens},
        }
        data = api_client.post("/api/v1/retrieve", body, format="json").json()
        assert data["degraded"] is True and len(data["items"]) == items, max_tokens
        assert count(data["prompt"]) <= data["prompt_tokens"] <= max_tokens


def test_the_prompt_fits_max_tokens_even_with_a_clarification(world):
    me = world["memories"]["mine_repo"].subject
    inferred = {"authority": "model_inference", "source_type": "model_inference"}
    memory_store_many(
        drafts=[
            draft(me, "Deploys go to eu-west-1.", memory_key="deploy.region", **inferred),
            draft(me, "Deploys go to us-east-1.", memory_key="deploy.region", **inferred),
        ],
        principal=SystemPrincipal(tenant_id=me.tenant_id),
    )
    count = get_embedder().count_tokens
    roomy = ask(world["principal"], "where do deploys go?", **ATLAS_API)
    assert "deploy.region" in roomy.prompt  # the clarification line, when it fits
    for max_tokens in (16, 40, 80):
        small = Budget(max_items=8, max_tokens=max_tokens, max_items_per_type=3)
        result = ask(world["principal"], "where do deploys go?", budget=small, **ATLAS_API)
        assert count(result.prompt) == result.prompt_tokens <= max_tokens, result.prompt
        assert [c.memory_key for c in result.clarifications] == ["deploy.region"]


def test_each_candidate_carries_the_ranks_and_stores_that_found_it(world):
    query = "every endpoint needs an OpenAPI entry"
    request = RetrievalRequest(query=query, user_id="dana", **ATLAS_API)
    subject_id, _, policy, _, _ = lookup_subject_and_policy(tenant_id=world["principal"].tenant_id,
                                                   user_id="dana")  # fmt: skip
    ctx = build_context(principal=world["principal"], request=request, subject_id=subject_id)
    plan_ = build_plan(mode=RetrievalMode.HYBRID, intent="", ctx=ctx, policy=policy, query=query)
    found, stores = fetch_candidates(
        ctx=ctx, plan=plan_, query=query, query_vector=get_embedder().embed([query])[0],
        now=timezone.now(), policy=policy,
    )  # fmt: skip
    assert stores == ["vector", "fulltext", "structured"]
    by_id = {c.id: c for c in found}
    assert len(by_id) == len(found)  # one row per memory, whichever stores found it
    rule = by_id[str(world["memories"]["mine_repo"].id)]
    assert rule.sources == {"vector", "fulltext", "structured"}
    assert rule.vector_rank == 1 and rule.fulltext_rank == 1 and rule.fulltext_score > 0
    for c in found:
        assert (c.vector_rank is not None) == ("vector" in c.sources)
        assert (c.fulltext_rank is not None) == ("fulltext" in c.sources)
        assert c.fulltext_score == 0.0 or "fulltext" in c.sources
    vector_ranks = sorted(c.vector_rank for c in found if c.vector_rank is not None)
    assert vector_ranks == list(range(1, len(vector_ranks) + 1))
    by_rank = sorted((c for c in found if c.vector_rank), key=lambda c: c.vector_rank)
    assert [c.semantic for c in by_rank] == sorted((c.semantic for c in by_rank), reverse=True)


def test_full_text_scores_are_bm25_over_the_subject_s_eligible_rows(tenant, agent):
    # The reference, in Python: n and the mean length over the subject's eligible rows, each
    # query lexeme's document frequency over them, and for every row matching any lexeme
    # sum(idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * len / avglen))) over the lexemes it holds.
    me = SubjectFactory(tenant=tenant, external_id="bm25")
    texts = [
        "Deploys of the api go out on Friday after the staging checks.",
        "The staging database is rebuilt every night.",
        "Dana prefers short answers.",
        "The api gateway caches responses for five minutes, staging included, and the "
        "database behind it keeps a replica in another region for failover drills.",
        "Friday is the team's quiet day.",
        "Deploy freezes last from December 20 to January 3.",
        "A long note about lunch, coffee, the office plants and nothing else at all.",
    ]
    stored = memory_store_many(
        drafts=[draft(me, text, "episode") for text in texts],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    principal = AgentPrincipal.from_agent(agent)
    query = "deploy the api on Friday with the staging database"
    request = RetrievalRequest(query=query, user_id="bm25")
    subject_id, _, policy, _, _ = lookup_subject_and_policy(tenant_id=tenant.id, user_id="bm25")
    ctx = build_context(principal=principal, request=request, subject_id=subject_id)
    plan_ = build_plan(mode=RetrievalMode.HYBRID, intent="", ctx=ctx, policy=policy, query=query)
    found, stores = fetch_candidates(
        ctx=ctx, plan=plan_, query=query, query_vector=None, now=timezone.now(), policy=policy
    )
    assert "fulltext" in stores

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id::text, tsvector_to_array(search_vector), length(search_vector) "
            "FROM memory_core_memory WHERE id = ANY(%s)",
            [[m.id for m in stored]],
        )
        rows = cursor.fetchall()
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", [query])
        lexemes = set(cursor.fetchone()[0])
    n, avglen = len(rows), max(sum(r[2] for r in rows) / len(rows), 1)
    df = {lex: sum(lex in r[1] for r in rows) for lex in lexemes}
    expected = {}
    for id_, row_lexemes, length in rows:
        matched = lexemes & set(row_lexemes)
        if matched:
            norm = 1 + 1.2 * (0.25 + 0.75 * length / avglen)
            expected[id_] = sum(
                math.log(1 + (n - df[lex] + 0.5) / (df[lex] + 0.5)) * 2.2 / norm for lex in matched
            )
    assert len(expected) == 5 and max(df.values()) >= 2  # common and rare lexemes both

    ranked = sorted((c for c in found if c.fulltext_rank), key=lambda c: c.fulltext_rank)
    assert {c.id for c in ranked} == set(expected)
    for c in ranked:
        assert c.fulltext_score == pytest.approx(expected[c.id], rel=1e-12)
    assert [c.id for c in ranked] == sorted(expected, key=lambda i: (-expected[i], i))


def test_when_vector_and_full_text_both_fail_the_structured_stores_still_answer(world, monkeypatch):
    build = candidates.build_candidate_sql

    def failing_unless_structured_only(**kw):
        sql, params, stores = build(**kw)
        if {"vector", "fulltext"} & set(stores):  # division by zero: a DataError, not a 503
            sql = sql.replace(" WHERE m.tenant_id", " WHERE 1 / 0 = 1 AND m.tenant_id")
        return sql, params, stores

    monkeypatch.setattr(candidates, "build_candidate_sql", failing_unless_structured_only)
    result = ask(world["principal"], "atlas-api staging deploy DATABASE_URL", **ATLAS_API)
    # Two statements failed, each rolled back to its own savepoint: the transaction still
    # answers from the structured stores and stores the trace.
    assert result.degraded and result.trace["degraded"]["reason"] == "search_failed"
    assert result.trace["stores_queried"] == ["structured"]
    assert str(world["memories"]["mine_repo"].id) in {c.id for c in result.items}
    assert RetrievalTrace.objects.filter(pk=result.trace_id, degraded=True).exists()


@pytest.mark.parametrize("query", ["the and of", "!!! ??", "Ünïcödé ünd ñandú"])
def test_a_query_without_usable_lexemes_still_answers_from_the_vector_store(world, query):
    # No lexeme (stop words, punctuation) or foreign words: the full-text store finds nothing,
    # nothing fails, and the vector and structured stores still answer, not degraded.
    result = ask(world["principal"], query, **ATLAS_API)
    assert not result.degraded
    assert result.trace["stores_queried"] == ["vector", "fulltext", "structured"]
    sources = {s for c in result.trace["candidates"] for s in c["sources"]}
    assert "vector" in sources
    if query != "Ünïcödé ünd ñandú":
        assert "fulltext" not in sources


def test_full_text_reads_a_querys_first_lexemes_only(tenant, agent):
    """BM25's cost is the pooled rows times the query's lexemes: a 4,000-character query of a
    thousand words the rows hold took seconds. The store reads the first
    ``MAX_QUERY_LEXEMES`` distinct lexemes, in the order the query says them, and scores
    exactly as for a query of those alone."""
    me = SubjectFactory(tenant=tenant, external_id="long")
    words = [f"zeta{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(90)]
    first, late = memory_store_many(
        drafts=[
            draft(me, f"Note about {words[0]} and the weather.", "episode"),
            draft(me, f"Note about {words[80]} and the garden.", "episode"),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    principal = AgentPrincipal.from_agent(agent)
    limit = candidates.MAX_QUERY_LEXEMES
    assert limit < 80

    def full_text(query):
        request = RetrievalRequest(query=query, user_id="long")
        subject_id, _, policy, _, _ = lookup_subject_and_policy(tenant_id=tenant.id, user_id="long")
        ctx = build_context(principal=principal, request=request, subject_id=subject_id)
        plan_ = build_plan(
            mode=RetrievalMode.HYBRID, intent="", ctx=ctx, policy=policy, query=query
        )
        found, _ = fetch_candidates(
            ctx=ctx, plan=plan_, query=query, query_vector=None, now=timezone.now(), policy=policy
        )
        return {c.id: c.fulltext_score for c in found if c.fulltext_rank}

    # Reversed, so that the query's order is not the lexemes' alphabetical order.
    long_query = " ".join(reversed(words))
    said_first = list(reversed(words))[:limit]

    scores = full_text(long_query)

    assert str(late.id) in scores and str(first.id) not in scores  # words[80] is said early
    assert scores == full_text(" ".join(said_first))


def test_rows_below_the_confidence_floor_do_not_crowd_a_usable_memory_out_of_every_store(
    tenant, agent
):
    """Stop 60's audit of retrieval found that the policy's confidence floor (and prompt
    sensitivity cap) applied in stage 5 only: 11 guesses a model wrote with confidence 0.2
    (admission keeps them, its floor is 0.0), worded like the question, filled the vector
    and full-text stores' ``max_candidates`` (10 here; the default 40 the same with 41),
    stage 5 rejected them all, and the explicit memory that answered was never a candidate:
    the package was empty. Every store now leaves them out (``candidates.owner_filter``), as
    it leaves out rows of another environment, so they are in no trace either."""
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retrieval"] = {"max_candidates": 10}
    policy_publish(tenant=tenant, document=document, note="smaller store limits")
    me = SubjectFactory(tenant=tenant, external_id="dana")
    guesses = [
        MemoryDraft(
            subject=me,
            memory_type="episode",
            content=f"Which tea does Dana drink? Guess {i}.",
            authority="model_inference",
            source_type="model_inference",
            confidence=0.2,
        )
        for i in range(11)
    ]
    answer = MemoryDraft(
        subject=me,
        memory_type="episode",
        content="During the long onboarding call last spring, Dana said that her favourite "
        "drink is jasmine tea with honey.",
        authority="explicit_user",
        source_type="user_input",
        confidence=1.0,
    )
    *_, stored = memory_store_many(
        drafts=[*guesses, answer], principal=SystemPrincipal(tenant_id=tenant.id)
    )
    result = ask(AgentPrincipal.from_agent(agent), "Which tea does Dana drink?", intent="recall")
    assert [c.id for c in result.items] == [str(stored.id)], result.trace["counts"]
    assert [c["id"] for c in result.trace["candidates"]] == [str(stored.id)]
    assert not result.trace["rejections"]


UMLAUT_OTHERS = [
    "The office coffee machine vendor contract renews in May.",
    "Coffee machine maintenance is handled by the vendor under contract.",
    "The vendor contract for the office coffee machine was renegotiated.",
    "Office coffee machine broke; the vendor was called under the contract.",
]
UMLAUT_ANSWER = "Herr Müller-Lüdenscheidt signed for us."


def _umlaut_package(tenant, agent, form: str) -> tuple[list[str], str, str]:
    subject = SubjectFactory(tenant=tenant, external_id=f"dana-{form.lower()}")
    *_, answer = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=subject,
                memory_type="episode",
                content=unicodedata.normalize(form, text),
                authority="explicit_user",
                source_type="user_input",
            )
            for text in [*UMLAUT_OTHERS, UMLAUT_ANSWER]
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    result = retrieve(
        principal=AgentPrincipal.from_agent(agent),
        request=RetrievalRequest(
            query="Who is Müller-Lüdenscheidt at the coffee machine vendor?",
            user_id=subject.external_id,
            intent="recall",
        ),
    )
    return [c.id for c in result.items], str(answer.id), answer.content


def test_a_memory_written_in_nfd_is_found_as_its_nfc_spelling_is(tenant, agent):
    """Stop 60's audit of retrieval found that content was stored as the client sent it, and
    a macOS client sends NFD ("ü" as "u" + U+0308): PostgreSQL's parser split the word at the
    combining mark, so a query typed in NFC matched it in neither the full-text store nor the
    plan's entities, and "Herr Müller-Lüdenscheidt signed for us.", the package's first item
    when written in NFC, was cut by the type quota when written in NFD. The write path now
    stores content in NFC, and the query and the entity match are read in NFC."""
    nfc_items, nfc_answer, _ = _umlaut_package(tenant, agent, "NFC")
    assert nfc_answer in nfc_items
    nfd_items, nfd_answer, stored = _umlaut_package(tenant, agent, "NFD")
    assert stored == UMLAUT_ANSWER  # in NFC
    assert nfd_answer in nfd_items
