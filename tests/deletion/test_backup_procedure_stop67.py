"""The documented backup, restore and replay procedure followed as an operator does (stop 67's
audit of backups): a step left out or a replay that fails says so in a sentence, and what to
do, before anything is replayed or instead of a traceback."""

import json
from io import StringIO

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from memory_core.deletion.ledger import key_revocation_entry
from memory_core.models import Memory
from memory_core.services.api_keys import api_key_create
from tests.deletion.conftest import journal_line
from tests.processes import run_manage
from tests.rls_support import owner_conninfo

pytestmark = pytest.mark.django_db

SINCE = "2026-11-01T00:00:00+00:00"


def _write(journal, *lines: dict) -> None:
    journal.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))


def test_replay_refuses_a_restored_database_not_migrated_to_this_release(agent, settings, tmp_path):
    """docs/operations.md: a backup older than this release is migrated before the replay.
    Left out, the replay revoked the keys again, then failed on the first deletion with a
    traceback (``column memory_core_deletionoperation.next_run_at does not exist``), half
    replayed. It refuses now, naming the step, and replays nothing."""
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "deletion-ledger.jsonl"
    key, _ = api_key_create(agent=agent)
    journal = tmp_path / "journal.jsonl"
    revoked = key_revocation_entry(
        key_id=key.pk, tenant_id=agent.tenant_id, revoked_at=key.created_at
    )
    _write(journal, revoked)
    # As a backup of the release before this one's last migration holds it (its schema is
    # the test's: only the record says what a migrate would apply).
    app, name = MigrationLoader(connection).graph.leaf_nodes("memory_core")[0]
    MigrationRecorder(connection).migration_qs.filter(app=app, name=name).delete()

    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("replay_deletions", "--since", SINCE, "--ledger", str(journal), stdout=out)

    assert f"{app}.{name}" in str(refused.value)
    assert "python manage.py migrate" in str(refused.value)
    assert "Nothing was replayed." in str(refused.value)
    assert out.getvalue() == ""
    key.refresh_from_db()
    assert key.revoked_at is None  # nothing replayed, not even the key's line


def test_a_replay_that_could_not_journal_says_why_and_what_to_do(
    owner, memories, settings, tmp_path
):
    """docs/operations.md: each replayed operation is appended to the journal again, and
    where that fails the command fails. It said ``some operations did not complete:
    {'<id>': <DeletionState.PARTIAL: 'partial'>}``: no cause, no way out. It names each
    operation's state and last error, and says to fix it and run the replay again."""
    # A journal on a volume not mounted: every append fails (its folder is outside the data
    # folder, so it is not made).
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "not-mounted" / "deletion-ledger.jsonl"
    journal = tmp_path / "journal.jsonl"
    line = journal_line(
        1, tenant_id=owner.tenant_id, target="memory", subject_id=owner.pk,
        memory_ids=[memories[0].pk],
    )  # fmt: skip
    _write(journal, line)

    with pytest.raises(CommandError) as failed:
        call_command(
            "replay_deletions", "--since", SINCE, "--ledger", str(journal), stdout=StringIO(),
            stderr=StringIO(),
        )  # fmt: skip

    message = str(failed.value)
    assert f"{line['operation_id']} (partial: " in message
    assert "deletion journal's folder does not exist" in message
    assert "DeletionState" not in message
    assert "run replay_deletions again" in message
    # Its purges are made all the same, as the docs say.
    assert Memory.objects.get(pk=memories[0].pk).content == ""


OWNER_ROLE = "backup_audit_stop67_owner"


def _admin(sql: str, dbname: str = "postgres") -> None:
    with psycopg.connect(**owner_conninfo(), dbname=dbname, autocommit=True) as conn:
        conn.execute(sql)


def test_migrate_after_a_no_owner_restore_says_what_to_do_instead_of_a_traceback():
    """docs/operations.md: with DATABASE_URL, ``pg_restore --no-owner`` run as the superuser
    leaves every table the superuser's, and ``migrate``, as the owner role, stopped with a
    traceback ending in "permission denied for table django_migrations". It ends with a
    sentence naming the cause and the restore to make instead."""
    info = owner_conninfo()
    scratch = f"{connection.settings_dict['NAME']}_no_owner"
    _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    _admin(f"DROP ROLE IF EXISTS {OWNER_ROLE}")
    try:
        _admin(f"CREATE ROLE {OWNER_ROLE} LOGIN NOSUPERUSER")
        _admin(f'CREATE DATABASE "{scratch}" OWNER {OWNER_ROLE}')
        # What such a restore leaves: the migrations' table, and every other, the superuser's.
        _admin(
            "CREATE TABLE django_migrations (id bigserial PRIMARY KEY, app varchar(255), "
            "name varchar(255), applied timestamptz)",
            dbname=scratch,
        )
        port = f"&port={info['port']}" if info.get("port") else ""
        url = f"postgres://{OWNER_ROLE}@/{scratch}?host={info['host']}{port}"
        result = run_manage(
            "migrate",
            "--noinput",
            DATABASE_URL=url,
            DATABASE_OWNER_URL=url,
            unset=("MEMLEDGER_DB_NAME",),
        )
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
        _admin(f"DROP ROLE IF EXISTS {OWNER_ROLE}")

    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert "permission denied for table django_migrations" in result.stderr
    assert "--no-owner" in result.stderr and "Restore procedure" in result.stderr
