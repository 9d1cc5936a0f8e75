"""PostgreSQL row-level security: the second wall behind every query's own tenant filter.

The suite connects as the application role. The test body runs in platform mode
(tests/rls_support.py); each test here drops to "no tenant" or to one tenant explicitly.
"""

import contextlib
import uuid

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from memory_core.models import IdempotencyRecord, Memory, MemoryEvent, PolicyVersion, Subject
from memory_core.rls import (
    PLATFORM_SETTING,
    TENANT_SETTING,
    current_tenant,
    platform_scope,
    tenant_atomic,
    tenant_scope,
    tenant_set,
)
from memory_core.subject_tokens import subject_token_create
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

# Tables that hold tenant data and so must be bound by RLS (migration 0005).
RLS_TABLES = {
    "memory_core_subject",
    "memory_core_memory",
    "memory_core_memoryevent",
    "memory_core_policyversion",
    "memory_core_admissiondecision",
    "memory_core_accessdenial",
    "memory_core_reviewitem",
    "memory_core_retrievaltrace",
    "memory_core_deletionoperation",
    "memory_core_deletionstep",
    "memory_core_tombstone",
    "memory_core_export",
    "memory_core_idempotencyrecord",
}
# Credentials that resolve a tenant, so they are read before one is known (docs/security.md).
EXEMPT = {
    "memory_core_tenant",
    "memory_core_agent",
    "memory_core_apikey",
    "memory_core_portalmembership",
}


def _no_tenant():
    """Drop the test body's platform mode for the rest of this test's transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, '', true)", [TENANT_SETTING])
        cursor.execute("SELECT set_config(%s, 'off', true)", [PLATFORM_SETTING])


def _count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 - constant names
        return cursor.fetchone()[0]


@pytest.fixture
def two_tenants(tenant, other_tenant):
    mine = MemoryFactory(subject=SubjectFactory(tenant=tenant), content="Mine: tabs.")
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other_tenant), content="Theirs: tabs.")
    MemoryEvent.objects.create(
        tenant=other_tenant, memory_id=theirs.id, action="created", actor_type="system"
    )
    return mine, theirs


def test_the_app_role_is_not_owner_superuser_or_bypassrls(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_user, r.rolsuper, r.rolbypassrls, r.rolcreatedb, r.rolcreaterole "
            "FROM pg_roles r WHERE r.rolname = current_user"
        )
        user, superuser, bypass, createdb, createrole = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)"
        )
        owned = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(*) FROM pg_database WHERE datdba = "
            "(SELECT oid FROM pg_roles WHERE rolname = current_user)"
        )
        owned_databases = cursor.fetchone()[0]
        cursor.execute("SELECT has_schema_privilege('public', 'CREATE')")
        may_create = cursor.fetchone()[0]
    assert user == settings.MEMLEDGER_DB_APP_ROLE
    assert (superuser, bypass, createdb, createrole) == (False, False, False, False)
    assert owned == 0 and owned_databases == 0
    assert may_create is False


def test_every_table_with_tenant_data_has_forced_rls_and_a_policy(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, "
            "(SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r'"
        )
        tables = {name: (rls, force, policies) for name, rls, force, policies in cursor}
        cursor.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND column_name = 'tenant_id'"
        )
        with_tenant = {row[0] for row in cursor}
    # A new table with a tenant column must be added to the policy migration (or exempted
    # here with a reason in docs/security.md).
    assert with_tenant - EXEMPT <= RLS_TABLES
    for table in RLS_TABLES:
        assert tables[table] == (True, True, 1), table


def test_a_raw_query_without_the_tenant_setting_gets_zero_rows(two_tenants):
    assert _count("memory_core_memory") >= 2  # platform mode (the test body) sees both
    _no_tenant()
    for table in sorted(RLS_TABLES):
        assert _count(table) == 0, table
    assert Memory.objects.count() == 0
    assert Subject.objects.count() == 0
    assert PolicyVersion.objects.count() == 0


def test_a_query_that_forgets_its_tenant_filter_sees_only_the_current_tenant(two_tenants):
    mine, theirs = two_tenants
    _no_tenant()
    with tenant_atomic(mine.tenant_id):
        assert current_tenant() == mine.tenant_id
        assert list(Memory.objects.values_list("id", flat=True)) == [mine.id]
        assert not Memory.objects.filter(pk=theirs.id).exists()
        assert not Memory.objects.filter(tenant_id=theirs.tenant_id).exists()
        assert MemoryEvent.objects.filter(memory_id=theirs.id).count() == 0
        with connection.cursor() as cursor:
            cursor.execute("SELECT id FROM memory_core_memory WHERE content LIKE '%%tabs%%'")
            assert [row[0] for row in cursor] == [mine.id]
    assert current_tenant() is None


def test_writes_into_another_tenant_are_refused(two_tenants):
    mine, theirs = two_tenants
    _no_tenant()
    with tenant_atomic(mine.tenant_id):
        # UPDATE/DELETE of an invisible row touch nothing.
        assert Memory.objects.filter(pk=theirs.id).update(confidence=0.1) == 0
        assert Memory.objects.filter(pk=theirs.id).delete()[0] == 0
        # INSERT of another tenant's row: WITH CHECK refuses it.
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            Subject.objects.create(tenant_id=theirs.tenant_id, external_id="smuggled")
        # Moving one's own row into another tenant: refused too.
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            Memory.objects.filter(pk=mine.id).update(tenant_id=theirs.tenant_id)
    with platform_scope("test: verify"):
        assert Memory.objects.get(pk=theirs.id).confidence == 1.0
        assert not Subject.objects.filter(external_id="smuggled").exists()


def test_a_chain_cannot_cross_tenants_even_when_the_predecessor_is_invisible(two_tenants):
    mine, theirs = two_tenants
    _no_tenant()
    with pytest.raises(DatabaseError, match="memory_chain_same_owner"):
        with tenant_atomic(mine.tenant_id):
            Memory.objects.filter(pk=theirs.id).update(status="superseded")  # no row: 0
            MemoryFactory(subject=mine.subject, supersedes_id=theirs.id, version=2)
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.django_db(transaction=True)
def test_scopes_for_tasks_and_commands_never_outlive_their_block(tenant, other_tenant):
    mine = MemoryFactory(subject=SubjectFactory(tenant=tenant))
    MemoryFactory(subject=SubjectFactory(tenant=other_tenant))
    with connection.cursor() as cursor:  # this connection as a worker's: no platform mode
        cursor.execute("SELECT set_config(%s, 'off', false)", [PLATFORM_SETTING])
    try:
        with pytest.raises(RuntimeError):  # SET LOCAL outside a transaction would vanish
            tenant_set(uuid.uuid4())
        assert Memory.objects.count() == 0
        with tenant_scope(tenant.id):
            # autocommit statements and separate transactions all act for the tenant
            assert list(Memory.objects.values_list("id", flat=True)) == [mine.id]
            with transaction.atomic():
                assert Memory.objects.count() == 1
            with transaction.atomic():
                Memory.objects.filter(pk=mine.id).update(confidence=0.5)
        assert current_tenant() is None
        assert Memory.objects.count() == 0
        with platform_scope("test: sweep"):
            assert Memory.objects.count() == 2
            with tenant_scope(other_tenant.id):  # a tenant narrows platform mode
                assert Memory.objects.count() == 1
            assert Memory.objects.count() == 2
        assert Memory.objects.count() == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, 'on', false)", [PLATFORM_SETTING])


@contextlib.contextmanager
def _as_a_worker():
    """Run the block with the connection as a web or worker process's: no tenant and no
    platform mode at session level (which outlives transactions), then platform mode again."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, '', false)", [TENANT_SETTING])
        cursor.execute("SELECT set_config(%s, 'off', false)", [PLATFORM_SETTING])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, '', false)", [TENANT_SETTING])
            cursor.execute("SELECT set_config(%s, 'on', false)", [PLATFORM_SETTING])


@pytest.mark.django_db(transaction=True)
def test_an_in_process_subject_token_leaves_no_tenant_on_the_connection(tenant, other_tenant):
    """``subject_token_create`` (docs/security.md: the backend's in-process way to issue a
    token) called in a transaction acting for a tenant left that tenant on the connection
    after the commit, so the connection's next request or task read the tenant's rows with
    no tenant set (stop 56's audit of isolation). ``tenant_scope`` inside a transaction read
    the transaction's own tenant as the previous value and restored it at session level."""
    mine = MemoryFactory(subject=SubjectFactory(tenant=tenant))
    MemoryFactory(subject=SubjectFactory(tenant=other_tenant))
    agent = AgentFactory(tenant=tenant)
    with _as_a_worker():
        with tenant_atomic(tenant.id):
            token = subject_token_create(tenant_id=tenant.id, agent_id=agent.id, user_id="user-9")
            assert token
            assert Subject.objects.filter(external_id="user-9").exists()
        leaked = list(Memory.objects.values_list("id", flat=True))
        assert current_tenant() is None
        assert leaked == [], f"a query with no tenant set read {leaked} (tenant A: {mine.id})"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scope", ["tenant", "platform"])
def test_a_scope_opened_inside_a_transaction_ends_with_it(tenant, other_tenant, scope):
    """A ``tenant_scope`` or ``platform_scope`` opened in a transaction acting for a tenant
    restored that tenant at session level on the way out, so it outlived the commit (stop
    56's audit of isolation)."""
    mine = MemoryFactory(subject=SubjectFactory(tenant=tenant))
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other_tenant))
    with _as_a_worker():
        with tenant_atomic(tenant.id):
            if scope == "tenant":
                with tenant_scope(other_tenant.id):
                    assert list(Memory.objects.values_list("id", flat=True)) == [theirs.id]
            else:
                with platform_scope("test: inside a transaction"):
                    assert Memory.objects.count() == 2
            assert list(Memory.objects.values_list("id", flat=True)) == [mine.id]
        assert current_tenant() is None
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting(%s, true)", [PLATFORM_SETTING])
            assert cursor.fetchone()[0] == "off"
        assert Memory.objects.count() == 0


def test_an_api_request_acts_for_its_key_tenant_only(api_client, two_tenants, tenant):
    response = api_client.get("/api/v1/whoami")
    assert response.status_code == 200
    assert response.json()["tenant_id"] == str(tenant.id)
    # The request's setting ended with the request: the test body is back in platform mode.
    assert Memory.objects.count() == 2


def test_policies_read_the_tenant_once_per_statement(two_tenants):
    """The settings are read in sub-selects (InitPlans), not per row: see docs/security.md."""
    mine, _ = two_tenants
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_expr(polqual, polrelid) FROM pg_policy")
        rules = [row[0] for row in cursor]
    assert rules and all("( SELECT" in rule for rule in rules if "tenant_id" in rule)
    _no_tenant()
    with tenant_atomic(mine.tenant_id), connection.cursor() as cursor:
        cursor.execute("EXPLAIN SELECT id FROM memory_core_memory WHERE content <> ''")
        plan = "\n".join(row[0] for row in cursor)
    assert "InitPlan" in plan


def test_idempotency_records_of_another_tenant_are_invisible_and_unwritable(
    api_client, other_api_client, tenant, other_tenant
):
    body = {
        "subject": "user-42",
        "memory_type": "user_preference",
        "scope": "global",
        "content": "User prefers concise answers.",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
    }
    for client in (api_client, other_api_client):
        response = client.post(
            "/api/v1/memories", body, format="json", HTTP_IDEMPOTENCY_KEY="same-key"
        )
        assert response.status_code == 201
    theirs = IdempotencyRecord.objects.get(tenant=other_tenant)
    _no_tenant()
    assert _count("memory_core_idempotencyrecord") == 0
    with tenant_atomic(tenant.id):
        # A query that forgets its tenant filter sees this tenant's record only.
        assert list(IdempotencyRecord.objects.values_list("tenant_id", flat=True)) == [tenant.id]
        assert IdempotencyRecord.objects.filter(pk=theirs.pk).delete()[0] == 0
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            IdempotencyRecord.objects.filter(tenant=tenant).update(tenant_id=other_tenant.id)
