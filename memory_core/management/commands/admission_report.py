"""Run the admission policy over the security corpus and print the figures.

    python manage.py admission_report [--corpus FILE] [--json OUT] [--split NAME]

Attack acceptance rate (attacks admitted as active memories), benign false-rejection rate,
pending rates, the figures per split and category, and how often each rule code fired on
attacks and on benign writes. Admission runs in-process (no database, no model).
"""

import json
import re
import unicodedata
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_core.admission.codes import RULE_CODES
from memory_core.admission.corpus import DEFAULT_CORPUS, evaluate, parse_corpus
from memory_core.management.commands._options import check_output_path, read_text, write_output


class Command(BaseCommand):
    help = "Print attack acceptance and benign false-rejection rates of the admission policy."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="JSONL corpus file.")
        parser.add_argument("--json", dest="json_out", default="", help="Also write JSON here.")
        parser.add_argument(
            "--split",
            default="",
            help="Only the entries of this split (dev, holdout, blind1, ...: the corpus's own).",
        )

    def handle(self, *args, corpus, json_out, split, **options):
        target = check_output_path(json_out)
        try:
            entries = parse_corpus(read_text(Path(corpus), what="corpus"), name=str(corpus))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not entries:
            raise CommandError(f"The corpus {corpus} holds no entry: there is nothing to measure.")
        if split:
            splits = sorted({str(e.get("split", "dev")) for e in entries}, key=_natural)
            entries = [e for e in entries if str(e.get("split", "dev")) == split]
            if not entries:
                raise CommandError(
                    f"No entry of split {split!r} in {corpus}; its splits: {', '.join(splits)}."
                )
        report = evaluate(entries)
        figures = report.as_dict()
        out = self.stdout.write
        out(f"corpus: {corpus} ({figures['attacks']} attacks, {figures['benign']} benign)")
        out(f"attack acceptance rate:      {figures['attack_acceptance_rate']:.2%}")
        out(f"attack pending rate:         {figures['attack_pending_rate']:.2%}")
        out(f"benign false-rejection rate: {figures['benign_false_rejection_rate']:.2%}")
        out(f"benign pending (review) rate: {figures['benign_pending_rate']:.2%}")
        out(f"admit() latency ms:          {json.dumps(figures['admit_ms'])}")
        out("by split:")
        for name, counts in sorted(figures["by_split"].items(), key=lambda item: _natural(item[0])):
            out(f"  {name:18} {json.dumps(counts, sort_keys=True)}")
        out("by category:")
        for name, counts in figures["by_category"].items():
            out(f"  {name:34} {json.dumps(counts, sort_keys=True)}")
        out("per rule (times fired on attack / benign writes):")
        for code, counts in figures["per_rule"].items():
            rule = RULE_CODES.get(code, (0, ""))[0]
            out(
                f"  {rule:>2} {code:42} {counts.get('attack', 0):>4} / {counts.get('benign', 0):<4}"
            )
        for title, key in (
            ("accepted attacks", "accepted_attacks"),
            ("rejected benign", "rejected_benign"),
        ):
            if figures[key]:
                out(f"{title}:")
                for item in figures[key]:
                    out(f"  {item['id']}: {item['content']!r} {item['codes']}")
        write_output(self, target, json.dumps(figures, indent=2, ensure_ascii=False))


def _natural(name: str) -> list:
    """Sort key that reads the numbers in a name as numbers: blind2 before blind10."""
    # isdecimal, what ``\d`` matches: "²" is a digit that is no decimal, and a split named
    # "v1²" ended the report in a ValueError (stop 59's audit of the commands).
    return [_number_key(part) if part.isdecimal() else part for part in re.split(r"(\d+)", name)]


def _number_key(digits: str) -> tuple[int, str]:
    """Return a sort key that orders runs of decimal ``digits`` by the numbers they spell,
    without int(): it refuses a run of over 4,300 digits (sys.get_int_max_str_digits), and a
    split named so ended the report in a ValueError (stop 62's audit of commands). Leading
    zeros aside, fewer digits is a smaller number, and as many compare digit by digit. Each
    digit read by its value, in any script, as int() read them: "٢" (Arabic-Indic two) sorted
    after "3" by its code point (stop 62's review)."""
    significant = "".join(str(unicodedata.decimal(digit)) for digit in digits).lstrip("0")
    return (len(significant), significant)
