"""Fuzz the API with schemathesis: ``python manage.py fuzz_api --requests 5000 [--json OUT]``.

Plants two tenants (A calls, B must stay invisible), sends the generated requests through the
WSGI app in-process with A's real key, prints the counts, and rolls everything back: the
database is left as it was. Exit status 1 if any 5xx, schema violation or cross-tenant
success was seen.
"""

import json
import logging
import uuid

from django.core.management.base import BaseCommand

from api.fuzz import fuzz_run, plant
from memory_core.benchmarks.args import at_least
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.management.scratch import rolled_back
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = "Send generated requests (schemathesis) and count 5xx, schema and tenant violations."

    def add_arguments(self, parser):
        # --requests 0 (or -1) printed "0 5xx, 0 cross-tenant successes" for no request.
        parser.add_argument("--requests", type=at_least(1), default=5000)
        parser.add_argument("--seed", type=at_least(0), default=7)
        parser.add_argument("--json", dest="json_out", default="")

    @platform_command
    def handle(self, *args, requests, seed, json_out, **options):
        target = check_output_path(json_out)  # before the run, not after it
        from config.wsgi import application

        # Thousands of expected 4xx: keep the output to the counts.
        logging.getLogger("django.request").setLevel(logging.ERROR)

        def fuzz():
            target, _ = plant(prefix=f"fuzz-{uuid.uuid4().hex[:8]}")
            return fuzz_run(app=application, target=target, requests=requests, rng_seed=seed)

        summary = rolled_back(fuzz).as_dict()
        for key in (
            "requests",
            "operations",
            "statuses",
            "server_errors",
            "schema_violations",
            "cross_tenant_successes",
            "foreign_id_requests",
            "seconds",
        ):
            self.stdout.write(f"{key}: {summary[key]}")
        write_output(self, target, json.dumps(summary, indent=2, default=str) + "\n")
        bad = summary["server_errors"] + summary["schema_violations"]
        bad += summary["cross_tenant_successes"]
        if bad:
            self.stderr.write(json.dumps(summary["examples"], indent=2, default=str)[:5000])
            raise SystemExit(1)
