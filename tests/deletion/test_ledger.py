"""The deletion journal: a failed append leaves no torn line, and the reader skips bad lines."""

import errno
import json
import os
import shutil
import uuid
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memory_core.deletion import ledger
from memory_core.deletion.ledger import ledger_append, ledger_entry, ledger_read, ledger_scan
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from tests.factories import MemoryFactory
from tests.threads import in_thread

pytestmark = pytest.mark.django_db


class _DiskFillsMidLine:
    """A journal file on which a write puts half its bytes on disk, then fails with ENOSPC
    (a full disk, which a test cannot make without root)."""

    def __init__(self, handle):
        self._handle = handle

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._handle.close()

    def write(self, data):
        self._handle.write(data[: len(data) // 2])
        self._handle.flush()
        raise OSError(errno.ENOSPC, "No space left on device")


def _open_on_a_full_disk(*args, **kwargs):
    return _DiskFillsMidLine(open(*args, **kwargs))  # closed by the wrapper


def test_an_append_the_disk_cuts_short_leaves_no_torn_line_for_the_retry(
    owner_principal, memories, journal, monkeypatch
):
    since = timezone.now() - timedelta(minutes=1)
    first = deletion_request(principal=owner_principal, memory_id=memories[1].id)
    second = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    ledger_append(first)
    before = journal.read_bytes()

    monkeypatch.setattr(ledger, "open", _open_on_a_full_disk, raising=False)
    assert deletion_run(operation_id=second.id) == "partial"
    second.refresh_from_db()
    assert "No space left" in second.last_error and second.journaled_at is None
    assert journal.read_bytes() == before  # the half line was cut off again

    monkeypatch.undo()  # the operator frees space; the next run appends the whole line
    assert deletion_run(operation_id=second.id) == "completed"
    lines = journal.read_text().splitlines()
    assert [json.loads(line)["operation_id"] for line in lines] == [str(first.id), str(second.id)]
    assert [e["operation_id"] for e in ledger_read(since=since)] == [str(first.id), str(second.id)]


def test_a_deletion_whose_journal_volume_is_missing_is_not_completed(
    owner_principal, memories, settings, tmp_path
):
    """A journal outside MEMLEDGER_DATA_DIR whose folder (its separate volume's mount point)
    was missing had the folder made on the local disk: the append succeeded there, and the
    operation completed with no line on the storage a restore replays (stop 58's audit of
    failures). The append fails instead, naming the folder, until the volume is back."""
    volume = tmp_path / "journal-volume"
    settings.MEMLEDGER_DELETION_LEDGER = volume / "deletion-ledger.jsonl"
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert deletion_run(operation_id=operation.id) == "partial"
    operation.refresh_from_db()
    assert not volume.exists()
    assert operation.journaled_at is None and str(volume) in operation.last_error

    volume.mkdir()  # the volume is mounted again
    assert deletion_run(operation_id=operation.id) == "completed"
    assert [e["operation_id"] for e in ledger_read(since=operation.requested_at)] == [
        str(operation.id)
    ]


def test_a_journal_inside_the_data_folder_has_its_folder_made(owner_principal, memories, settings):
    """The default journal (``.data/deletion-ledger.jsonl``) on a fresh clone: memledger's own
    folder is made on the first append, as before."""
    folder = Path(settings.DATA_DIR) / "test-ledger" / str(uuid.uuid4())
    settings.MEMLEDGER_DELETION_LEDGER = folder / "deletion-ledger.jsonl"
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    try:
        assert deletion_run(operation_id=operation.id) == "completed"
        assert settings.MEMLEDGER_DELETION_LEDGER.is_file()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_prune_command_refuses_a_default_journal_whose_volume_is_missing(settings, tmp_path):
    """Without --ledger, a journal outside MEMLEDGER_DATA_DIR whose folder is missing (a volume
    not mounted) printed "dropped 0", as a fresh install's journal not written yet does (stop
    58's audit of failures)."""
    settings.MEMLEDGER_BACKUP_RETENTION_DAYS = 35
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "journal-volume" / "deletion-ledger.jsonl"
    cutoff = (timezone.now() - timedelta(days=40)).isoformat()
    with pytest.raises(CommandError, match="no deletion journal at"):
        call_command("prune_deletion_journal", "--before", cutoff, stdout=StringIO())
    assert not (tmp_path / "journal-volume").exists()

    settings.DATA_DIR = tmp_path  # the same journal, inside memledger's own folder
    out = StringIO()
    call_command("prune_deletion_journal", "--before", cutoff, stdout=out)
    assert json.loads(out.getvalue())["dropped"] == 0


def test_an_append_after_a_torn_line_starts_on_a_line_of_its_own(
    owner_principal, memories, journal
):
    # A process killed mid-write (nothing could cut its half line off) left a fragment.
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    journal.write_text('{"operation_id": "0b4e2c1a-', encoding="utf-8")
    ledger_append(operation)
    entries = ledger_read(since=operation.requested_at)
    assert [e["operation_id"] for e in entries] == [str(operation.id)]
    scan = ledger_scan(since=operation.requested_at)
    assert (scan.unreadable, scan.recovered) == ([1], [])


@pytest.mark.parametrize(
    "wrong",
    [
        {"operation_id": [1, 2]},
        {"tenant_id": "not-a-uuid"},
        {"subject_id": 7},
        {"target": ["subject"]},
        {"tombstones": [{"memory_id": "m-1"}]},
        {"tombstones": ["0b4e2c1a-0000-4000-8000-000000000000"]},
        {"target": "memory_task_closed"},  # names no expired memory
    ],
)
def test_a_line_whose_ids_are_not_ids_is_not_an_entry(journal, wrong):
    """Such a line had every key, so it was read as an entry; the replay then raised on it
    ("unhashable type: 'list'", "badly formed hexadecimal UUID string") after the governance
    lines before it were applied (stop 47's audit). It is unreadable now, as any line that
    is not an entry."""
    import uuid

    good = {
        "operation_id": str(uuid.uuid4()),
        "requested_at": "2026-01-02T00:00:00+00:00",
        "tenant_id": str(uuid.uuid4()),
        "target": "subject",
        "tombstones": [],
    }
    journal.write_text(json.dumps(good) + "\n" + json.dumps({**good, **wrong}) + "\n")
    scan = ledger_scan(since=datetime.fromisoformat("2026-01-01T00:00:00+00:00"))
    assert [e["operation_id"] for e in scan.entries] == [good["operation_id"]]
    assert scan.unreadable == [2]


def test_replay_skips_and_reports_the_lines_that_are_not_entries(
    owner_principal, memories, journal
):
    since = timezone.now() - timedelta(minutes=1)
    operations = [
        deletion_request(principal=owner_principal, memory_id=memory.id) for memory in memories
    ]
    whole = [json.dumps(ledger_entry(op), sort_keys=True) for op in operations]
    naive = json.loads(whole[2])
    naive["requested_at"] = naive["requested_at"].replace("+00:00", "")
    journal.write_bytes(
        b"\n".join(
            [
                whole[0].encode(),
                b"\xff\xfe not even text",  # line 2
                b"[1, 2, 3]",  # line 3: JSON, but no entry
                # line 4: a torn append with the retry glued to it (the old append's damage)
                (whole[1][: len(whole[1]) // 2] + whole[1]).encode(),
                b"",
                json.dumps(naive).encode(),  # line 6: a time without a zone
                b'{"operation_id": "x", "requested_at": "yesterday"}',  # line 7
                whole[2].encode(),
                b'{"operation_id": "0b4e',  # line 9: torn, at the end
            ]
        )
    )
    out, err = StringIO(), StringIO()
    call_command(
        "replay_deletions", "--since", since.isoformat(), "--ledger", str(journal),
        stdout=out, stderr=err,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert (result["entries"], result["replayed"], result["incomplete"]) == (3, 3, {})
    assert (result["unreadable_lines"], result["recovered_lines"]) == (5, 1)
    assert "5 line(s) of" in err.getvalue() and "skipped: line 2, 3, 6, 7, 9" in err.getvalue()
    assert "torn append, which was dropped (the whole entry after it was read): line 4" in (
        err.getvalue()
    )
    for operation in operations:
        operation.refresh_from_db()
        assert operation.status == "completed"


def test_an_operation_requested_before_the_dump_and_committed_after_its_snapshot_is_replayed(
    owner_principal, memories, journal, django_capture_on_commit_callbacks
):
    """The restore procedure replays `--since` the dump's time: a deletion requested before
    it (its rows locked and scrubbed for seconds: a subject of 300,000 took 24 s) and
    committed after the dump's snapshot was read by nobody, and came back with the backup."""
    with django_capture_on_commit_callbacks(execute=True):
        operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
        dump_started = timezone.now()  # the request has not committed: not in the snapshot
    assert operation.requested_at < dump_started

    assert [e["operation_id"] for e in ledger_read(since=dump_started)] == [str(operation.id)]


def test_a_key_revoked_after_the_backup_is_revoked_again_by_the_replay(
    agent, journal, django_capture_on_commit_callbacks
):
    """The journal held deletions only: a key revoked after the backup (a leaked one) was
    usable again in the restored database, and the replay left it so."""
    from memory_core.models import ApiKey
    from memory_core.services.api_keys import api_key_create, api_key_resolve, api_key_revoke

    key, raw_key = api_key_create(agent=agent)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        api_key_revoke(key=key)
    assert ApiKey.objects.get(pk=key.pk).revocation_journaled_at is not None
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=None)  # as the backup had it
    assert api_key_resolve(raw_key) is not None

    out = StringIO()
    call_command("replay_deletions", "--since", backup_time.isoformat(), stdout=out)

    assert json.loads(out.getvalue())["keys_revoked"] == 1
    assert api_key_resolve(raw_key) is None
    entry = ledger_read(since=backup_time)[0]
    assert set(entry) >= {"revoked_key_id", "tenant_id", "requested_at"}
    assert raw_key not in journal.read_text() and key.hashed_key not in journal.read_text()


def test_a_revocation_whose_journal_append_failed_is_journaled_by_the_sweep(
    agent, journal, settings, django_capture_on_commit_callbacks
):
    """An append that failed (a missing volume, a full disk) was logged and forgotten: the key,
    revoked after a backup, would work again after a restore, with nothing to replay."""
    from memory_core.models import ApiKey
    from memory_core.services.api_keys import api_key_create, api_key_revoke
    from memory_core.tasks import deletion_sweep

    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    key, _ = api_key_create(agent=agent)
    with django_capture_on_commit_callbacks(execute=True):
        api_key_revoke(key=key)
    key.refresh_from_db()
    assert key.revoked_at is not None and key.revocation_journaled_at is None

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    key.refresh_from_db()
    assert key.revocation_journaled_at is not None
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [line["revoked_key_id"] for line in lines] == [str(key.pk)]
    assert not ApiKey.objects.filter(revoked_at__isnull=False, revocation_journaled_at=None)


def test_the_scan_logs_how_many_lines_it_skipped_and_the_first_twenty(tmp_path, caplog):
    """A file given as the journal by mistake (a dump, say) logged every one of its
    thousands of line numbers in one warning."""
    path = tmp_path / "not-a-journal.jsonl"
    path.write_text("not json\n" * 1500)
    with caplog.at_level("WARNING", logger=ledger.logger.name):
        scan = ledger_scan(since=timezone.now() - timedelta(days=1), path=path)
    assert len(scan.unreadable) == 1500
    [record] = [r for r in caplog.records if "unreadable" in r.getMessage()]
    message = record.getMessage()
    assert "1500 unreadable line(s) skipped (1, 2, 3," in message
    assert "20, ...)" in message
    assert "21," not in message


def _entry_line(operation, requested_at, written_at=None) -> str:
    entry = ledger_entry(operation)
    entry["requested_at"] = requested_at.isoformat()
    if written_at is not None:
        entry["written_at"] = written_at.isoformat()
    return json.dumps(entry, sort_keys=True)


def test_pruning_keeps_a_line_written_after_the_cutoff_though_requested_long_before(
    owner_principal, memories, journal
):
    """A replay --since a backup's time reads a line by the later of its request and its
    writing (a request that committed after the dump's snapshot): pruning by the request
    alone dropped a line that replay still reads."""
    now = timezone.now()
    cutoff = now - timedelta(days=40)
    late, old = (
        deletion_request(principal=owner_principal, memory_id=memory.id) for memory in memories[:2]
    )
    journal.write_text(
        _entry_line(late, cutoff - timedelta(days=3), written_at=cutoff + timedelta(hours=1))
        + "\n"
        + _entry_line(old, cutoff - timedelta(days=3), written_at=cutoff - timedelta(days=3))
        + "\n"
    )
    assert [e["operation_id"] for e in ledger_read(since=cutoff)] == [str(late.id)]

    result = ledger.ledger_prune(before=cutoff)

    assert (result.dropped, result.kept) == (1, 1)
    assert [e["operation_id"] for e in ledger_read(since=cutoff)] == [str(late.id)]


def test_pruning_drops_only_the_entries_no_replay_since_the_cutoff_reads(
    owner_principal, memories, journal
):
    now = timezone.now()
    cutoff = now - timedelta(days=40)
    old, at_cutoff, new = (
        deletion_request(principal=owner_principal, memory_id=memory.id) for memory in memories
    )
    # Requested just before the backup's time but committed after its snapshot: kept.
    fourth = MemoryFactory(subject=memories[0].subject)
    just_before = deletion_request(principal=owner_principal, memory_id=fourth.id)
    journal.write_text(
        "\n".join(
            [
                _entry_line(old, now - timedelta(days=90)),
                "not an entry",  # kept as it is, for the reader to name
                _entry_line(just_before, cutoff - timedelta(hours=12)),
                _entry_line(at_cutoff, cutoff),
                _entry_line(new, now - timedelta(days=1)),
            ]
        )
        + "\n"
    )
    journal.chmod(0o640)
    as_root = os.geteuid() == 0
    if as_root:  # run by root (cron), the journal stays the service's to append to
        os.chown(journal, 4321, 4322)
    replayed_before = ledger_read(since=cutoff)

    result = ledger.ledger_prune(before=cutoff)

    assert (result.dropped, result.kept, result.unreadable_kept) == (1, 3, 1)
    assert ledger_read(since=cutoff) == replayed_before
    assert [e["operation_id"] for e in ledger_read(since=now - timedelta(days=365))] == [
        str(just_before.id),
        str(at_cutoff.id),
        str(new.id),
    ]
    assert "not an entry\n" in journal.read_text()
    assert journal.stat().st_mode & 0o777 == 0o640
    if as_root:
        assert (journal.stat().st_uid, journal.stat().st_gid) == (4321, 4322)
    assert result.bytes_after == journal.stat().st_size < result.bytes_before
    assert list(journal.parent.iterdir()) == [journal]  # no temporary file left


def test_an_append_waiting_while_the_journal_is_pruned_lands_in_the_new_journal(
    owner_principal, memories, journal
):
    """Pruning renames a new file over the journal while it holds the old one's lock; an
    append that was waiting for that lock wrote into the old file, and its line was lost."""
    import fcntl
    import os

    first, second = (
        deletion_request(principal=owner_principal, memory_id=memory.id) for memory in memories[:2]
    )
    ledger_append(first)
    with open(journal, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as ledger_prune holds it while it rewrites
        appending = in_thread(lambda: ledger_append(second))
        appending.join(0.3)
        assert appending.is_alive()  # waiting for the lock
        replacement = journal.with_name("replacement")
        replacement.write_bytes(journal.read_bytes())
        os.replace(replacement, journal)
    appending.outcome(10)

    entries = ledger_read(since=first.requested_at)
    assert [e["operation_id"] for e in entries] == [str(first.id), str(second.id)]


def test_the_prune_command_refuses_a_cutoff_a_kept_backup_may_need_and_dry_runs(
    owner_principal, memories, journal, settings
):
    settings.MEMLEDGER_BACKUP_RETENTION_DAYS = 35
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    journal.write_text(_entry_line(operation, timezone.now() - timedelta(days=60)) + "\n")
    before = journal.read_bytes()

    with pytest.raises(CommandError, match="within the 35 days backups are kept"):
        call_command("prune_deletion_journal", "--before", timezone.now().date().isoformat())
    with pytest.raises(CommandError, match="--before must be an ISO timestamp"):
        call_command("prune_deletion_journal", "--before", "last month")
    cutoff = (timezone.now() - timedelta(days=40)).isoformat()
    out = StringIO()
    call_command("prune_deletion_journal", "--before", cutoff, "--dry-run", stdout=out)
    assert json.loads(out.getvalue())["dropped"] == 1
    assert journal.read_bytes() == before

    out = StringIO()
    call_command("prune_deletion_journal", "--before", cutoff, stdout=out)
    report = json.loads(out.getvalue())
    assert (report["dropped"], report["kept"], report["dry_run"]) == (1, 0, False)
    assert journal.read_bytes() == b""


def test_a_prune_before_the_second_day_of_year_one_drops_nothing(
    owner_principal, memories, journal
):
    """A day before it is before the first date Python holds: the prune ended in
    "OverflowError: date value out of range" (stop 47's audit)."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    journal.write_text(_entry_line(operation, timezone.now() - timedelta(days=60)) + "\n")
    before = journal.read_bytes()
    for arguments in (("--dry-run",), ()):
        out = StringIO()
        call_command(
            "prune_deletion_journal", "--before", "0001-01-01T00:00:00Z", *arguments, stdout=out
        )
        assert json.loads(out.getvalue())["dropped"] == 0
    assert journal.read_bytes() == before


def test_a_pruned_journal_left_with_a_torn_line_and_no_entry_since_still_replays(journal, tenant):
    """Stop 60's audit of backups found that the journal the daily prune leaves behind could
    be refused by the replay: a journal holding a torn line (a process killed mid-append) and
    entries older than the oldest backup kept, on a quiet deployment (nothing deleted,
    revoked or published for 35 days), was left with the torn line only, and after a restore
    ``replay_deletions`` refused it ("None of the 1 line(s) ... is a deletion journal entry:
    is it the journal?"), the check meant for a file given by mistake: the restore stopped
    on the right journal. The prune should keep the last of the older entries beside such
    lines, and the replay then replay nothing, name the torn line and succeed."""
    old = timezone.now() - timedelta(days=60)
    entries = [
        {
            "operation_id": f"6f1f7a4e-0000-4000-8000-00000000000{number}",
            "tenant_id": str(tenant.pk),
            "subject_id": None,
            "target": "memory",
            "requested_at": (old + timedelta(hours=number)).isoformat(),
            "reason_code": "requested",
            "tombstones": [],
        }
        for number in (1, 2)
    ]
    torn = '{"operation_id": "6f1f7a4e-0000-4000-8000-0000000'  # cut off by a crash
    journal.write_text("".join(line + "\n" for line in [torn, *map(json.dumps, entries)]))
    before = (timezone.now() - timedelta(days=40)).isoformat()
    pruned_out = StringIO()
    call_command("prune_deletion_journal", "--before", before, stdout=pruned_out)

    since = (timezone.now() - timedelta(hours=1)).isoformat()
    replayed_out = StringIO()
    call_command("replay_deletions", "--since", since, stdout=replayed_out, stderr=StringIO())
    result = json.loads(replayed_out.getvalue())
    assert (result["replayed"], result["unreadable_lines"]) == (0, 1)
    pruned = json.loads(pruned_out.getvalue())
    assert (pruned["dropped"], pruned["kept"], pruned["unreadable_kept"]) == (1, 1, 1)
    assert journal.read_text() == f"{torn}\n{json.dumps(entries[1])}\n"


def _journal_lines(journal) -> list[dict]:
    return [json.loads(line) for line in journal.read_text().splitlines()]


def _replay(since, *arguments: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command(
        "replay_deletions", "--since", since.isoformat(), *arguments, stdout=out, stderr=err
    )
    return json.loads(out.getvalue()), err.getvalue()


def test_an_agent_deactivated_after_the_backup_is_deactivated_again_by_the_replay(
    agent, journal, django_capture_on_commit_callbacks
):
    """The journal held deletions and key revocations only: an agent deactivated after the
    backup (in the admin's form) worked again in the restored database, keys and all."""
    from memory_core.models import Agent
    from memory_core.services.api_keys import (
        agent_deactivate,
        agent_reactivate,
        api_key_create,
        api_key_resolve,
    )

    key, raw_key = api_key_create(agent=agent)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        agent_deactivate(agent=agent)
    row = Agent.objects.get(pk=agent.pk)
    assert not row.is_active and row.deactivated_at is not None
    assert row.deactivation_journaled_at is not None
    assert api_key_resolve(raw_key) is None
    [line] = _journal_lines(journal)
    assert (line["target"], line["deactivated_agent_id"]) == ("agent_deactivated", str(agent.pk))
    assert set(line) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "deactivated_agent_id", "tombstones", "written_at",
    }  # fmt: skip
    # Reactivated: not journaled (a restore bringing it back inactive errs on the safe side).
    with django_capture_on_commit_callbacks(execute=True):
        agent_reactivate(agent=agent)
    assert api_key_resolve(raw_key) is not None and len(_journal_lines(journal)) == 1
    Agent.objects.filter(pk=agent.pk).update(is_active=True)  # as the backup had it

    result, _ = _replay(backup_time)

    assert (result["agents_deactivated"], result["keys_revoked"]) == (1, 0)
    row = Agent.objects.get(pk=agent.pk)
    assert not row.is_active and row.deactivated_at.isoformat() == line["requested_at"]
    assert api_key_resolve(raw_key) is None
    key.refresh_from_db()
    assert key.revoked_at is None  # refused through its agent; a reactivation brings it back


@pytest.mark.parametrize("how", ["memory_revoke", "consent_withdraw"])
def test_a_memory_revoked_after_the_backup_is_revoked_again_by_the_replay(
    owner, journal, how, django_capture_on_commit_callbacks
):
    """A memory revoked (or whose consent was withdrawn) after the backup was in use again in
    the restored database, and operators revoked it again by a psql query and a shell."""
    from memory_core.models import Memory, MemoryEvent
    from memory_core.principals import SystemPrincipal
    from memory_core.services import writes

    memory = MemoryFactory(subject=owner, consent="workflow")
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        getattr(writes, how)(
            principal=SystemPrincipal(tenant_id=owner.tenant_id), memory_id=memory.id
        )
    assert Memory.objects.get(pk=memory.pk).revocation_journaled_at is not None
    [line] = _journal_lines(journal)
    action = "revoked" if how == "memory_revoke" else "consent_withdrawn"
    assert (line["target"], line["revoked_memory_id"], line["action"]) == (
        "memory_revoked",
        str(memory.id),
        action,
    )
    Memory.objects.filter(pk=memory.pk).update(status="active")  # as the backup had it

    result, _ = _replay(backup_time)

    assert (result["memories_revoked"], result["memories_skipped"]) == (1, {})
    assert Memory.objects.get(pk=memory.pk).status == "revoked"
    replayed = MemoryEvent.objects.filter(memory_id=memory.id, actor_id="replay_deletions")
    assert list(replayed.values_list("action", flat=True)) == [action]
    assert _replay(backup_time)[0]["memories_revoked"] == 0  # twice: nothing more


def test_a_revocation_line_holds_ids_only_and_a_deletion_leaves_no_content_in_the_journal(
    owner, owner_principal, journal, django_capture_on_commit_callbacks
):
    """The journal must not become a copy of what is remembered: a revocation's line names
    the memory, its chain, tenant and subject by id, never the content, key, hash or the
    subject's external id, and the deletion that follows adds ids and hashes only."""
    from memory_core.principals import SystemPrincipal
    from memory_core.services.writes import memory_correct, memory_revoke

    first = MemoryFactory(subject=owner, memory_key="drinks.tea", content="User drinks oolong.")
    with django_capture_on_commit_callbacks(execute=True):
        second = memory_correct(
            principal=owner_principal,
            memory_id=first.id,
            data={"content": "User drinks oolong, no sugar."},
        ).memory
        memory_revoke(principal=SystemPrincipal(tenant_id=owner.tenant_id), memory_id=second.id)
    assert second.supersedes_id == first.id
    [line] = _journal_lines(journal)
    assert line["supersedes_ids"] == [str(first.id)]
    assert (line["subject_id"], line["tenant_id"]) == (str(owner.id), str(owner.tenant_id))

    with django_capture_on_commit_callbacks(execute=True):
        operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    text = journal.read_text()
    assert "oolong" not in text and "drinks.tea" not in text and owner.external_id not in text
    revocation = next(e for e in _journal_lines(journal) if e["target"] == "memory_revoked")
    assert set(revocation) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "action", "revoked_memory_id", "supersedes_ids", "tombstones", "written_at",
    }  # fmt: skip
    assert second.content_hash not in json.dumps(revocation)  # the deletion's line has it


def test_the_replay_revokes_the_backups_version_of_a_chain_whose_revoked_version_it_lacks(
    owner, journal
):
    """A correction written after the backup, then revoked: the restored database lacks it,
    and holds in use the version it corrected (and one waiting for a reviewer)."""
    import uuid

    from memory_core.deletion.ledger import memory_revocation_entry
    from memory_core.deletion.replay import replay_deletions
    from memory_core.models import ReviewItem

    older = MemoryFactory(subject=owner, status="superseded")
    head = MemoryFactory(subject=owner, supersedes=older, version=2)
    waiting = MemoryFactory(subject=owner, status="pending_approval")
    item = ReviewItem.objects.create(
        tenant_id=owner.tenant_id, subject=owner, memory=waiting, kind="sensitive_write"
    )
    unrelated = MemoryFactory(subject=owner)
    line = memory_revocation_entry(
        memory_id=uuid.uuid4(),  # written after the backup: unknown here
        tenant_id=owner.tenant_id,
        subject_id=owner.id,
        revoked_at=timezone.now(),
        action="revoked",
        reason_code="revoked",
        supersedes_ids=[waiting.id, head.id, older.id],
    )

    result = replay_deletions(entries=[line])

    assert (result["memories_revoked"], result["memories_revoked_pending"]) == (2, 1)
    statuses = {m.pk: m.status for m in owner.memories.all()}
    assert statuses == {
        older.pk: "superseded",  # never in use again: left as it is
        head.pk: "revoked",
        waiting.pk: "revoked",
        unrelated.pk: "active",
    }
    item.refresh_from_db()
    assert (item.state, item.resolution) == ("resolved", "revoked")


def test_a_memory_whose_subjects_deletion_is_queued_is_named_not_revoked_again(
    owner, journal, django_capture_on_commit_callbacks
):
    """As the snippet did: the queued deletion removes it once a worker makes it."""
    from memory_core.models import Memory, Subject
    from memory_core.principals import SystemPrincipal
    from memory_core.services.writes import memory_revoke

    memory = MemoryFactory(subject=owner)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        memory_revoke(principal=SystemPrincipal(tenant_id=owner.tenant_id), memory_id=memory.id)
    Memory.objects.filter(pk=memory.pk).update(status="active")  # as the backup had it...
    Subject.objects.filter(pk=owner.pk).update(  # ... with the subject's deletion queued
        deletion_queued_at=timezone.now(), deletion_queued_by=1
    )

    result, err = _replay(backup_time)

    assert result["memories_revoked"] == 0
    assert result["memories_skipped"] == {str(memory.id): "subject_being_deleted"}
    assert "1 memory(ies) not revoked again" in err and str(memory.id) in err
    assert Memory.objects.get(pk=memory.pk).status == "active"


def test_a_conflicts_loser_is_journaled_as_a_revocation(
    tenant, owner, journal, django_user_model, django_capture_on_commit_callbacks
):
    from memory_core.models import ReviewItem
    from memory_core.principals import ReviewerPrincipal
    from memory_core.services.conflicts import conflict_resolve

    winner, loser = (MemoryFactory(subject=owner, memory_key="k") for _ in range(2))
    item = ReviewItem.objects.create(
        tenant=tenant, subject=owner, kind="conflict", memory_key="k",
        candidate_ids=[winner.id, loser.id],
    )  # fmt: skip
    reviewer = ReviewerPrincipal(
        tenant_id=tenant.id, user_id=django_user_model.objects.create_user("r").id
    )
    with django_capture_on_commit_callbacks(execute=True):
        conflict_resolve(
            principal=reviewer,
            item_id=item.id,
            outcome="choose_winner",
            winner_id=winner.id,
            reason="the newer one",
        )
    [line] = _journal_lines(journal)
    assert (line["revoked_memory_id"], line["reason_code"]) == (str(loser.id), "conflict_lost")


def test_deactivations_and_revocations_whose_append_failed_are_journaled_by_the_sweep(
    agent, owner, journal, settings, django_capture_on_commit_callbacks
):
    """As a key's revocation: an append that failed (a missing volume, a full disk) is
    logged, and the deletion sweep appends it once the journal can be written."""
    from memory_core.models import Agent, Memory
    from memory_core.principals import SystemPrincipal
    from memory_core.services.api_keys import agent_deactivate
    from memory_core.services.writes import memory_revoke
    from memory_core.tasks import deletion_sweep

    memory = MemoryFactory(subject=owner)
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    with django_capture_on_commit_callbacks(execute=True):
        agent_deactivate(agent=agent)
        memory_revoke(principal=SystemPrincipal(tenant_id=owner.tenant_id), memory_id=memory.id)
    assert Agent.objects.get(pk=agent.pk).deactivation_journaled_at is None
    assert Memory.objects.get(pk=memory.pk).revocation_journaled_at is None

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    lines = _journal_lines(journal)
    assert sorted(line["target"] for line in lines) == ["agent_deactivated", "memory_revoked"]
    assert Agent.objects.get(pk=agent.pk).deactivation_journaled_at is not None
    assert Memory.objects.get(pk=memory.pk).revocation_journaled_at is not None
    assert not Memory.objects.filter(status="revoked", revocation_journaled_at=None)


def test_pruning_drops_and_keeps_deactivation_and_revocation_lines_by_their_moments(
    agent, owner, journal
):
    from memory_core.deletion.ledger import agent_deactivation_entry, memory_revocation_entry

    now = timezone.now()
    cutoff = now - timedelta(days=40)

    def lines(moment):
        return [
            agent_deactivation_entry(agent_id=agent.pk, tenant_id=agent.tenant_id,
                                     deactivated_at=moment),
            memory_revocation_entry(memory_id=MemoryFactory(subject=owner).pk,
                                    tenant_id=owner.tenant_id, subject_id=owner.id,
                                    revoked_at=moment, action="revoked", reason_code="revoked"),
        ]  # fmt: skip

    old, new = lines(cutoff - timedelta(days=3)), lines(cutoff + timedelta(hours=1))
    journal.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in old + new))

    result = ledger.ledger_prune(before=cutoff)

    assert (result.dropped, result.kept) == (2, 2)
    kept = ledger_read(since=now - timedelta(days=365))
    assert [e["operation_id"] for e in kept] == [e["operation_id"] for e in new]


def test_a_journal_written_before_deactivations_and_revocations_were_journaled_still_replays(
    owner_principal, memories, journal, agent
):
    """Lines of an earlier release: a deletion without ``written_at`` and a key's revocation,
    and none of the new kinds."""
    from memory_core.deletion.ledger import key_revocation_entry
    from memory_core.services.api_keys import api_key_create

    since = timezone.now() - timedelta(minutes=1)
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    key, _ = api_key_create(agent=agent)
    old_lines = [
        ledger_entry(operation),
        key_revocation_entry(key_id=key.pk, tenant_id=agent.tenant_id, revoked_at=timezone.now()),
    ]
    journal.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in old_lines))

    result, _ = _replay(since, "--ledger", str(journal))

    assert (result["replayed"], result["keys_revoked"], result["incomplete"]) == (1, 1, {})
    assert (result["agents_deactivated"], result["memories_revoked"]) == (0, 0)
    assert (result["memories_rejected"], result["memories_rejected_skipped"]) == (0, {})
    assert result["unreadable_lines"] == 0


def test_the_reader_skips_a_governance_line_that_names_no_row(journal):
    since = timezone.now() - timedelta(days=1)
    moment = timezone.now().isoformat()
    base = {"operation_id": "x", "tenant_id": "t", "subject_id": None, "requested_at": moment,
            "reason_code": "r", "tombstones": []}  # fmt: skip
    bad = [
        {**base, "target": "agent_deactivated", "deactivated_agent_id": "not-a-uuid"},
        {**base, "target": "memory_revoked"},  # no revoked_memory_id
        {
            **base,
            "target": "memory_revoked",
            "revoked_memory_id": str(since.year),
            "supersedes_ids": [],
        },  # fmt: skip
        {
            **base,
            "target": "memory_revoked",
            "revoked_memory_id": "6f1f7a4e-0000-4000-8000-1",
            "supersedes_ids": "all",
        },  # fmt: skip
        {**base, "target": "memory_rejected"},  # no rejected_memory_id
        {**base, "target": "memory_rejected", "rejected_memory_id": "x"},
    ]
    journal.write_text("".join(json.dumps(e) + "\n" for e in bad))
    assert ledger_scan(since=since).unreadable == [1, 2, 3, 4, 5, 6]


def test_a_deactivation_made_while_an_earlier_ones_line_is_written_is_not_recorded_by_it(
    agent, journal, monkeypatch
):
    """The line of one deactivation recorded a later one as journaled: the agent reactivated
    and deactivated again while the first line was written, and the second's own append
    failing, the sweep never appended it (its row said journaled), so a backup taken while
    the agent was active again brought it back working after the restore."""
    from memory_core.deletion import ledger
    from memory_core.models import Agent
    from memory_core.services import api_keys
    from memory_core.services.api_keys import agent_deactivate, agent_reactivate

    agent_deactivate(agent=agent)  # its on-commit append not run: the test's transaction
    first = Agent.objects.get(pk=agent.pk).deactivated_at
    write = ledger.ledger_write

    def write_then_cycle(entry):
        write(entry)
        monkeypatch.setattr(ledger, "ledger_write", write)  # once
        agent_reactivate(agent=agent)
        agent_deactivate(agent=agent)  # its own append is lost (a crash, a full disk)

    monkeypatch.setattr(ledger, "ledger_write", write_then_cycle)
    assert api_keys._journal_deactivation(agent.pk)

    row = Agent.objects.get(pk=agent.pk)
    assert row.deactivated_at != first
    assert row.deactivation_journaled_at is None  # left for the sweep
    assert api_keys.deactivations_journal() == 1
    assert [line["requested_at"] for line in _journal_lines(journal)] == [
        first.isoformat(),
        row.deactivated_at.isoformat(),
    ]


def _pending_write(owner, **fields):
    """A sensitive write waiting for a reviewer, with its open review item."""
    from memory_core.models import ReviewItem

    memory = MemoryFactory(subject=owner, status="pending_approval", **fields)
    item = ReviewItem.objects.create(
        tenant_id=owner.tenant_id, subject=owner, memory=memory, kind="sensitive_write"
    )
    return memory, item


def _reviewer(tenant_id, django_user_model, name="reviewer"):
    from memory_core.principals import ReviewerPrincipal

    user = django_user_model.objects.create_user(name)
    return ReviewerPrincipal(tenant_id=tenant_id, user_id=user.id)


def test_a_write_rejected_after_the_backup_is_rejected_again_by_the_replay(
    owner, journal, django_user_model, django_capture_on_commit_callbacks
):
    """A sensitive write rejected after the backup came back waiting for a reviewer, its item
    open, in the restored database: a reviewer could approve it into use."""
    from memory_core.models import Memory, MemoryEvent, ReviewItem
    from memory_core.services.reviews import review_reject

    memory, item = _pending_write(owner)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        review_reject(
            principal=_reviewer(owner.tenant_id, django_user_model),
            item_id=item.id,
            reason="not about the user",
        )
    assert Memory.objects.get(pk=memory.pk).revocation_journaled_at is not None
    [line] = _journal_lines(journal)
    assert (line["target"], line["rejected_memory_id"]) == ("memory_rejected", str(memory.id))
    assert (line["tenant_id"], line["subject_id"]) == (str(owner.tenant_id), str(owner.id))
    # As the backup had them: waiting, its item open.
    Memory.objects.filter(pk=memory.pk).update(status="pending_approval")
    ReviewItem.objects.filter(pk=item.pk).update(
        state="open", resolution="", reason="", resolved_by=None, resolved_at=None
    )

    result, err = _replay(backup_time)

    assert (result["memories_rejected"], result["memories_rejected_skipped"]) == (1, {})
    assert result["memories_revoked"] == 0 and err == ""
    assert Memory.objects.get(pk=memory.pk).status == "rejected"
    item.refresh_from_db()
    assert (item.state, item.resolution) == ("rejected", "rejected")
    assert line["operation_id"] in item.reason and item.resolved_at is not None
    [event] = MemoryEvent.objects.filter(memory_id=memory.id, actor_id="replay_deletions")
    assert (event.action, event.reason_code) == ("rejected", "review.rejected")
    assert line["operation_id"] in event.details["reason"]
    assert event.details["review_item"] == str(item.id)
    assert _replay(backup_time)[0]["memories_rejected"] == 0  # twice: nothing more


def test_the_replay_leaves_a_write_rejected_already_absent_or_approved_as_it_is(owner, journal):
    import uuid

    from memory_core.deletion.ledger import memory_rejection_entry
    from memory_core.deletion.replay import replay_deletions

    rejected = MemoryFactory(subject=owner, status="rejected")
    approved = MemoryFactory(subject=owner)  # approved since the backup; its line is older
    lines = [
        memory_rejection_entry(
            memory_id=memory_id,
            tenant_id=owner.tenant_id,
            subject_id=owner.id,
            rejected_at=timezone.now(),
        )
        for memory_id in (rejected.id, approved.id, uuid.uuid4())  # the last after the backup
    ]

    result = replay_deletions(entries=lines)

    assert (result["memories_rejected"], result["memories_rejected_skipped"]) == (0, {})
    statuses = {m.pk: m.status for m in owner.memories.all()}
    assert statuses == {rejected.pk: "rejected", approved.pk: "active"}


def test_a_write_whose_subjects_deletion_is_queued_is_named_not_rejected_again(
    owner, journal, django_user_model, django_capture_on_commit_callbacks
):
    from memory_core.models import Memory, ReviewItem, Subject
    from memory_core.services.reviews import review_reject

    memory, item = _pending_write(owner)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        review_reject(
            principal=_reviewer(owner.tenant_id, django_user_model), item_id=item.id, reason="no"
        )
    Memory.objects.filter(pk=memory.pk).update(status="pending_approval")
    ReviewItem.objects.filter(pk=item.pk).update(state="open", resolution="", resolved_at=None)
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=1
    )

    result, err = _replay(backup_time)

    assert result["memories_rejected"] == 0
    assert result["memories_rejected_skipped"] == {str(memory.id): "subject_being_deleted"}
    assert "1 sensitive write(s) not rejected again" in err and str(memory.id) in err
    assert Memory.objects.get(pk=memory.pk).status == "pending_approval"


def test_a_rejection_line_holds_ids_only(
    owner, journal, django_user_model, django_capture_on_commit_callbacks
):
    """No content, key, hash, external id or the reviewer's reason: the journal outlives the
    memory's deletion, and must not keep what was remembered (nor what was said of it)."""
    from memory_core.services.reviews import review_reject

    memory, item = _pending_write(owner, memory_key="health.condition", content="User has asthma.")
    with django_capture_on_commit_callbacks(execute=True):
        review_reject(
            principal=_reviewer(owner.tenant_id, django_user_model),
            item_id=item.id,
            reason="the reviewer's words",
        )

    text = journal.read_text()
    for private in ("asthma", "health.condition", owner.external_id, memory.content_hash,
                    "the reviewer's words"):  # fmt: skip
        assert private not in text
    [line] = _journal_lines(journal)
    assert set(line) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "rejected_memory_id", "tombstones", "written_at",
    }  # fmt: skip
    assert (line["reason_code"], line["tombstones"]) == ("review.rejected", [])


def test_a_rejection_whose_append_failed_is_journaled_by_the_sweep(
    owner, journal, settings, django_user_model, django_capture_on_commit_callbacks
):
    from memory_core.models import Memory
    from memory_core.services.reviews import review_reject
    from memory_core.tasks import deletion_sweep

    memory, item = _pending_write(owner)
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    with django_capture_on_commit_callbacks(execute=True):
        review_reject(
            principal=_reviewer(owner.tenant_id, django_user_model), item_id=item.id, reason="no"
        )
    row = Memory.objects.get(pk=memory.pk)
    assert (row.status, row.revocation_journaled_at) == ("rejected", None)

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    [line] = _journal_lines(journal)
    assert (line["target"], line["rejected_memory_id"]) == ("memory_rejected", str(memory.id))
    assert line["requested_at"] == row.updated_at.isoformat()
    assert Memory.objects.get(pk=memory.pk).revocation_journaled_at is not None


_WIDE = {
    "write_types": sorted(["user_preference", "previous_decision", "task_state", "incident"]),
    "read_types": sorted(["user_preference", "previous_decision", "task_state", "incident"]),
    "max_sensitivity": "sensitive",
    "any_subject": True,
    "issues_subject_tokens": True,
}


def test_an_agents_grant_narrowed_after_the_backup_is_narrowed_again_by_the_replay(
    agent, journal, django_capture_on_commit_callbacks
):
    """A grant was not journaled: narrowed after a backup (a misbehaving agent), it was wide
    again in the restored database, and operations.md told operators to set it by hand."""
    from memory_core.models import Agent
    from memory_core.services.api_keys import agent_grant_set

    Agent.objects.filter(pk=agent.pk).update(**_WIDE)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        agent_grant_set(
            agent=agent,
            write_types=["task_state", "previous_decision"],
            issues_subject_tokens=False,
        )
    with django_capture_on_commit_callbacks(execute=True):
        agent_grant_set(agent=agent, read_types=["user_preference"], max_sensitivity="personal")
    row = Agent.objects.get(pk=agent.pk)
    assert row.grant_changed_at is not None and row.grant_journaled_at is not None
    first, line = _journal_lines(journal)
    assert (line["target"], line["grant_agent_id"]) == ("agent_grant_set", str(agent.pk))
    assert set(line) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "grant_agent_id", "write_types", "read_types", "max_sensitivity", "any_subject",
        "issues_subject_tokens", "tombstones", "written_at",
    }  # fmt: skip
    narrow = {
        "write_types": ["previous_decision", "task_state"],
        "read_types": ["user_preference"],
        "max_sensitivity": "personal",
        "any_subject": True,
        "issues_subject_tokens": False,
    }
    assert {name: line[name] for name in narrow} == narrow
    assert first["read_types"] == _WIDE["read_types"]  # the first setting's grant
    assert line["requested_at"] == row.grant_changed_at.isoformat()
    assert agent.name not in journal.read_text()
    # Setting the same grant again writes nothing.
    with django_capture_on_commit_callbacks(execute=True):
        agent_grant_set(agent=agent, write_types=["task_state", "previous_decision", "task_state"])
    assert len(_journal_lines(journal)) == 2
    Agent.objects.filter(pk=agent.pk).update(**_WIDE, grant_changed_at=None)  # the backup's

    result, _ = _replay(backup_time)

    assert (result["agent_grants_restored"], result["agent_grants_skipped"]) == (1, 0)
    row = Agent.objects.get(pk=agent.pk)
    assert {name: getattr(row, name) for name in narrow} == narrow  # the newest line's
    assert row.grant_changed_at.isoformat() == line["requested_at"]
    assert _replay(backup_time)[0]["agent_grants_restored"] == 0  # nothing more to do


def test_a_keys_expiry_set_after_the_backup_is_set_again_by_the_replay(
    agent, journal, django_capture_on_commit_callbacks
):
    """An expiry was not journaled: set after a backup, the restored key worked past it."""
    from memory_core.models import ApiKey
    from memory_core.services.api_keys import api_key_create, api_key_expiry_set, api_key_resolve

    key, raw_key = api_key_create(agent=agent)
    other, _ = api_key_create(agent=agent)
    backup_time = timezone.now()
    expiry = timezone.now() - timedelta(minutes=1)
    with django_capture_on_commit_callbacks(execute=True):
        api_key_expiry_set(key=key, expires_at=expiry)
        api_key_expiry_set(key=other, expires_at=timezone.now() + timedelta(days=30))
    assert api_key_resolve(raw_key) is None
    row = ApiKey.objects.get(pk=key.pk)
    assert row.expiry_changed_at is not None and row.expiry_journaled_at is not None
    line = next(line for line in _journal_lines(journal) if line["expiry_key_id"] == str(key.pk))
    assert set(line) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "expiry_key_id", "expires_at", "tombstones", "written_at",
    }  # fmt: skip
    assert (line["target"], line["expires_at"]) == ("api_key_expiry_set", expiry.isoformat())
    text = journal.read_text()
    assert raw_key not in text and key.hashed_key not in text and key.prefix not in text
    ApiKey.objects.filter(pk=key.pk).update(expires_at=None, expiry_changed_at=None)
    ApiKey.objects.filter(pk=other.pk).delete()  # made after the backup: unknown to it
    assert api_key_resolve(raw_key) is not None

    result, err = _replay(backup_time)

    assert (result["key_expiries_restored"], result["key_expiries_skipped"]) == (1, 1)
    assert "1 key expiry line(s) name a row this database does not hold" in err
    assert ApiKey.objects.get(pk=key.pk).expires_at == expiry
    assert api_key_resolve(raw_key) is None


def test_a_line_older_than_the_restored_rows_own_setting_is_not_applied(agent, journal):
    """A --since before the backup reads a line the backup's own later setting replaced."""
    from memory_core.deletion.ledger import agent_grant_entry
    from memory_core.deletion.replay import replay_deletions
    from memory_core.models import Agent

    now = timezone.now()
    old = agent_grant_entry(
        agent_id=agent.pk, tenant_id=agent.tenant_id, changed_at=now - timedelta(hours=1),
        grant={**_WIDE, "write_types": []},
    )  # fmt: skip
    Agent.objects.filter(pk=agent.pk).update(**_WIDE, grant_changed_at=now)

    assert replay_deletions(entries=[old])["agent_grants_restored"] == 0
    assert Agent.objects.get(pk=agent.pk).write_types == _WIDE["write_types"]


def test_the_replay_narrows_and_never_widens(agent, journal):
    """A line is read from a file: the replay applies what it takes away, never what it would
    give (a grant widened since the backup, a key's expiry removed or put off), and names the
    rows it left for an administrator. Narrower in one field and wider in another: only the
    narrowing is applied."""
    from memory_core.deletion.ledger import agent_grant_entry, key_expiry_entry, ledger_write
    from memory_core.models import Agent, ApiKey
    from memory_core.services.api_keys import api_key_create
    from tests.factories import AgentFactory

    now = timezone.now()
    backup = {**_WIDE, "read_types": ["user_preference"], "max_sensitivity": "personal"}
    Agent.objects.filter(pk=agent.pk).update(**backup)
    wider = AgentFactory(tenant=agent.tenant)
    Agent.objects.filter(pk=wider.pk).update(**backup)
    expiring, _ = api_key_create(agent=agent)
    sooner, _ = api_key_create(agent=agent)
    in_a_week, tomorrow = now + timedelta(days=7), now + timedelta(days=1)
    ApiKey.objects.filter(pk__in=[expiring.pk, sooner.pk]).update(expires_at=in_a_week)
    lines = [
        # Write types narrowed, read types and sensitivity widened, tokens kept off.
        agent_grant_entry(
            agent_id=agent.pk, tenant_id=agent.tenant_id, changed_at=now,
            grant={**_WIDE, "write_types": ["task_state"], "issues_subject_tokens": False},
        ),
        agent_grant_entry(
            agent_id=wider.pk, tenant_id=agent.tenant_id, changed_at=now, grant=_WIDE
        ),
        key_expiry_entry(
            key_id=expiring.pk, tenant_id=agent.tenant_id, changed_at=now, expires_at=None
        ),
        key_expiry_entry(
            key_id=sooner.pk, tenant_id=agent.tenant_id, changed_at=now, expires_at=tomorrow
        ),
    ]  # fmt: skip

    for line in lines:
        ledger_write(line)
    result, err = _replay(now - timedelta(minutes=1))

    row = Agent.objects.get(pk=agent.pk)
    assert (row.write_types, row.read_types) == (["task_state"], ["user_preference"])
    assert (row.max_sensitivity, row.issues_subject_tokens) == ("personal", False)
    assert {n: getattr(Agent.objects.get(pk=wider.pk), n) for n in backup} == backup
    assert ApiKey.objects.get(pk=expiring.pk).expires_at == in_a_week  # not removed
    assert ApiKey.objects.get(pk=sooner.pk).expires_at == tomorrow  # brought forward
    assert (result["agent_grants_restored"], result["key_expiries_restored"]) == (1, 1)
    assert result["agent_grants_not_widened"] == sorted([str(agent.pk), str(wider.pk)])
    assert result["key_expiries_not_widened"] == [str(expiring.pk)]
    assert "warning: 2 agent(s) whose grant was widened since the backup" in err
    assert "1 key(s) whose expiry was removed or put off since the backup" in err
    assert err.rstrip().endswith(str(expiring.pk))


def test_a_setting_is_stamped_after_the_rows_last_whatever_the_clock(agent, journal):
    """The replay applies each row's newest line: a host whose clock runs behind the one that
    set the row last must still stamp its setting as the later one."""
    from memory_core.models import Agent, ApiKey
    from memory_core.services.api_keys import agent_grant_set, api_key_create, api_key_expiry_set

    ahead = timezone.now() + timedelta(hours=1)  # set last by a host an hour ahead
    Agent.objects.filter(pk=agent.pk).update(grant_changed_at=ahead)
    key, _ = api_key_create(agent=agent)
    ApiKey.objects.filter(pk=key.pk).update(expiry_changed_at=ahead)

    agent_grant_set(agent=agent, write_types=["task_state"])
    api_key_expiry_set(key=key, expires_at=timezone.now() + timedelta(days=1))

    assert Agent.objects.get(pk=agent.pk).grant_changed_at == ahead + timedelta(microseconds=1)
    assert ApiKey.objects.get(pk=key.pk).expiry_changed_at == ahead + timedelta(microseconds=1)


def test_agent_grant_set_refuses_a_grant_no_agent_may_have(agent, journal):
    from memory_core.exceptions import ValidationFailed
    from memory_core.models import Agent
    from memory_core.services.api_keys import agent_grant_set

    for grant in (
        {"write_types": ["no-such-type"]},
        {"max_sensitivity": "secret"},
        {"any_subject": False, "issues_subject_tokens": True},
        {"name": "renamed"},
    ):
        with pytest.raises(ValidationFailed):
            agent_grant_set(agent=agent, **grant)
    assert Agent.objects.get(pk=agent.pk).grant_changed_at is None


def test_grants_and_expiries_whose_append_failed_are_journaled_by_the_sweep(
    agent, journal, settings, django_capture_on_commit_callbacks, caplog
):
    """As a deactivation: an append that failed is logged, and the deletion sweep appends it
    once the journal can be written."""
    from memory_core.models import Agent, ApiKey
    from memory_core.services.api_keys import agent_grant_set, api_key_create, api_key_expiry_set
    from memory_core.tasks import deletion_sweep

    key, _ = api_key_create(agent=agent)
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    expiry = timezone.now() + timedelta(days=1)
    with django_capture_on_commit_callbacks(execute=True):
        agent_grant_set(agent=agent, read_types=["incident"])
        api_key_expiry_set(key=key, expires_at=expiry)
    assert Agent.objects.get(pk=agent.pk).grant_journaled_at is None
    assert ApiKey.objects.get(pk=key.pk).expiry_journaled_at is None
    messages = [record.getMessage() for record in caplog.records]
    assert f"agent {agent.pk}: the journal append of its grant failed" in " ".join(messages)
    assert f"API key {key.pk}: the journal append of its expiry failed" in " ".join(messages)

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    grant, expires = sorted(_journal_lines(journal), key=lambda line: line["target"])
    assert (grant["grant_agent_id"], grant["read_types"]) == (str(agent.pk), ["incident"])
    assert (expires["expiry_key_id"], expires["expires_at"]) == (str(key.pk), expiry.isoformat())
    assert Agent.objects.get(pk=agent.pk).grant_journaled_at is not None
    assert ApiKey.objects.get(pk=key.pk).expiry_journaled_at is not None


def test_the_reader_skips_a_grant_or_expiry_line_it_could_not_apply(journal):
    since = timezone.now() - timedelta(days=1)
    base = {"operation_id": "6f1f7a4e-0000-4000-8000-0000000000aa", "subject_id": None,
            "tenant_id": "6f1f7a4e-0000-4000-8000-0000000000bb", "reason_code": "r",
            "requested_at": timezone.now().isoformat(), "tombstones": []}  # fmt: skip
    grant = {**base, **_WIDE, "target": "agent_grant_set",
             "grant_agent_id": "6f1f7a4e-0000-4000-8000-000000000001"}  # fmt: skip
    expiry = {**base, "target": "api_key_expiry_set", "expires_at": None,
              "expiry_key_id": "6f1f7a4e-0000-4000-8000-000000000002"}  # fmt: skip
    bad = [
        {**grant, "grant_agent_id": "x"},
        {**grant, "write_types": "all"},
        {**grant, "read_types": ["no-such-type"]},
        {**grant, "max_sensitivity": "secret"},
        {**grant, "any_subject": "yes"},
        {**grant, "any_subject": False},  # an issuer acts for any subject
        {**expiry, "expiry_key_id": None},
        {**expiry, "expires_at": "2026-12-01T10:00:00"},  # no time zone
        {key: value for key, value in expiry.items() if key != "expires_at"},
    ]
    journal.write_text("".join(json.dumps(e) + "\n" for e in [*bad, grant, expiry]))
    scan = ledger_scan(since=since)
    assert scan.unreadable == list(range(1, 10))
    assert len(scan.entries) == 1  # both good lines share one operation id: kept once
