"""Where a batch write's time goes, part by part, under ``bench_ingest``'s batches.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/ingest_breakdown.py \
        [--memories 1000] [--base-memories 1000000 --base-tenants 10000] [--json OUT]

Runs ``manage.py bench_ingest`` in this process (one single write, ``--memories`` in batches
of 100, one probe) with the write service's parts wrapped in timers: admission of the batch
(``_admit_each``; inside it the content guards, ``check_content``, and the split-write rule's
check of each recent text, ``_split_between``), storing the rows (``_store``; inside it the
inserts as the vectors are ready, ``memory_insert_rows``, then their ``created`` events,
``memory_created_events``, the chunks the caller embeds itself, ``_Embedding._embed``, and
its wait for the thread's last chunk, ``_Embedding._join``),
recording decisions and events (``_record``), reading the subjects' recent texts and creating
new subjects. Only the caller's thread is timed. Prints each part's total milliseconds and
calls, beside the batch rate and the model alone's rate that the benchmark measured in the
same run (docs/performance-history.md, "Stop 26" and "Stop 34").
"""

import argparse
import functools
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import at_least  # noqa: E402

PARTS = {
    "memory_core.services.writes": (
        "_run",
        "_admit_each",
        "_store",
        "memory_insert_rows",
        "memory_created_events",
        "_record",
        "_recent_texts",
        "_ensure_subjects",
        "_heads",
        "_active_policy",
    ),
    "memory_core.admission.policy": ("check_content", "_split_between"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=at_least(100), default=1000)
    parser.add_argument("--base-memories", type=at_least(0), default=0)
    parser.add_argument("--base-tenants", type=at_least(1), default=10000)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import importlib

    import django

    django.setup()
    from django.core.management import call_command

    from memory_core.services import writes

    totals: Counter = Counter()
    calls: Counter = Counter()

    caller = threading.current_thread()

    def timed(owner, name, label):
        original = getattr(owner, name)

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            if threading.current_thread() is not caller:  # the embedding thread's calls
                return original(*args, **kwargs)
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                totals[label] += time.perf_counter() - started
                calls[label] += 1

        setattr(owner, name, wrapper)

    for module_name, names in PARTS.items():
        module = importlib.import_module(module_name)
        for name in names:
            timed(module, name, name)
    timed(writes._Embedding, "_join", "_Embedding._join (the wait for the thread)")
    timed(writes._Embedding, "_embed", "_Embedding._embed (the caller's own chunks)")

    with tempfile.TemporaryDirectory() as folder:
        report_path = os.path.join(folder, "ingest.json")
        base = [
            "--base-memories",
            str(opts.base_memories),
            "--base-tenants",
            str(opts.base_tenants),
        ]
        args = ["--memories", str(opts.memories), "--single", "1", "--probes", "1"]
        call_command(
            "bench_ingest", *args, *(base if opts.base_memories else []), "--json", report_path
        )
        report = json.loads(Path(report_path).read_text())

    # Parts of the batches only: the single write and the probe add one call each.
    result = {
        "memories": opts.memories,
        "batch_memories_per_s": report["batch"]["memories_per_s"],
        "model_only_memories_per_s": report["model_only"]["memories_per_s"],
        "parts_ms": {label: round(total * 1000, 1) for label, total in totals.most_common()},
        "calls": dict(calls),
    }
    for label, total in totals.most_common():
        print(f"{label:30s} {total * 1000:9.1f} ms  {calls[label]:6d} calls")
    print(
        f"batch {result['batch_memories_per_s']} memories/s; "
        f"the model alone {result['model_only_memories_per_s']} texts/s"
    )
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
