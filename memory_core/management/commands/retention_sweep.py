"""Run one retention sweep now, as the ``retention-sweep`` beat task does, and print its report.

The beat task's report (``retention_apply``) is its return value, which only the worker's INFO
log line carries (results are not stored): a step that fails at every run (a statement that
always outlasts its timeout) expired none of its rows, and nothing an operator looks at said
so but ERROR lines among the worker's others. This command prints the report and names the
failed steps, and exits 1 when a step failed, so an operator (or a monitoring job) sees it.
"""

import contextlib
import json
import signal
import threading

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, InterfaceError, connection
from psycopg.pq import TransactionStatus

from memory_core.deletion.retention import database_unavailable, retention_apply
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = (
        "Run one retention sweep now (what the retention-sweep beat task runs every 5 minutes; "
        "a run beside the task's is safe) and print its report as JSON. Exits 1, naming them, "
        "when a step failed (steps_failed: logged with its error, the later steps went on); "
        "the tenants whose part of a step failed (tenant_failures) are named too. A database "
        "it cannot use (not reachable, or taking no writes) ends it with exit 1 and no report, "
        "and so does the beat task's soft time limit (CELERY_TASK_SOFT_TIME_LIMIT), which ends "
        "a run still going then, as it ends the task's."
    )

    def handle(self, *args, **options):
        limit = settings.CELERY_TASK_SOFT_TIME_LIMIT
        try:
            report = self._sweep(limit)
        except SoftTimeLimitExceeded:
            raise CommandError(
                f"retention sweep: the run was ended at {limit:g} s, the beat task's soft time "
                "limit (CELERY_TASK_SOFT_TIME_LIMIT), as the task's is: a statement waited that "
                "long (a lock another transaction holds: a subject's deletion, say). What its "
                "steps committed is kept, and the next run goes on."
            ) from None
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
        if report["steps_failed"]:
            raise CommandError(
                f"retention sweep: step(s) failed: {', '.join(report['steps_failed'])}. Each "
                "is logged with its error (`retention <step>: the step failed`); the later "
                "steps went on, and a failed step's rows wait for a run in which it succeeds "
                "(docs/operations.md, Retention)."
            )

    @platform_command  # every tenant's rows, as the beat task's platform_scope
    def _sweep(self, limit: float | None) -> dict:
        """Run the sweep, ended at ``limit`` seconds (``_soft_time_limit``); what the database
        as a whole refused (``database_unavailable``, which the sweep raises: every later step
        would fail alike) is a ``CommandError``. Judged here: leaving platform mode after a
        lost connection connects again. The limit is the sweep's alone, not platform mode's
        setting and clearing: reached in those (until stop 70's second review) it failed the
        clearing, whose connection was then closed."""
        try:
            with _soft_time_limit(limit):
                return retention_apply()
        except (DatabaseError, InterfaceError) as exc:
            if not database_unavailable(exc):
                raise
            raise _unusable(
                exc, "the sweep stopped there; what its steps committed is kept"
            ) from exc


# Seconds a run still going at its soft time limit, with no statement since to raise it
# from (``_soft_time_limit``), has before the limit is raised wherever it is.
LIMIT_GRACE_SECONDS = 5


@contextlib.contextmanager
def _soft_time_limit(seconds: float | None):
    """Raise ``SoftTimeLimitExceeded`` in the block after ``seconds`` (None or 0: never), as
    a worker does at a task's soft time limit: the sweep ends where it is, its steps' commits
    kept (``retention._contained``). Until stop 70's review a command whose operation waited
    for a subject's lock (held by that subject's deletion for as long as it runs, or by an
    abandoned session for good) waited as long, printing nothing, where the task's run ends.

    A signal (``SIGALRM``), as the worker's: only the main thread receives them, and a
    command called from another thread is not bounded.

    At the limit a statement in flight (a lock wait; a COMMIT's deferred foreign-key checks
    wait for rows too) is cancelled on the server, and the limit is raised from the error it
    ends with, or before the next statement (``stopped``), the connection between two
    statements; the block's end raises it too (the cancelled COMMIT's error is counted as its
    tenant's, and a raise a part swallowed). Raised where the main thread was (until stop
    70's second review), in psycopg's wait for a COMMIT's answer it left the connection
    ACTIVE, the answer never read: Django's ``atomic`` failed to restore autocommit (a
    ``ProgrammingError``), the sweep counted that as a tenant's failure and went on past the
    limit, every later statement failing ("another command is already in progress"), and
    the command printed a report; in Django's transaction bookkeeping, it left the
    connection in a transaction nothing would commit. Only a run still going
    ``LIMIT_GRACE_SECONDS`` later, no statement since (a file lock's wait, say), is raised
    at once."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    state = {"expired": False, "pending": False}

    def expired(signum, frame):
        if state["expired"]:
            raise SoftTimeLimitExceeded()  # the grace ended: where it is, as a worker does
        state["expired"] = state["pending"] = True
        signal.setitimer(signal.ITIMER_REAL, LIMIT_GRACE_SECONDS)
        raw = connection.connection
        if raw is not None and raw.info.transaction_status == TransactionStatus.ACTIVE:
            # Not raised in psycopg's wait: the raise alone would end the client's wait
            # only, the server's backend waiting on (in a subject's lock, with the rows its
            # transaction locked); cancelled, the statement ends with an error (``stopped``).
            with contextlib.suppress(Exception):
                raw.cancel_safe(timeout=5)

    def stopped(execute, sql, params, many, context):
        if state["pending"]:
            state["pending"] = False
            raise SoftTimeLimitExceeded()
        try:
            return execute(sql, params, many, context)
        except DatabaseError as exc:
            if state["pending"]:  # the statement cancelled at the limit
                state["pending"] = False
                raise SoftTimeLimitExceeded() from exc
            raise

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with connection.execute_wrapper(stopped):
            yield
        if state["expired"]:
            raise SoftTimeLimitExceeded()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _unusable(exc: Exception, where: str) -> CommandError:
    """The sweep's end on a database it cannot use (a traceback until stop 70's review)."""
    return CommandError(
        f"retention sweep: the database could not be used ({str(exc).strip()}); {where}. Run "
        "it again once the database takes writes (the beat task's runs retry on their own)."
    )
