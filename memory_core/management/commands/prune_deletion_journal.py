"""Drop the deletion journal's lines no restore can need: those older than the oldest backup."""

import json
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_core.clock import database_now
from memory_core.deletion.ledger import ledger_folder_missing, ledger_path, ledger_prune
from memory_core.management.commands._options import parse_moment, path_kind
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = (
        "Drop the deletion journal's entries requested before TIMESTAMP (the time of the oldest "
        "backup kept). Refuses a time within MEMLEDGER_BACKUP_RETENTION_DAYS of now: a backup "
        "that young may still be restored, and its replay needs the lines."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--before",
            required=True,
            help="ISO timestamp: 35 days ago (MEMLEDGER_BACKUP_RETENTION_DAYS), or the time the "
            "oldest backup still kept was taken if that is earlier",
        )
        parser.add_argument(
            "--ledger", help="the journal file (default: MEMLEDGER_DELETION_LEDGER)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be dropped; change nothing"
        )

    @platform_command  # a database that does not exist is a sentence, not a traceback
    def handle(self, *args, before, ledger=None, dry_run=False, **options):
        moment = parse_moment(before, option="--before")
        days = settings.MEMLEDGER_BACKUP_RETENTION_DAYS
        latest = _latest_allowed(days)
        if moment > latest:
            raise CommandError(
                f"--before {before} is within the {days} days backups are kept "
                f"(MEMLEDGER_BACKUP_RETENTION_DAYS): a backup taken since may still be "
                f"restored, and its replay reads those lines. Give {latest:%Y-%m-%d} or "
                "earlier. Nothing was dropped."
            )
        if ledger is not None and not ledger.strip():
            # A script's --ledger "$JOURNAL" with JOURNAL unset pruned the live journal.
            raise CommandError(
                "--ledger is empty: name the journal file (or leave the option out to prune "
                "MEMLEDGER_DELETION_LEDGER). Nothing was pruned."
            )
        path = Path(ledger) if ledger else ledger_path()
        kind = path_kind(path, option="--ledger")
        if not kind and (ledger is not None or ledger_folder_missing(path)):
            # Named and not there (a volume not mounted, a typo): "dropped 0, kept 0" would say
            # all is well while nothing was looked at. The default journal may not exist yet
            # (nothing was deleted since the install), unless its folder, outside
            # MEMLEDGER_DATA_DIR, is missing too: its volume is not mounted.
            raise CommandError(f"no deletion journal at {path}: nothing was pruned.")
        if kind and kind != "file":
            raise CommandError(f"{path} is not a file: --ledger takes the journal file.")
        try:
            result = ledger_prune(before=moment, path=path, dry_run=dry_run)
        except OSError as exc:
            raise CommandError(f"Cannot prune the deletion journal {path}: {exc}") from exc
        report = {
            "before": moment.isoformat(),
            "journal": str(path),
            "dry_run": dry_run,
            "dropped": result.dropped,
            "kept": result.kept,
            "unreadable_kept": result.unreadable_kept,
            "bytes_before": result.bytes_before,
            "bytes_after": result.bytes_after,
        }
        self.stdout.write(json.dumps(report, sort_keys=True))


def _latest_allowed(days: int) -> datetime:
    """Return the latest ``--before`` allowed: ``days`` before the database's clock, the one
    the deletion sweep leaves the lines of actions older than the oldest backup out by
    (``ledger.backups_cutoff``) and a dump's snapshot is taken on.

    Not this host's ``timezone.now()``: on a host two days fast, ``--before "$(date -u -d
    '35 days ago' ...)"`` passed for a moment 33 days ago, and the lines of deletions requested
    after the oldest backup kept were dropped; its restore brought their memories back
    (stop 66's review)."""
    return database_now() - timedelta(days=days)
