"""Failure behaviour: the safe failure is reduced personalization, never fabricated continuity.

DESIGN.md, "When things fail": a vector search that fails degrades the read to the structured
and full-text stores (``degraded``), and a cache never serves a memory after its deletion,
whatever the cache backend does.
"""

import threading

import psycopg
import pytest
from django.db import connection
from django.test.utils import override_settings

from memory_core import retrieval_cache
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request, subject_deletion_queue
from memory_core.embeddings import EmbeddingError, SentenceTransformerEmbedder, get_embedder
from memory_core.models import DeletionOperation, DeletionStep, Memory
from memory_core.principals import SystemPrincipal
from memory_core.retrieval import candidates
from memory_core.rls import tenant_scope
from memory_core.services.memories import MemoryDraft, memory_store_many
from memory_core.tasks import reembed_memory
from tests.factories import SubjectFactory
from tests.rls_support import owner_conninfo

pytestmark = pytest.mark.django_db

URL = "/api/v1/retrieve"
# Nothing listens on port 1: every command to this "Redis" is refused at once.
DEAD_REDIS = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


@pytest.fixture
def dana(tenant):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    drafts = [
        MemoryDraft(subject=me, memory_type="repository_rule", content="In atlas-api every "
                    "endpoint needs an OpenAPI entry.", authority="explicit_user",
                    source_type="user_input", scope_kind="repo", scope_ref="atlas-api"),
        MemoryDraft(subject=me, memory_type="incident", content="The atlas-api staging "
                    "deploy failed because DATABASE_URL was unset.", authority="explicit_user",
                    source_type="user_input", scope_kind="repo", scope_ref="atlas-api"),
    ]  # fmt: skip
    rule, incident = memory_store_many(
        drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id)
    )
    return me, rule, incident


@pytest.fixture
def slow_vector_statement(monkeypatch):
    """The candidate statement that carries the query vector runs past a statement_timeout of
    300 ms (as the exact cosine scan of a very large subject would); without it, it is fast."""
    build = candidates.build_candidate_sql

    def slow_with_the_vector(**kw):
        sql, params, stores = build(**kw)
        if kw.get("query_vector") is not None:
            sql = sql.replace(
                " WHERE m.tenant_id", " WHERE (SELECT pg_sleep(5)::text) = '' AND m.tenant_id"
            )
        return sql, params, stores

    monkeypatch.setattr(candidates, "build_candidate_sql", slow_with_the_vector)
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = '300ms'")
    yield
    with connection.cursor() as cursor:
        cursor.execute("RESET statement_timeout")


@pytest.mark.parametrize("intent", ["", "apply_project_rules"])
def test_a_vector_statement_past_its_statement_timeout_degrades_instead_of_a_503(
    api_client, dana, slow_vector_statement, intent
):
    _, rule, incident = dana
    response = api_client.post(
        URL,
        {
            "query": "atlas-api staging deploy DATABASE_URL",
            "intent": intent,
            "context": {"user_id": "dana", "project_id": "atlas", "repository_id": "atlas-api"},
        },
        format="json",
    )
    assert response.status_code == 200, response.content[:300]
    data = response.json()
    assert data["degraded"] is True
    ids = {item["id"] for item in data["items"]}
    assert str(rule.id) in ids  # the structured store still answers
    if not intent:
        assert str(incident.id) in ids  # and the full-text one


def test_when_every_candidate_statement_times_out_the_answer_is_a_503_after_two(
    api_client, dana, monkeypatch
):
    build = candidates.build_candidate_sql
    statements = []

    def always_slow(**kw):
        sql, params, stores = build(**kw)
        statements.append(stores)
        sql = sql.replace(
            " WHERE m.tenant_id", " WHERE (SELECT pg_sleep(5)::text) = '' AND m.tenant_id"
        )
        return sql, params, stores

    monkeypatch.setattr(candidates, "build_candidate_sql", always_slow)
    api_client.raise_request_exception = False
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = '300ms'")
    try:
        response = api_client.post(
            URL,
            {"query": "atlas-api staging deploy", "context": {"user_id": "dana"}},
            format="json",
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")
    assert response.status_code == 503, response.content[:300]
    assert response.json()["error"]["code"] == "memory_unavailable"
    # The vector statement, then one without the vector; never a third wait.
    assert len(statements) == 2


# --- the retrieval cache --------------------------------------------------------------------


def _cached(tenant, subject, memory):
    retrieval_cache.cache_set(
        tenant_id=tenant.id, subject_id=subject.id, key="k", value="pkg", memory_ids=[memory.id]
    )


def _get(tenant, subject):
    return retrieval_cache.cache_get(tenant_id=tenant.id, subject_id=subject.id, key="k")


def test_a_cache_that_is_down_is_a_miss_and_keeps_nothing_instead_of_an_error(tenant, dana):
    me, rule, _ = dana
    with override_settings(CACHES=DEAD_REDIS):
        _cached(tenant, me, rule)  # no error: nothing is kept
        assert _get(tenant, me) is None


def test_a_read_that_cannot_see_the_tenants_ledger_serves_nothing(tenant, other_tenant, dana):
    me, rule, _ = dana
    _cached(tenant, me, rule)
    deletion_request(principal=SystemPrincipal(tenant_id=tenant.id), memory_id=rule.id)
    # The deletion's cache step has not run (no worker yet): only the ledger check stands
    # between the entry and the reader. A process acting for no tenant, or for another one,
    # sees no tombstone of this tenant under row-level security.
    with _acting_for(""):
        assert _get(tenant, me) is None
    with _acting_for(str(other_tenant.id)):
        assert _get(tenant, me) is None
    with _acting_for(str(tenant.id)):
        assert _get(tenant, me) is None


def test_an_entry_of_a_subject_whose_delete_everything_is_queued_is_not_served(
    tenant, dana, agent_principal
):
    me, rule, _ = dana
    _cached(tenant, me, rule)
    with _acting_for(str(tenant.id)):
        assert _get(tenant, me) == "pkg"
    subject_deletion_queue(principal=agent_principal, subject_id=me.id)  # no task sent yet
    with _acting_for(str(tenant.id)):
        assert _get(tenant, me) is None


class _acting_for:
    """Act, in the test's transaction, for ``tenant`` ("" for none), platform mode off."""

    def __init__(self, tenant: str):
        self.tenant = tenant

    def __enter__(self):
        self.saved = _settings(self.tenant, "off")

    def __exit__(self, *exc):
        _settings(*self.saved)


def _settings(tenant: str, platform: str) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(current_setting('memledger.tenant_id', true), ''), "
            "coalesce(current_setting('memledger.platform', true), ''), "
            "set_config('memledger.tenant_id', %s, true), "
            "set_config('memledger.platform', %s, true)",
            [tenant, platform],
        )
        row = cursor.fetchone()
    return row[0], row[1]


def test_a_deletion_while_the_cache_is_down_is_not_completed_until_the_cache_step_runs(
    tenant, dana
):
    me, rule, _ = dana
    _cached(tenant, me, rule)
    operation = deletion_request(principal=SystemPrincipal(tenant_id=tenant.id), memory_id=rule.id)
    with override_settings(CACHES=DEAD_REDIS), tenant_scope(tenant.id):
        status = deletion_run(operation_id=operation.id)
    assert status == DeletionOperation.State.PARTIAL
    steps = dict(operation.steps.values_list("store", "status"))
    assert steps["retrieval_cache"] == steps["summaries"] == DeletionStep.State.FAILED
    assert steps["primary"] == DeletionStep.State.VERIFIED
    # Meanwhile the entry is still in the cache under the old generation: never served.
    with _acting_for(str(tenant.id)):
        assert _get(tenant, me) is None
    with tenant_scope(tenant.id):
        assert deletion_run(operation_id=operation.id) == DeletionOperation.State.COMPLETED


# --- queued reprocessing ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_memory_task_whose_tombstone_check_hits_a_database_blip_is_retried_not_dropped(
    tenant,
):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    (memory,) = memory_store_many(
        drafts=[MemoryDraft(subject=me, memory_type="user_preference", content="Dana prefers "
                            "short answers.", authority="explicit_user", source_type="user_input")],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )  # fmt: skip
    Memory.objects.filter(pk=memory.pk).update(embedding=None, embedding_model="")
    # Another session holds the ledger's table (a migration, a VACUUM FULL) for 0.8 s: the
    # task's tombstone check waits past its lock_timeout, a transient OperationalError.
    locked, release = threading.Event(), threading.Event()

    def hold_the_ledger():
        dbname = connection.get_connection_params()["dbname"]
        with psycopg.connect(**owner_conninfo(), dbname=dbname) as other:
            other.execute("LOCK TABLE memory_core_tombstone IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(0.8)

    holder = threading.Thread(target=hold_the_ledger)
    holder.start()
    assert locked.wait(10)
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '300ms'")
    try:
        result = reembed_memory.apply(args=[str(memory.id)], throw=False)
    finally:
        release.set()
        holder.join()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    assert result.get() == "reembedded"
    assert Memory.objects.get(pk=memory.pk).embedding is not None


# --- the embedding model ----------------------------------------------------------------------


class UnloadableEmbedder:
    """A backend that cannot even be made: its model folder is unreadable, say."""

    def __init__(self, **options):
        raise EmbeddingError("model folder unreadable")


class NanEmbedder(SentenceTransformerEmbedder):
    """Corrupt weights or a broken runtime: the model runs and answers NaN (``poison``), or
    infinities."""

    poison = float("nan")

    def embed(self, texts):
        return [[self.poison] * self.dimensions for _ in texts]


class InfinityEmbedder(NanEmbedder):
    poison = float("inf")


@pytest.mark.parametrize("backend", ["NanEmbedder", "InfinityEmbedder"])
def test_a_model_answering_no_numbers_is_a_503_for_writes_and_degrades_retrieval(
    api_client, dana, backend
):
    """PostgreSQL refuses such a vector ("NaN not allowed in vector"): the write answered 500
    where a model that raised answers 503 (stop 47's audit)."""
    get_embedder.cache_clear()
    path = f"tests.hardening.test_failure_review.{backend}"
    api_client.raise_request_exception = False
    try:
        with override_settings(MEMLEDGER_EMBEDDER={"BACKEND": path, "DIMENSIONS": 384}):
            before = Memory.objects.count()
            body = {
                "subject": "dana", "memory_type": "user_preference", "memory_key": "style.a",
                "scope": "global", "content": "User prefers concise technical answers.",
                "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
            }  # fmt: skip
            write = api_client.post("/api/v1/memories", body, format="json")
            assert write.status_code == 503, write.content[:300]
            assert write.json()["error"]["code"] == "embedding_unavailable"
            assert write["Retry-After"]
            assert Memory.objects.count() == before
            query = {"query": "atlas-api staging deploy", "context": {"user_id": "dana"}}
            read = api_client.post(URL, query, format="json")
            assert read.status_code == 200 and read.json()["degraded"] is True
    finally:
        get_embedder.cache_clear()


@pytest.fixture
def unloadable_model():
    backend = "tests.hardening.test_failure_review.UnloadableEmbedder"
    with override_settings(MEMLEDGER_EMBEDDER={"BACKEND": backend, "DIMENSIONS": 384}):
        yield


def test_a_model_that_cannot_be_made_is_a_503_for_writes_and_degrades_retrieval(
    api_client, dana, unloadable_model
):
    api_client.raise_request_exception = False
    before = Memory.objects.count()
    write = api_client.post(
        "/api/v1/memories",
        {
            "subject": "dana", "memory_type": "user_preference", "memory_key": "style.answers",
            "scope": "global", "content": "User prefers concise technical answers.",
            "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
        },
        format="json",
    )  # fmt: skip
    assert write.status_code == 503, write.content[:300]
    assert write.json()["error"]["code"] == "embedding_unavailable"
    assert Memory.objects.count() == before
    read = api_client.post(
        URL, {"query": "atlas-api staging deploy", "context": {"user_id": "dana"}}, format="json"
    )
    assert read.status_code == 200 and read.json()["degraded"] is True
