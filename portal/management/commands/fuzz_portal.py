"""Fuzz the portal: ``python manage.py fuzz_portal --requests 3000 [--seed 7] [--json OUT]``.

Plants two tenants (portal/fuzz.py: alice in both, bob beside A's alice, an end-user login
and a reviewer login in A), sends generated form posts and query strings through the portal
in-process, prints the counts, and rolls everything back: the database is left as it was.
Exit status 1 if any 5xx, any row the caller may not see was shown or changed, or a forged
POST (no CSRF token, or not the session's) was not refused with nothing changed.
"""

import json
import logging
import uuid

from django.core.management.base import BaseCommand

from memory_core.benchmarks.args import at_least
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.management.scratch import rolled_back
from memory_core.rls import platform_command
from portal.fuzz import fuzz_run, plant


class Command(BaseCommand):
    help = "Send generated portal requests; count 5xx and rows shown or changed across scopes."

    def add_arguments(self, parser):
        parser.add_argument("--requests", type=at_least(1), default=3000)
        parser.add_argument("--seed", type=at_least(0), default=7)
        parser.add_argument("--json", dest="json_out", default="")

    @platform_command
    def handle(self, *args, requests, seed, json_out, **options):
        target = check_output_path(json_out)  # before the run, not after it
        # Hundreds of expected 404s: keep the output to the counts.
        logging.getLogger("django.request").setLevel(logging.ERROR)
        logging.getLogger("django.security.csrf").setLevel(logging.ERROR)  # the forged posts

        def fuzz():
            world = plant(prefix=f"pfuzz-{uuid.uuid4().hex[:8]}")
            return fuzz_run(world=world, requests=requests, rng_seed=seed)

        summary = rolled_back(fuzz).as_dict()
        for key, value in summary.items():
            if key != "examples":
                self.stdout.write(f"{key}: {value}")
        write_output(self, target, json.dumps(summary, indent=2, default=str) + "\n")
        if (
            summary["server_errors"]
            + summary["foreign_rows_shown"]
            + summary["foreign_rows_changed"]
            + summary["forged_posts_not_refused"]
        ):
            self.stderr.write(json.dumps(summary["examples"], indent=2, default=str)[:5000])
            raise SystemExit(1)
