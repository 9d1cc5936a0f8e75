"""Shared fixtures: real PostgreSQL with pgvector (embedded unless DATABASE_URL is set)."""

import pytest
from django.test.utils import override_settings
from rest_framework.test import APIClient

from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.rls import owner_connection
from memory_core.services.api_keys import api_key_create
from memory_core.services.policy import policy_ensure
from tests.clients import client_for
from tests.factories import AgentFactory, SubjectFactory, TenantFactory
from tests.rls_support import enable_test_platform_mode


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_keepdb):
    """Create and migrate the test database as the owner; run the tests as the app role.

    The application role may not create databases or change the schema (row-level
    security, docs/security.md), so creation and teardown switch to the owner. Test-only
    grant: TRUNCATE, so transactional tests can flush between tests.
    """
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        with owner_connection():
            db_cfg = setup_databases(verbosity=0, interactive=False, keepdb=django_db_keepdb)
            with connection.cursor() as cursor:
                cursor.execute(
                    f"GRANT TRUNCATE ON ALL TABLES IN SCHEMA public TO "
                    f"{settings.MEMLEDGER_DB_APP_ROLE}"
                )
        enable_test_platform_mode()
    yield
    with django_db_blocker.unblock(), owner_connection():
        own = _end_leftover_sessions()
        teardown_databases(db_cfg, verbosity=0, keepdb=django_db_keepdb)
    if own:
        pytest.fail(
            f"{len(own)} connection(s) of this test process were still open on the test"
            f" database when the run ended (a test's thread, or a fixture, did not close its"
            f" connection): {'; '.join(own)}",
            pytrace=False,
        )


def _end_leftover_sessions() -> list[str]:
    """End the sessions still open on the test database, so that it can be dropped; return
    those this process opened, described.

    Every test is over here, and the teardown's own connection is the owner's, made for it:
    a session of this process (``application_name``, config/settings/test.py) is a
    connection a test or a fixture did not close, and the caller fails the run with it once
    the database is dropped. Two were found by their DROP DATABASE failing ("being accessed
    by other users"): tests/deletion/test_ledger.py's appending thread's, and the browser
    tests' (tests/browser/conftest.py). A session of another process (a Celery worker or a
    command a test started and left running) gets a warning. An owner that may not signal
    the application role's sessions (not a superuser) leaves them, and the drop fails.
    """
    import warnings

    from django.conf import settings
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            # pg_terminate_backend in the select list, not the WHERE clause: the planner may
            # order a WHERE clause's terms as it likes, and no other database's session may
            # be ended.
            cursor.execute(
                "SELECT application_name, pid, usename, backend_start, state, left(query, 120),"
                " pg_terminate_backend(pid, 5000)"
                " FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND backend_type = 'client backend'"
            )
            ended = [row[:-1] for row in cursor.fetchall() if row[-1]]
    except DatabaseError:
        return []
    mine = settings.DATABASES["default"]["OPTIONS"]["application_name"]
    own, others = [], []
    for application, pid, user, started, state, query in ended:
        described = f"backend {pid}, {user} since {started:%H:%M:%S}, {state}, last {query!r}"
        if application == mine:
            own.append(described)
        else:
            others.append(f"{application or 'no name'}: {described}")
    if others:
        warnings.warn(
            f"{len(others)} session(s) of other processes were left open on the test database"
            f" and ended before dropping it: {'; '.join(others)}",
            stacklevel=1,
        )
    return own


def _tenant_with_policy():
    """A tenant and its version 1 of the defaults, recorded as journaled: a test's transaction
    never commits, so ``policy_ensure``'s on-commit append does not run, and the deletion
    sweep would append the line a service's commit had (tests/deletion/test_policy_journal.py
    journals versions for real)."""
    from django.utils import timezone

    from memory_core.models import PolicyVersion

    tenant = TenantFactory()
    version = policy_ensure(tenant=tenant)
    PolicyVersion.objects.filter(pk=version.pk).update(journaled_at=timezone.now())
    return tenant


@pytest.fixture
def tenant(db):
    return _tenant_with_policy()


@pytest.fixture
def other_tenant(db):
    return _tenant_with_policy()


@pytest.fixture
def subject(tenant):
    return SubjectFactory(tenant=tenant)


@pytest.fixture
def agent(tenant):
    return AgentFactory(tenant=tenant)


@pytest.fixture
def agent_principal(agent):
    return AgentPrincipal.from_agent(agent)


@pytest.fixture
def system_principal(tenant):
    return SystemPrincipal(tenant_id=tenant.id)


@pytest.fixture
def api_key(agent):
    """Return the raw API key of ``agent``."""
    _, raw_key = api_key_create(agent=agent, name="test")
    return raw_key


@pytest.fixture
def api_client(api_key):
    """An API client authenticated as ``agent``."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    return client


@pytest.fixture
def other_api_client(other_tenant):
    """An API client of an agent in another tenant."""
    return client_for(AgentFactory(tenant=other_tenant))


@pytest.fixture
def broken_model():
    """The configured model, broken: every embedding raises (as unreadable weights would)."""
    backend = "tests.memory_core.retrieval.test_pipeline.FailingEmbedder"
    with override_settings(MEMLEDGER_EMBEDDER={"BACKEND": backend, "DIMENSIONS": 384}):
        yield


@pytest.fixture
def evaluation(settings, tmp_path):
    """A finished evaluation run the health page shows (and no other run's results): the
    portal's tests and the browser's."""
    result = tmp_path / "eval.json"
    result.write_text(
        '{"dataset": "seed-examples", "cases": 9, "failures": [],'
        ' "system": {"precision_at_k": 0.9167, "leakage_rate": 0.0, "by_tag": {}},'
        ' "baseline_vector_topk": {"precision_at_k": 0.193, "leakage_rate": 0.0},'
        ' "no_memory": {"precision_at_k": 0.0, "leakage_rate": 0.0}}'
    )
    settings.MEMLEDGER_EVALUATION_RESULTS = [str(result)]
    settings.DATA_DIR = tmp_path  # no results of other runs in the shared data folder
