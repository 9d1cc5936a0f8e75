"""The tenant the database connection acts for: PostgreSQL row-level security's input.

Every table that holds tenant data has ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` and one
policy (migration ``0005_issue7_row_level_security``) that lets a row through only when

- its tenant is the one in the setting ``memledger.tenant_id``, or
- no tenant is set and the setting ``memledger.platform`` is ``on`` (platform mode).

With neither set a query sees nothing and writes nothing. The application connects as a role
that owns nothing and has no BYPASSRLS, so this holds even for a query that forgets its own
tenant filter. The explicit filters stay in every query: RLS is the second wall.

How the setting is made:

- requests (API after the key resolves, portal after login): ``request_tenant_set`` runs
  ``set_config(..., true)`` (= ``SET LOCAL``) inside the request's transaction
  (``ATOMIC_REQUESTS``), so it ends with the transaction and never outlives the request
  (with the request's ``lock_timeout`` beside it);
- ``tenant_atomic(tenant_id)``: a transaction (or savepoint) acting for one tenant;
- Celery tasks and management commands commit in several transactions (a deletion step's
  progress must survive a later step's failure), so ``tenant_scope``/``platform_scope`` set the
  value for the connection's session for the duration of the work and always clear it
  afterwards (or close the connection if clearing fails), so it never outlives the work;
  opened inside a transaction, they set it for that transaction only, as ``tenant_atomic``
  does.

Platform mode is for memledger's own cross-tenant work: migrations' data steps, the Django
admin, sweeps that find stuck work in every tenant, and management commands. It is explicit
(a named scope at each call site), never the default, and a tenant set inside it narrows it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import uuid
from contextvars import ContextVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

TENANT_SETTING = "memledger.tenant_id"
PLATFORM_SETTING = "memledger.platform"


def _set(name: str, value: str, *, local: bool, using: str = DEFAULT_DB_ALIAS) -> None:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, %s)", [name, value, local])


def _get(name: str, using: str = DEFAULT_DB_ALIAS) -> str:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT coalesce(current_setting(%s, true), '')", [name])
        return cursor.fetchone()[0]


def current_tenant() -> uuid.UUID | None:
    """Return the tenant this connection acts for now, or None."""
    value = _get(TENANT_SETTING)
    return uuid.UUID(value) if value else None


def tenant_set(tenant_id) -> None:
    """Act for ``tenant_id`` until the current transaction ends (``SET LOCAL``).

    Must run inside a transaction: outside one the setting would vanish with the statement.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("tenant_set() needs a transaction (ATOMIC_REQUESTS or atomic()).")
    _set(TENANT_SETTING, str(uuid.UUID(str(tenant_id))), local=True)


def request_tenant_set(tenant_id) -> None:
    """``tenant_set`` for a web request (the API, the reviewer API, the portal), which also
    bounds every lock wait of the request's transaction by ``MEMLEDGER_REQUEST_LOCK_TIMEOUT``
    (``lock_timeout``, in the same statement: no extra round trip).

    A request that waits longer for a lock fails with ``LockNotAvailable`` (503 ``busy``)
    instead of holding its web worker until gunicorn's timeout kills it: a whole tenant's
    deletion, say, holds the tenant row for minutes, and every row the tenant's requests
    insert waits for it (its foreign key). Celery tasks and commands keep the server's
    default (no limit): their waits are part of their work.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("request_tenant_set() needs a transaction (ATOMIC_REQUESTS).")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config(%s, %s, true), set_config('lock_timeout', %s, true)",
            [TENANT_SETTING, str(uuid.UUID(str(tenant_id))), _request_lock_timeout()],
        )


def _request_lock_timeout() -> str:
    return f"{max(0, round(settings.MEMLEDGER_REQUEST_LOCK_TIMEOUT * 1000))}ms"


# The seconds ``request_lock_scope`` bounds a wait for a file lock by (``lock_timeout``
# reaches the database's locks alone), or None: no limit (a timeout of 0, as PostgreSQL's).
_file_lock_wait: ContextVar[float | None] = ContextVar("memledger_file_lock_wait", default=None)


@contextlib.contextmanager
def request_lock_scope():
    """Bound every lock wait of the block by ``MEMLEDGER_REQUEST_LOCK_TIMEOUT``, as
    ``request_tenant_set`` bounds a request's transaction: each transaction the block opens
    and each statement it runs in autocommit (the work a request does after its commit,
    ``commit_hooks.after_commit``), and the deletion journal's file lock
    (``file_lock_wait``). The previous ``lock_timeout`` is restored afterwards."""
    token = _file_lock_wait.set(settings.MEMLEDGER_REQUEST_LOCK_TIMEOUT or None)
    try:
        with _session_scope("lock_timeout", _request_lock_timeout()):
            yield
    finally:
        _file_lock_wait.reset(token)


def file_lock_wait() -> float | None:
    """Return the seconds a wait for a file lock may last here (``request_lock_scope``), or
    None: no limit (a task's or a command's wait is part of its work)."""
    return _file_lock_wait.get()


@contextlib.contextmanager
def tenant_atomic(tenant_id, *, savepoint: bool = True, using: str = DEFAULT_DB_ALIAS):
    """Run the block in a transaction (or savepoint) acting for ``tenant_id`` only, on the
    connection ``using`` (a read replica's, say: ``tenant_scope`` sets the default one's).

    Inside an outer transaction the previous tenant is restored on the way out: a local
    setting would otherwise last until the outer transaction ends.
    """
    with transaction.atomic(using=using, savepoint=savepoint):
        previous = _get(TENANT_SETTING, using)
        _set(TENANT_SETTING, str(uuid.UUID(str(tenant_id))), local=True, using=using)
        yield
        # Reached only on success; on an error the savepoint's rollback undoes the setting.
        _set(TENANT_SETTING, previous, local=True, using=using)


@contextlib.contextmanager
def _session_scope(name: str, value: str):
    if connection.in_atomic_block:
        # Inside a transaction (a caller's atomic block, a request's, a test's) the value is
        # set and restored for that transaction only: nothing inside it commits on its own.
        # The value read there may be the transaction's own (``tenant_atomic``,
        # ``request_tenant_set``), which hides the session's, and restoring it at session
        # level kept the tenant on the connection after the commit, so its next request or
        # task acted for that tenant (stop 56's audit of isolation).
        with _transaction_scope(name, value):
            yield
        return
    previous = _get(name)
    _set(name, value, local=False)
    # A connection closed and reopened inside the scope (a health check, a benchmark that
    # switches databases, a worker's reconnect) must act for the same tenant again: a fresh
    # session that silently saw nothing could, say, "verify" a deletion against no rows.
    thread = threading.get_ident()
    uid = f"memledger-rls-{name}-{uuid.uuid4()}"

    def reapply(sender, connection, **kwargs):
        if threading.get_ident() == thread and connection.alias == DEFAULT_DB_ALIAS:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config(%s, %s, false)", [name, value])

    connection_created.connect(reapply, weak=False, dispatch_uid=uid)
    try:
        yield
    finally:
        connection_created.disconnect(dispatch_uid=uid)
        try:
            _set(name, previous, local=False)
        except Exception:  # the connection is broken or aborted: never reuse it
            logger.warning("could not clear %s; closing the connection", name, exc_info=True)
            connection.close()


@contextlib.contextmanager
def _transaction_scope(name: str, value: str):
    previous = _get(name)
    _set(name, value, local=True)
    try:
        yield
    finally:
        try:
            _set(name, previous, local=True)
        except Exception:
            # The transaction is aborted: the rollback it needs before the connection can
            # run anything again undoes this setting too, so the connection stays usable.
            logger.debug("could not restore %s in an aborted transaction", name, exc_info=True)


@contextlib.contextmanager
def tenant_scope(tenant_id):
    """Act for ``tenant_id`` on this connection while the block runs (tasks, commands).

    Every transaction the block commits, and every autocommit statement, acts for this
    tenant; the previous value is restored afterwards. Inside a transaction the tenant is
    set for that transaction only, and restored before it ends.
    """
    with _session_scope(TENANT_SETTING, str(uuid.UUID(str(tenant_id)))):
        yield


@contextlib.contextmanager
def platform_scope(reason: str):
    """Run the block in platform mode: every tenant's rows, for memledger's own work.

    ``reason`` names the caller in the log. A tenant set inside the block narrows it again.
    """
    logger.debug("platform mode: %s", reason)
    with _session_scope(TENANT_SETTING, ""), _session_scope(PLATFORM_SETTING, "on"):
        yield


@contextlib.contextmanager
def owner_connection(alias: str = "default"):
    """Connect ``alias`` as the owner role (``settings.MEMLEDGER_DB_OWNER``) inside the block.

    For schema work only: ``manage.py migrate`` and the test suite's database creation. The
    owner is bound by FORCE ROW LEVEL SECURITY too (unless it is a superuser), so the block
    runs in platform mode for data migrations.
    """
    from django.conf import settings
    from django.db import connections

    conn = connections[alias]
    owner = getattr(settings, "MEMLEDGER_DB_OWNER", None) or {}
    saved = {key: conn.settings_dict.get(key) for key in owner}
    conn.close()
    conn.settings_dict.update(owner)
    try:
        yield conn
    finally:
        conn.close()
        conn.settings_dict.update(saved)


def _missing_hint(error: str) -> str:
    """What to do about a database or role the connection found missing."""
    if re.search(r'database "[^"]*" does not exist', error):
        # The embedded server creates its own database when it starts; any other is the
        # operator's (MEMLEDGER_DB_NAME, DATABASE_URL): migrate fills it, it does not make it.
        return (
            "Create the database first (CREATE DATABASE on its server), then run "
            "`python manage.py migrate`: it creates the tables and the application role."
        )
    return (
        "Run `python manage.py migrate` first: on a database never migrated it creates the "
        "application role this command connects as. A backup restored onto a new server was "
        "migrated already: create the role by hand (docs/operations.md, Restore procedure)."
    )


def platform_command(handle):
    """Run a management command's ``handle`` in platform mode (operator work, all tenants).

    What an operator can fix ends the command with a ``CommandError`` saying so, not a
    traceback: a database that does not exist yet, an embedding model that cannot load.
    """
    import functools

    @functools.wraps(handle)
    def wrapper(self, *args, **options):
        from django.core.management.base import CommandError
        from django.db import OperationalError, ProgrammingError, connection

        from memory_core.embeddings import EmbeddingError

        try:
            connection.ensure_connection()
        except OperationalError as exc:
            if "does not exist" not in str(exc):
                raise
            raise CommandError(f"{exc}\n{_missing_hint(str(exc))}") from exc
        try:
            with platform_scope(f"manage.py {self.__module__.rsplit('.', 1)[-1]}"):
                return handle(self, *args, **options)
        except EmbeddingError as exc:
            raise CommandError(f"The embedding model failed: {exc}") from exc
        except ProgrammingError as exc:
            # A database made and not migrated yet (or a restore's CREATE DATABASE before its
            # pg_restore): a traceback of "relation ... does not exist" (stop 54's audit of
            # the commands). A table missing from a migrated database stays a traceback.
            if getattr(exc.__cause__, "sqlstate", None) != UNDEFINED_TABLE or _has_tables():
                raise
            raise CommandError(
                f"Database {connection.settings_dict['NAME']!r} holds no memledger tables: run "
                "`python manage.py migrate` (or finish restoring it with pg_restore) first."
            ) from exc

    return wrapper


# PostgreSQL's SQLSTATE for a relation that does not exist.
UNDEFINED_TABLE = "42P01"


def _has_tables() -> bool:
    """Whether the database holds memledger's tables (the tenant's, which every migration
    since the first has)."""
    from django.db import connection

    return "memory_core_tenant" in connection.introspection.table_names()
