"""Operators' journal commands given an empty or wrong value by a script (stop 50's and stop
54's audits): refused, never a silent success on another source than the one named; and a
journal linked to storage apart pruned where it lives."""

import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

pytestmark = pytest.mark.django_db


def test_replay_refuses_an_empty_ledger_database(settings, tmp_path):
    """docs/operations.md: where the journal may lack a line, replay a second time from the
    damaged database, ``--ledger-database memledger_damaged``. A script's
    ``--ledger-database "$OLD"`` with OLD unset replayed the journal again instead (an empty
    name is falsy) and succeeded: the lines only the old database holds were never replayed,
    and the memories they deleted stay in service. delete_subject refuses an empty --key for
    the same reason."""
    journal = tmp_path / "deletion-ledger.jsonl"
    journal.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = journal
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command(
            "replay_deletions",
            "--since",
            "2026-01-01T00:00:00+00:00",
            "--ledger-database",
            "",
            stdout=out,
            stderr=StringIO(),
        )
    assert "--ledger-database" in str(refused.value)
    assert out.getvalue() == ""  # nothing replayed, from any source


def test_prune_refuses_a_journal_that_does_not_exist(tmp_path):
    """``--ledger`` naming a file that does not exist (a volume not mounted, a typo) printed
    ``{"dropped": 0, "kept": 0, ...}`` and exited 0: the operator's daily prune says all is
    well while it looks at nothing. replay_deletions refuses the same path (``no deletion
    journal at PATH``)."""
    missing = tmp_path / "not-mounted" / "deletion-ledger.jsonl"
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command(
            "prune_deletion_journal",
            "--before",
            "2000-01-01T00:00:00+00:00",
            "--ledger",
            str(missing),
            stdout=out,
        )
    assert str(missing) in str(refused.value)
    assert out.getvalue() == ""


LONG_NAME = "x" * 300  # one path component longer than the file system's NAME_MAX (255)
GOLDEN = Path(__file__).parents[1] / "golden" / "retrieval_golden.json"


@pytest.mark.parametrize(
    "args",
    [
        ("prune_deletion_journal", "--before", "2001-01-01", "--ledger", LONG_NAME, "--dry-run"),
        ("replay_deletions", "--since", "2001-01-01", "--ledger", LONG_NAME),
        ("eval_retrieval", "--dataset", str(GOLDEN), "--json", LONG_NAME),
    ],
)  # fmt: skip
def test_a_path_too_long_for_the_file_system_is_a_command_error(args):
    """pathlib's exists() and is_dir() raise OSError (ENAMETOOLONG) on a name over 255 bytes:
    a traceback, where every other bad path is a CommandError naming it (stop 51's fuzzing)."""
    with pytest.raises(CommandError, match="File name too long"):
        call_command(*args, stdout=StringIO(), stderr=StringIO())


def _old_line(operation_id: str, days: int) -> str:
    moment = (timezone.now() - timedelta(days=days)).isoformat()
    return json.dumps(
        {
            "operation_id": operation_id,
            "requested_at": moment,
            "written_at": moment,
            "tenant_id": "11111111-1111-1111-1111-111111111111",
            "subject_id": None,
            "target": "memory",
            "tombstones": [],
        },
        sort_keys=True,
    )


def test_prune_refuses_an_empty_ledger_instead_of_pruning_the_default_journal(settings, tmp_path):
    """``prune_deletion_journal --ledger "$JOURNAL"`` with JOURNAL unset: the empty name is
    falsy, so the command pruned MEMLEDGER_DELETION_LEDGER (the live journal) instead of the
    file the script meant, and said so as a success. replay_deletions refuses an empty
    --ledger-database and delete_subject an empty --key for this very reason
    (above)."""
    live = tmp_path / "deletion-ledger.jsonl"
    text = _old_line("22222222-2222-2222-2222-222222222222", 400) + "\n"
    live.write_text(text)
    settings.MEMLEDGER_DELETION_LEDGER = live
    before = (timezone.now() - timedelta(days=100)).isoformat()
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("prune_deletion_journal", "--before", before, "--ledger", "", stdout=out)
    assert "--ledger" in str(refused.value)
    assert live.read_text() == text  # the live journal untouched
    assert out.getvalue() == ""


def test_replay_refuses_an_empty_ledger_instead_of_replaying_the_default_journal(
    settings, tmp_path
):
    """The same for ``replay_deletions --ledger "$JOURNAL"`` (the journal kept on separate
    storage, docs/operations.md "Backups") with JOURNAL unset: it replayed the default
    journal instead and succeeded, where the same empty --ledger-database is refused."""
    live = tmp_path / "deletion-ledger.jsonl"
    live.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = live
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command(
            "replay_deletions", "--since", "2026-01-01T00:00:00+00:00", "--ledger", "",
            stdout=out, stderr=StringIO(),
        )  # fmt: skip
    assert "--ledger" in str(refused.value)
    assert out.getvalue() == ""


def test_prune_keeps_a_journal_linked_to_separate_storage_where_it_lives(settings, tmp_path):
    """docs/operations.md "Backups": keep the deletion journal (MEMLEDGER_DELETION_LEDGER,
    default .data/deletion-ledger.jsonl) on storage separate from the database and its
    backups. A symbolic link at the configured path to that storage is the plain way to do it
    (the evaluation store already rewrites "a file linked in ... where it lives, the link
    stays"). ``prune_deletion_journal`` renamed its rewrite over the link
    (``files.replacing``: ``os.replace(tmp, path)``): the journal on the separate storage kept
    every line it should have dropped, and the configured path became a regular file beside
    the database, where every later deletion's line was appended (lost with that disk, so a
    restore's replay would not forget those memories again)."""
    storage = tmp_path / "separate-storage"
    storage.mkdir()
    real = storage / "deletion-ledger.jsonl"
    old = _old_line("33333333-3333-3333-3333-333333333333", 400)
    recent = _old_line("44444444-4444-4444-4444-444444444444", 1)
    real.write_text(old + "\n" + recent + "\n")
    data = tmp_path / "data"
    data.mkdir()
    link = data / "deletion-ledger.jsonl"
    link.symlink_to(real)
    settings.MEMLEDGER_DELETION_LEDGER = link
    before = (timezone.now() - timedelta(days=100)).isoformat()

    out = StringIO()
    call_command("prune_deletion_journal", "--before", before, stdout=out)
    assert json.loads(out.getvalue())["dropped"] == 1

    assert link.is_symlink(), "the link to the separate storage was replaced by a local file"
    assert real.read_text() == recent + "\n"  # pruned where it lives
