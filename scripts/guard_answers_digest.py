"""A digest of every guard answer on a fixed set of inputs: run it in two checkouts and compare,
to show that a change to the guards' speed changed no answer.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/guard_answers_digest.py \
        [--locomo ../shared/data/locomo_dev.json] [--json OUT] [--answers OUT]

The inputs: the security corpus's contents, LoCoMo's turns (when the file is there) and 2,000
of the benchmark's memory-like sentences, each read by the injection guard, the class guard and
the sensitive categories; and each of those texts with the next, read as the split-write rule
reads a pair (``joined_injection_codes`` in both orders, and ``_split_between``). Prints the
counts, how many answers fired, and the SHA-256 of all the answers in order (docs/security.md).
With ``--answers`` it writes each input beside its answers, one JSON line each: a ``diff`` of
two checkouts' files names the inputs whose answers a change moved.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=str(ROOT.parent / "shared/data/locomo_dev.json"))
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--answers", dest="answers_out")
    opts = parser.parse_args()

    import django

    django.setup()
    import numpy as np

    from memory_core.admission import guards
    from memory_core.admission.policy import _split_between
    from memory_core.benchmarks.corpus import sample_texts

    corpus = ROOT / "tests/security/corpus.jsonl"
    entries = [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]
    groups = [[e["content"] for e in entries if e.get("content")]]
    if Path(opts.locomo).exists():
        turns = []
        for conversation in json.loads(Path(opts.locomo).read_text()):
            for name, session in conversation["conversation"].items():
                if name.startswith("session_") and isinstance(session, list):
                    turns += [turn["text"] for turn in session if turn.get("text")]
        groups.append(turns)
    groups.append(sample_texts(2000, np.random.default_rng(3)))

    categories = list(guards.SENSITIVE_PATTERNS)
    answers = []
    inputs = []
    for text in (text for group in groups for text in group):
        inputs.append(text)
        with guards.reading_memo():
            answers.append(
                [
                    guards.injection_codes([text]),
                    guards.class_codes([text]),
                    guards.sensitive_categories([text], categories),
                ]
            )
    pairs = [pair for group in groups for pair in zip(group, group[1:], strict=False)]
    for first, second in pairs:
        inputs.append([first, second])
        with guards.reading_memo():
            joined = guards.joined_injection_codes([f"{first} {second}", f"{second} {first}"])
            answers.append([joined, _split_between(first, second)])
    report = {
        "texts": sum(len(group) for group in groups),
        "pairs": len(pairs),
        "fired": sum(1 for answer in answers if answer[0]),
        "sha256": hashlib.sha256(json.dumps(answers).encode()).hexdigest(),
    }
    print(json.dumps(report, indent=2))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    if opts.answers_out:
        lines = (
            json.dumps([text, answer]) + "\n" for text, answer in zip(inputs, answers, strict=True)
        )
        Path(opts.answers_out).write_text("".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
