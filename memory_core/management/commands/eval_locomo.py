"""Evidence recall@k on a LoCoMo-format file: the pipeline beside dense and full-text."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_core.benchmarks.setup import measure_as_production
from memory_core.evaluation.dataset import DatasetError
from memory_core.evaluation.locomo import MAX_K, evaluate_locomo
from memory_core.management.commands._options import (
    check_output_path,
    read_json,
    strict_json,
    write_output,
)
from memory_core.rls import platform_command


class Command(BaseCommand):
    help = (
        "Load each conversation of a LoCoMo-format file as one subject's episodes (one per "
        "turn), ask every question with evidence through the retrieval pipeline and print "
        "evidence recall@k overall (categories 1-4) and per category, beside dense-cosine and "
        "full-text-only baselines."
    )

    def add_arguments(self, parser):
        parser.add_argument("--data", required=True, help="LoCoMo-format JSON file")
        parser.add_argument("--k", default="5,10,25", help="comma-separated k values")
        parser.add_argument("--json", dest="json_out", help="also write the result here")
        parser.add_argument(
            "--context-turns",
            type=int,
            default=1,
            help="earlier turns of the same session embedded with each turn (default 1)",
        )
        parser.add_argument("--limit", type=int, help="ask at most this many per conversation")
        parser.add_argument("--keep", action="store_true", help="keep the run's tenant")

    @platform_command
    def handle(self, *args, **options):
        measure_as_production()  # the latency it reports is a deployed process's
        path = Path(options["data"])
        ks = _parse_ks(options["k"])
        turns = options["context_turns"]
        if turns < 0:
            raise CommandError(f"--context-turns must be 0 or more, not {turns}.")
        if options.get("limit") is not None and options["limit"] < 1:
            raise CommandError(f"--limit must be at least 1, not {options['limit']}.")
        target = check_output_path(options.get("json_out"))
        data = read_json(path, what="LoCoMo")
        try:
            result = evaluate_locomo(
                data,
                ks=ks,
                context_turns=options["context_turns"],
                keep=options["keep"],
                limit=options.get("limit"),
                log=lambda message: self.stderr.write(message),
            )
        except DatasetError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        text = strict_json(result)
        self.stdout.write(text)
        write_output(self, target, text + "\n")


def _parse_ks(text: str) -> list[int]:
    """Return the k values of ``--k``, each from 1 to MAX_K: the largest is the retrieval
    budget's max_items, and one beyond what the API allows (99999999999999999999) ran the
    whole load and embedding, then died in a DataError traceback (bigint out of range)."""
    try:
        ks = [int(k) for k in str(text).split(",") if k.strip()]
    except ValueError:
        ks = []
    if not ks or min(ks) < 1:
        raise CommandError(f"--k needs positive integers, e.g. 5,10,25, not {text!r}")
    if max(ks) > MAX_K:
        raise CommandError(
            f"--k must be at most {MAX_K} (the retrieval API's max_items), not {max(ks)}."
        )
    return ks
