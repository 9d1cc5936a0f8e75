"""Re-apply every deletion recorded after a backup was taken (run right after a restore), and
the key revocations, agent deactivations, portal logins' access taken away, agents' grants,
keys' expiries, tenants' policy retention, memory revocations and rejections recorded with
them."""

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from memory_core.deletion.ledger import ledger_path, ledger_scan, line_numbers
from memory_core.deletion.replay import ledger_from_database, replay_deletions
from memory_core.exceptions import Busy
from memory_core.management.commands._options import check_texts, parse_moment, path_kind
from memory_core.models import DeletionOperation
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = (
        "Replay the deletion ledger since TIMESTAMP (the backup's time) into this database: "
        "keys revoked, agents deactivated, portal memberships removed, logins deactivated and "
        "a restored older password made unusable, agents' grants and keys' expiries set (the "
        "newest of each), tenants' retention narrowed to their newest policy version's, memories "
        "revoked, sensitive writes rejected and closed tasks' memories expired again, then "
        "every deletion written again and "
        "its steps purged and verified in-process."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", required=True, help="ISO timestamp of the backup")
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--ledger",
            help="the journal file (default: MEMLEDGER_DELETION_LEDGER)",
        )
        source.add_argument(
            "--ledger-database",
            help="read the ledger from this database of the same server instead of a file",
        )

    @platform_command
    def handle(self, *args, since, ledger=None, ledger_database=None, **options):
        check_texts({"--ledger-database": ledger_database})  # a file's name may hold any byte
        moment = parse_moment(since, option="--since")
        if moment > timezone.now():
            # A mistyped year would replay nothing and succeed, leaving every deletion since
            # the backup undone in the restored database.
            raise CommandError(
                f"--since {since} is in the future: give the time the backup was taken."
            )
        if ledger_database is not None and not ledger_database.strip():
            # A script's --ledger-database "$OLD" with OLD unset replayed the journal instead,
            # and the lines only the damaged database holds were never replayed.
            raise CommandError(
                "--ledger-database is empty: name the damaged database to read the ledger of "
                "(or leave the option out to replay the journal file). Nothing was replayed."
            )
        if ledger is not None and not ledger.strip():
            # The same for --ledger "$JOURNAL": the default journal was replayed instead.
            raise CommandError(
                "--ledger is empty: name the journal file (or leave the option out to replay "
                "MEMLEDGER_DELETION_LEDGER). Nothing was replayed."
            )
        _refuse_unmigrated()
        unreadable: list[int] = []
        recovered: list[int] = []
        if ledger_database:
            try:
                entries = ledger_from_database(dbname=ledger_database, since=moment)
            except psycopg.Error as exc:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                raise CommandError(
                    f"Cannot read the ledger of database {ledger_database!r} on this server "
                    f"(a memledger database?): {reason}"
                ) from exc
            source = f"database {ledger_database}"
        else:
            path = Path(ledger) if ledger else ledger_path()
            kind = path_kind(path, option="--ledger")
            if not kind:
                raise CommandError(f"no deletion journal at {path}")
            if kind != "file":
                raise CommandError(f"{path} is not a file: --ledger takes the journal file.")
            try:
                scan = ledger_scan(since=moment, path=path)
            except OSError as exc:
                raise CommandError(f"Cannot read the deletion journal {path}: {exc}") from exc
            entries, unreadable, recovered = scan.entries, scan.unreadable, scan.recovered
            source = str(path)
            if unreadable and not entries and not recovered and not _has_entry(path):
                # Not one line is an entry: another file (the dump itself, say) was given.
                # Replaying nothing and succeeding would leave every deletion undone.
                raise CommandError(
                    f"None of the {len(unreadable)} line(s) of {path} is a deletion journal "
                    "entry: is it the journal (MEMLEDGER_DELETION_LEDGER)? Nothing was "
                    "replayed."
                )
            if unreadable:
                self.stderr.write(
                    f"warning: {len(unreadable)} line(s) of {path} are not journal entries "
                    f"and were skipped: line {line_numbers(unreadable)}"
                )
            if recovered:
                self.stderr.write(
                    f"warning: {len(recovered)} line(s) of {path} began with a torn append, "
                    f"which was dropped (the whole entry after it was read): "
                    f"line {line_numbers(recovered)}"
                )
        try:
            result = replay_deletions(entries=entries, log=self.stderr.write)
        except Busy as exc:  # a tenant's rows kept being taken by traffic: run it again
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        result.update(
            {
                "since": moment.isoformat(),
                "source": source,
                "entries": len(entries),
                "unreadable_lines": len(unreadable),
                "recovered_lines": len(recovered),
            }
        )
        # Named, not failed: the queued deletion (the restored database's mark) removes them.
        not_again = {
            "memories_skipped": "memory(ies) not revoked again",
            "memories_rejected_skipped": "sensitive write(s) not rejected again",
            "memories_task_closed_skipped": "memory(ies) of a closed task not expired again",
        }
        for key, what in not_again.items():
            if result[key]:
                self.stderr.write(
                    f"warning: {len(result[key])} {what}, their subject's (or key's) deletion "
                    "being queued; the deletion removes them once a worker makes it: "
                    f"{', '.join(sorted(result[key]))}"
                )
        skipped = {
            "agent grant": result["agent_grants_skipped"],
            "key expiry": result["key_expiries_skipped"],
        }
        for what, count in skipped.items():
            if count:
                # Made after the backup: unknown here, their clients get 401 until given keys.
                self.stderr.write(
                    f"note: {count} {what} line(s) name a row this database does not hold "
                    "(made after the backup) and were skipped"
                )
        not_widened = {
            "agent(s) whose grant was widened": result["agent_grants_not_widened"],
            "key(s) whose expiry was removed or put off": result["key_expiries_not_widened"],
        }
        for what, ids in not_widened.items():
            if ids:
                # A replay only takes access away: a widening is given back by an administrator.
                self.stderr.write(
                    f"warning: {len(ids)} {what} since the backup: left as the restored "
                    "database has it, narrowed only; set it again in the admin if that was "
                    f"meant: {', '.join(ids)}"
                )
        if result["passwords_made_unusable"]:
            # The restore brought back a password changed since (one that leaked, say).
            self.stderr.write(
                f"warning: {len(result['passwords_made_unusable'])} login(s) whose password "
                "was changed since the backup had an older one back: made unusable, their "
                "sessions ended; set a new password in the admin: "
                f"{', '.join(result['passwords_made_unusable'])}"
            )
        if result["policies_not_widened"]:
            # As a grant's: a retention is only ever shortened from a file.
            named = "; ".join(
                f"{tenant} ({', '.join(keys)})"
                for tenant, keys in sorted(result["policies_not_widened"].items())
            )
            self.stderr.write(
                f"warning: {len(result['policies_not_widened'])} tenant(s) whose retention was "
                "lengthened (or its limit removed) since the backup: left as the restored "
                "database has it, shortened only; publish it again in the admin if that was "
                f"meant: {named}"
            )
        if result["policies_not_restored"]:
            named = "; ".join(
                f"{tenant}: {why}"
                for tenant, why in sorted(result["policies_not_restored"].items())
            )
            self.stderr.write(
                f"warning: {len(result['policies_not_restored'])} tenant(s) whose retention "
                "was shortened since the backup could not be shortened again (nothing "
                f"published); publish a corrected policy in the admin: {named}"
            )
        self.stdout.write(json.dumps(result, sort_keys=True))
        if result["incomplete"]:
            raise CommandError(_incomplete_message(result["incomplete"]))


def _refuse_unmigrated() -> None:
    """Refuse, before replaying anything, a database this release's migrations have not all
    been applied to: a backup of an earlier release restored and not migrated yet.

    Replayed as this release's models have them, its rows failed half way with a traceback
    (an undefined column), after the keys were revoked again and before any deletion was
    (stop 67's audit of backups)."""
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        first, _backwards = plan[0]
        raise CommandError(
            f"Database {connection.settings_dict['NAME']!r} is not migrated to this release "
            f"({len(plan)} migration(s) to apply, the first {first.app_label}.{first.name}): a "
            "backup of an earlier release, or a restore not finished. Once pg_restore has "
            "finished, run `python manage.py migrate`, then replay (docs/operations.md, "
            '"Restore procedure"). Nothing was replayed.'
        )


def _incomplete_message(incomplete: dict) -> str:
    """Name each operation that did not complete with its state and why (its
    ``last_error``), and say what to do: until stop 67's audit of backups the message was the
    bare dict, ``DeletionState.PARTIAL`` and no cause (a journal that could not be written)."""
    errors = dict(
        DeletionOperation.objects.filter(pk__in=list(incomplete)).values_list("pk", "last_error")
    )
    named = "; ".join(
        f"{pk} ({status}: {_first_line(errors.get(uuid.UUID(pk), ''))})"
        for pk, status in sorted(incomplete.items())
    )
    return (
        f"{len(incomplete)} operation(s) did not complete: {named}. What their steps purged "
        "stays purged. Fix what the errors name (each replayed operation is appended to the "
        "journal again, MEMLEDGER_DELETION_LEDGER, which must be writable) and run "
        "replay_deletions again: replaying twice changes nothing more."
    )


def _first_line(error: str) -> str:
    """Return the first line of ``error``, at most 300 characters; a placeholder for none."""
    line = error.strip().splitlines()[0] if error.strip() else "no error recorded"
    return line if len(line) <= 300 else line[:299] + "…"


def _has_entry(path: Path) -> bool:
    """Return whether any line of the journal is an entry, whatever its time."""
    return bool(ledger_scan(since=datetime.min.replace(tzinfo=UTC), path=path).entries)
