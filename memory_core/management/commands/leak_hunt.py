"""``python manage.py leak_hunt --retrievals 10000 [--json OUT]``: count canaries that leak.

Plants canaries in sibling tenants, subjects, scopes and agents, runs adversarial retrievals
through the real pipeline (vector and full-text arms), prints the counts, and rolls every
planted row back. Progress (retrievals done, leaks so far) goes to stderr every 5 % of the
run. Exit status 1 if any canary reached the wrong caller.
"""

import json
import uuid

from django.core.management.base import BaseCommand

from memory_core.benchmarks.args import at_least
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.management.scratch import rolled_back
from memory_core.rls import platform_command
from memory_core.security.leak_hunt import hunt


class Command(BaseCommand):
    help = (
        "Plant canaries and run adversarial retrievals; count canaries given to the wrong caller."
    )

    def add_arguments(self, parser):
        # --retrievals 0 (or -1) printed a clean report of a hunt that asked nothing.
        parser.add_argument("--retrievals", type=at_least(1), default=10000)
        parser.add_argument("--seed", type=at_least(0), default=11)
        parser.add_argument("--json", dest="json_out", default="")
        parser.add_argument(
            "--keep", action="store_true", help="Commit the planted tenants instead."
        )

    @platform_command
    def handle(self, *args, retrievals, seed, json_out, keep, **options):
        target = check_output_path(json_out)  # before the run, not after it
        prefix = f"leak-{uuid.uuid4().hex[:8]}"
        report = rolled_back(
            lambda: hunt(retrievals=retrievals, prefix=prefix, seed=seed, log=self.stderr.write),
            keep=keep,
        )
        summary = report.as_dict()
        for key, value in summary.items():
            if key != "leak_examples":
                self.stdout.write(f"{key}: {value}")
        write_output(self, target, json.dumps(summary, indent=2, default=str) + "\n")
        if summary["leaks"]:
            self.stderr.write(json.dumps(summary["leak_examples"], indent=2, default=str))
            raise SystemExit(1)
