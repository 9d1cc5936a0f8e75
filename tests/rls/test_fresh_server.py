"""On a fresh server the application role does not exist yet: ``migrate`` must create it.

``make run`` starts with ``manage.py migrate``. Its system checks query the database; made over
the application role's connection they fail before migration 0005 can create that role.
"""

import psycopg
import pytest
from django.db import connection

from tests.processes import run_manage
from tests.rls_support import owner_conninfo

pytestmark = pytest.mark.django_db(transaction=True)

ROLE = "memledger_fresh_probe"


def _admin(sql: str, params=None):
    with psycopg.connect(**owner_conninfo(), dbname="postgres", autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def test_migrate_on_a_server_without_the_application_role_creates_it():
    scratch = f"{connection.settings_dict['NAME']}_fresh"
    _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    _admin(f"DROP ROLE IF EXISTS {ROLE}")
    _admin(f'CREATE DATABASE "{scratch}"')
    try:
        assert _admin("SELECT 1 FROM pg_roles WHERE rolname = %s", [ROLE]) == []
        result = run_manage(
            "migrate",
            "--noinput",
            timeout=180,
            MEMLEDGER_DB_NAME=scratch,
            MEMLEDGER_DB_APP_ROLE=ROLE,
        )
        assert result.returncode == 0, result.stderr + result.stdout
        assert "memory_core.0005_issue7_row_level_security... OK" in result.stdout
        role = _admin("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", [ROLE])
        assert role == [(False, False)]
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
        _admin(f"DROP ROLE IF EXISTS {ROLE}")


def test_an_operator_command_before_migrate_says_to_migrate_first():
    result = run_manage(
        "create_agent_key",
        "--tenant",
        "t",
        "--agent",
        "a",
        MEMLEDGER_DB_APP_ROLE="memledger_never_created",
    )
    assert result.returncode == 1
    assert "Run `python manage.py migrate` first" in result.stderr
    assert "Create the database" not in result.stderr
    assert "Traceback" not in result.stderr


def test_an_operator_command_on_a_database_that_does_not_exist_says_to_create_it():
    # migrate fills a database, it does not make one: telling the operator to run it first
    # sent them round in a circle (it fails the same way).
    result = run_manage(
        "create_agent_key", "--tenant", "t", "--agent", "a", MEMLEDGER_DB_NAME="memledger_never"
    )
    assert result.returncode == 1
    assert 'database "memledger_never" does not exist' in result.stderr
    assert "Create the database first" in result.stderr
    assert "Traceback" not in result.stderr
