"""The deletion journal: a failed append leaves no torn line, and the reader skips bad lines."""

import errno
import json
import os
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memory_core.deletion import ledger
from memory_core.deletion.ledger import ledger_append, ledger_entry, ledger_read, ledger_scan
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def journal(settings, tmp_path):
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "deletion-ledger.jsonl"
    return settings.MEMLEDGER_DELETION_LEDGER


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
    import threading

    first, second = (
        deletion_request(principal=owner_principal, memory_id=memory.id) for memory in memories[:2]
    )
    ledger_append(first)
    with open(journal, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as ledger_prune holds it while it rewrites
        appending = threading.Thread(target=ledger_append, args=(second,))
        appending.start()
        appending.join(0.3)
        assert appending.is_alive()  # waiting for the lock
        replacement = journal.with_name("replacement")
        replacement.write_bytes(journal.read_bytes())
        os.replace(replacement, journal)
    appending.join(10)

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
