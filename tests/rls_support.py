"""Row-level security in the test process.

The suite connects as the application role, like web and worker processes. Fixtures and
assertions in the test body are platform work (they build and inspect several tenants), so
the test thread's connections run in platform mode; every request the test client makes is
put back to "no tenant, no platform" first (``RequestIsolationMiddleware``), so the request
path is bound by RLS exactly as in production and must set its tenant itself. The live
server's threads and the Celery worker subprocess never get platform mode.
"""

import threading

from django.db import connection
from django.db.backends.signals import connection_created

from memory_core.rls import PLATFORM_SETTING, TENANT_SETTING


def _platform_for_test_thread(sender, connection, **kwargs):
    if threading.current_thread() is not threading.main_thread():
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, 'on', false)", [PLATFORM_SETTING])


def enable_test_platform_mode() -> None:
    connection_created.connect(_platform_for_test_thread, dispatch_uid="memledger-test-rls")


def _swap(tenant: str, platform: str) -> tuple[str, str]:
    """Set both settings locally; return the previous values (one round trip).

    Runs on the raw connection so query-count assertions see only the app's own queries.
    """
    row = connection.connection.execute(
        "SELECT coalesce(current_setting(%s, true), ''), coalesce(current_setting(%s, true), ''),"
        " set_config(%s, %s, true), set_config(%s, %s, true)",
        [TENANT_SETTING, PLATFORM_SETTING, TENANT_SETTING, tenant, PLATFORM_SETTING, platform],
    ).fetchone()
    return row[0], row[1]


class RequestIsolationMiddleware:
    """Run a test-client request without the test body's platform mode, then restore it.

    Only acts when a transaction is already open around the request (a test's transaction);
    in production, and in the live server's threads, a request starts with no transaction.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not connection.in_atomic_block or threading.current_thread() is not (
            threading.main_thread()
        ):
            return self.get_response(request)
        connection.ensure_connection()
        saved = _swap("", "off")
        try:
            return self.get_response(request)
        finally:
            if not connection.needs_rollback:
                _swap(*saved)


def owner_conninfo() -> dict:
    """psycopg keywords (host, port, user, password) of the test server as the owner role."""
    from django.conf import settings

    params = connection.get_connection_params()
    params["user"] = settings.MEMLEDGER_DB_OWNER["USER"]
    if settings.MEMLEDGER_DB_OWNER.get("PASSWORD"):
        params["password"] = settings.MEMLEDGER_DB_OWNER["PASSWORD"]
    return {k: v for k, v in params.items() if k in ("host", "port", "user", "password")}


def owner_execute(*statements: str) -> None:
    """Run DDL/maintenance on the test database as the owner (the app role may not).

    Uses its own connection, so the caller's rows must be committed (a transactional test).
    """
    import psycopg

    dbname = connection.get_connection_params()["dbname"]
    with psycopg.connect(**owner_conninfo(), dbname=dbname, autocommit=True) as c:
        for statement in statements:
            c.execute(statement)


def run_as_a_migration(sql: str) -> None:
    """Run a data migration's ``sql`` as the migration runs it on this test's connection (it
    turns platform mode on, then off), and give the connection its mode back."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting(%s, true)", [PLATFORM_SETTING])
        (mode,) = cursor.fetchone()
        cursor.execute(sql)
        cursor.execute("SELECT set_config(%s, %s, true)", [PLATFORM_SETTING, mode or ""])
