"""Operators' journal commands given an empty or wrong value by a script (stop 50's audit):
refused, never a silent success on another source than the one named."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

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
