"""Run one retention sweep now, as the ``retention-sweep`` beat task does, and print its report.

The beat task's report (``retention_apply``) is its return value, which only the worker's INFO
log line carries (results are not stored): a step that fails at every run (a statement that
always outlasts its timeout) expired none of its rows, and nothing an operator looks at said
so but ERROR lines among the worker's others. This command prints the report and names the
failed steps, and exits 1 when a step failed, so an operator (or a monitoring job) sees it.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from memory_core.deletion.retention import retention_apply
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = (
        "Run one retention sweep now (what the retention-sweep beat task runs every 5 minutes; "
        "a run beside the task's is safe) and print its report as JSON. Exits 1, naming them, "
        "when a step failed (steps_failed: logged with its error, the later steps went on); "
        "the tenants whose part of a step failed (tenant_failures) are named too."
    )

    @platform_command  # every tenant's rows, as the beat task's platform_scope
    def handle(self, *args, **options):
        report = retention_apply()
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
