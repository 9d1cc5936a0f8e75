"""Evaluate retrieval on a dataset file (../shared/eval/FORMAT.md): system vs baselines."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_core.benchmarks.setup import measure_as_production
from memory_core.evaluation.dataset import DatasetError
from memory_core.evaluation.harness import evaluate_dataset
from memory_core.management.commands._options import (
    check_output_path,
    read_json,
    strict_json,
    write_output,
)
from memory_core.rls import platform_command
from memory_core.selectors.health import evaluation_results_folder


class Command(BaseCommand):
    help = (
        "Load a retrieval dataset into fresh tenants, run every case through the pipeline, "
        "the vector top-k baseline and no-memory, and print the metrics as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="dataset JSON file")
        parser.add_argument("--json", dest="json_out", help="also write the result here")
        parser.add_argument(
            "--keep", action="store_true", help="keep the run's tenants (default: delete them)"
        )

    @platform_command
    def handle(self, *args, **options):
        measure_as_production()  # the latency it reports is a deployed process's
        path = Path(options["dataset"])
        json_out = options.get("json_out")
        if json_out and Path(json_out).resolve().parent == evaluation_results_folder().resolve():
            # The health page's folder, which it tells an operator to write to: made on first
            # use (a fresh install has none: its command failed there, stop 50's audit).
            evaluation_results_folder().mkdir(parents=True, exist_ok=True)
        target = check_output_path(json_out)
        data = read_json(path, what="dataset")
        try:
            result = evaluate_dataset(data, keep=options["keep"], log=self.stderr.write)
        except DatasetError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        text = strict_json(result)
        self.stdout.write(text)
        write_output(self, target, text + "\n")
