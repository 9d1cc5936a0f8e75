"""Run one retention sweep now, as the ``retention-sweep`` beat task does, and print its report.

The beat task's report (``retention_apply``) is its return value, which only the worker's INFO
log line carries (results are not stored): a step that fails at every run (a statement that
always outlasts its timeout) expired none of its rows, and nothing an operator looks at said
so but ERROR lines among the worker's others. This command prints the report and names the
failed steps, and exits 1 when a step failed, so an operator (or a monitoring job) sees it.
"""

import json

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, InterfaceError

from memory_core.deletion.retention import database_unavailable, retention_apply
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = (
        "Run one retention sweep now (what the retention-sweep beat task runs every 5 minutes; "
        "a run beside the task's is safe) and print its report as JSON. Exits 1, naming them, "
        "when a step failed (steps_failed: logged with its error, the later steps went on); "
        "the tenants whose part of a step failed (tenant_failures) are named too. A subject "
        "whose lock another transaction holds (its deletion, a write) is waited for 2 s at "
        "most, then skipped and named (subjects_busy; no failure: the next run retries it). "
        "A database it cannot use (not reachable, or taking no writes) ends it with exit 1 "
        "and no report."
    )

    def handle(self, *args, **options):
        try:
            report = self._sweep()
        except (DatabaseError, InterfaceError) as exc:  # connecting, before the sweep began
            if not database_unavailable(exc):
                raise
            raise _unusable(exc, "the sweep did not begin") from exc
        self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
        for failure in report["tenant_failures"]:
            self.stderr.write(
                f"retention sweep: tenant {failure['tenant_id']}'s part of {failure['step']} "
                f"failed {failure['count']} time(s) (logged with its error; the other tenants "
                "went on)"
            )
        for held in report["subjects_busy"]:
            self.stderr.write(
                f"retention sweep: subject {held['subject_id']} of tenant {held['tenant_id']} "
                "was busy (another transaction held its lock or rows: its deletion, a write); "
                "skipped, the next run retries it"
            )
        if report["steps_failed"]:
            raise CommandError(
                f"retention sweep: step(s) failed: {', '.join(report['steps_failed'])}. Each "
                "is logged with its error (`retention <step>: the step failed`); the later "
                "steps went on, and a failed step's rows wait for a run in which it succeeds "
                "(docs/operations.md, Retention)."
            )

    @platform_command  # every tenant's rows, as the beat task's platform_scope
    def _sweep(self) -> dict:
        """Run the sweep; what the database as a whole refused (``database_unavailable``,
        which the sweep raises: every later step would fail alike) is a ``CommandError``.
        Judged here: leaving platform mode after a lost connection connects again.

        No time limit of its own: every lock wait of the sweep that another transaction may
        make long is bounded where it is taken (``retention.SUBJECT_LOCK_TIMEOUT_MS``,
        ``TURN_LOCK_TIMEOUT_MS``; the other steps skip held rows), for the beat task alike.
        Until stop 70's third review a SIGALRM soft limit stood in for that here."""
        try:
            return retention_apply()
        except (DatabaseError, InterfaceError) as exc:
            if not database_unavailable(exc):
                raise
            raise _unusable(
                exc, "the sweep stopped there; what its steps committed is kept"
            ) from exc


def _unusable(exc: Exception, where: str) -> CommandError:
    """The sweep's end on a database it cannot use (a traceback until stop 70's review)."""
    return CommandError(
        f"retention sweep: the database could not be used ({str(exc).strip()}); {where}. Run "
        "it again once the database takes writes (the beat task's runs retry on their own)."
    )
