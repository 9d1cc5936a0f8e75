"""The benchmark's own database on the same PostgreSQL server, never the dev or test database.

``use_database(name)`` re-points Django's default connection at it for the rest of the
process, so the real services, selectors and the retrieval pipeline run against the corpus.
"""

from __future__ import annotations

import re

import psycopg
from django.conf import settings
from django.core.management import call_command
from django.db import connections

BENCH_PREFIX = "memledger_bench_"
_NAME_RE = re.compile(r"^memledger_bench_[a-z0-9_]{1,40}$")


class BenchDatabaseError(RuntimeError):
    """The benchmark database name is not one of ours, or the server refused it."""


def bench_database_name(*, memories: int, tenants: int, seed: int) -> str:
    """Return the database that holds the corpus of this size and seed; BenchDatabaseError
    if the name would be longer than a benchmark database's (``check_name``)."""
    name = f"{BENCH_PREFIX}{memories}_{tenants}_s{seed}"
    if not _NAME_RE.match(name):
        raise BenchDatabaseError(
            f"A corpus of {memories} memories, {tenants} tenants and seed {seed} would live in "
            f"{name!r}, longer than a benchmark database's name may be (40 characters after "
            f"{BENCH_PREFIX!r})."
        )
    return name


def check_name(name: str) -> str:
    """Refuse any name that is not a benchmark database (the dev DB, a test DB, ...)."""
    if not _NAME_RE.match(name):
        raise BenchDatabaseError(
            f"{name!r} is not a benchmark database name (must match {_NAME_RE.pattern})."
        )
    return name


def server_params() -> dict:
    """Connection keywords of the server behind Django's default database, as the owner.

    Creating, dropping and bulk-loading a benchmark database is the owner's work: the
    application role may not create databases and is bound by row-level security.
    """
    db = {**settings.DATABASES["default"], **getattr(settings, "MEMLEDGER_DB_OWNER", {})}
    params = {"host": db["HOST"] or None, "user": db["USER"] or None, "dbname": "postgres"}
    if db.get("PASSWORD"):
        params["password"] = db["PASSWORD"]
    if db.get("PORT"):
        params["port"] = db["PORT"]
    return {key: value for key, value in params.items() if value is not None}


def connect(name: str, *, autocommit: bool = False) -> psycopg.Connection:
    """Open a raw psycopg connection to benchmark database ``name``."""
    params = server_params()
    params["dbname"] = check_name(name)
    conn = psycopg.connect(autocommit=autocommit, **params)
    # The loader writes every tenant's rows: platform mode (an owner that is no superuser is
    # bound by FORCE ROW LEVEL SECURITY too).
    conn.execute("SELECT set_config('memledger.platform', 'on', false)")
    if not autocommit:
        conn.commit()  # a session setting made in a transaction lasts only if it commits
    return conn


def memory_columns(conn: psycopg.Connection, *, stored: bool = False) -> list[str]:
    """The memory table's columns in the table's order; ``stored``: only those an INSERT may
    name, the id left out too (the probes copy rows under new ids)."""
    rows = conn.execute(
        "SELECT column_name, is_generated = 'NEVER' FROM information_schema.columns "
        "WHERE table_name = 'memory_core_memory' ORDER BY ordinal_position"
    ).fetchall()
    return [name for name, plain in rows if not stored or (plain and name != "id")]


def exists(name: str) -> bool:
    """Whether benchmark database ``name`` exists on the server."""
    check_name(name)
    with psycopg.connect(autocommit=True, **server_params()) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    return found is not None


def ensure_database(name: str) -> bool:
    """Create benchmark database ``name`` if it is missing; return whether it was created."""
    if exists(name):
        return False
    with psycopg.connect(autocommit=True, **server_params()) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return True


def drop_database(name: str) -> None:
    """Drop benchmark database ``name`` (used by the smoke tests for their tiny corpus)."""
    check_name(name)
    with psycopg.connect(autocommit=True, **server_params()) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def use_database(name: str) -> None:
    """Point Django's default connection at benchmark database ``name`` from now on."""
    check_name(name)
    connections["default"].close()
    settings.DATABASES["default"]["NAME"] = name
    connections["default"].settings_dict["NAME"] = name


def migrate() -> None:
    """Apply the project's migrations to the database Django currently points at."""
    check_name(connections["default"].settings_dict["NAME"])
    call_command("migrate", interactive=False, verbosity=0)
