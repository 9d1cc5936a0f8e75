"""What admission's split-write rule costs a pair, and how much of the guards' work the literal
prefilter settles without a regex run.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/split_rule_cost.py \
        [--texts 1200] [--rounds 5] [--json OUT]

Takes ``--texts`` of the benchmark's memory-like sentences (``sample_texts``, seed 12) and
joins each with the five before it, as the split-write rule joins a write with the agent's
five newest writes about the subject: the injection guard reads each pair in both orders
(``guards.joined_injection_codes``). Prints the best and median milliseconds a pair over
``--rounds`` rounds, and the share of (rule, reading) pairs of the single texts that the
prefilter settles, with each rule's first requirement alone and with all of them
(``prefilter.LiteralIndex``). Run it in a worktree of another commit to compare the two
(docs/performance.md, section 16).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import at_least  # noqa: E402

WINDOW = 5  # the default policy's split_window_writes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=at_least(WINDOW + 1), default=1200)
    parser.add_argument("--rounds", type=at_least(1), default=5)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    import numpy as np

    from memory_core.admission import guards
    from memory_core.admission.normalize import readings
    from memory_core.admission.prefilter import Reading, may_match, required_literals
    from memory_core.benchmarks.corpus import sample_texts

    texts = sample_texts(opts.texts, np.random.default_rng(12))
    pairs = [(texts[i - j], texts[i]) for i in range(WINDOW, len(texts)) for j in range(1, 6)]
    guards.build_literal_indexes()
    per_pair = []
    for _ in range(opts.rounds):
        started = time.perf_counter()
        for previous, content in pairs:
            with guards.reading_memo():
                guards.joined_injection_codes([f"{previous} {content}", f"{content} {previous}"])
        per_pair.append((time.perf_counter() - started) * 1000 / len(pairs))

    report = {
        "pairs": len(pairs),
        "rounds": opts.rounds,
        "ms_per_pair": {
            "best": round(min(per_pair), 4),
            "median": round(statistics.median(per_pair), 4),
        },
    }
    requirements = [
        required_literals(rule.pattern) for rule in guards.INJECTION_RULES + guards.CLASS_RULES
    ]
    if all(r is None or isinstance(r[0][0], tuple) for r in requirements):  # since stop 34
        single = [Reading(r) for text in texts for r in readings(text)]
        first_only = [r and (r[0][:1], *r[1:]) for r in requirements]
        total = len(requirements) * len(single)

        def runs(reqs) -> int:
            return sum(may_match(r, reading) for r in reqs for reading in single)

        report["settled_without_a_regex"] = {
            "rule_reading_pairs": total,
            "first_requirement_only": round(1 - runs(first_only) / total, 4),
            "every_requirement": round(1 - runs(requirements) / total, 4),
        }
    print(json.dumps(report, indent=2))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
