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


def _get(name):
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(current_setting(%s, true), '')", [name])
        return cursor.fetchone()[0]


def _set_local(name, value):
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [name, value])


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
        saved = (_get(TENANT_SETTING), _get(PLATFORM_SETTING))
        _set_local(TENANT_SETTING, "")
        _set_local(PLATFORM_SETTING, "off")
        try:
            return self.get_response(request)
        finally:
            if not connection.needs_rollback:
                _set_local(TENANT_SETTING, saved[0])
                _set_local(PLATFORM_SETTING, saved[1])
