"""What the class guard's reading of the memory_key as a label (``key_lines``) changes, and
what it costs: every key the repository's tests and docs use, each with short values and the
benign corpus entries of at most four words, read by ``check_content`` with the key's lines
and without them; then the 433 benign corpus entries under eight ordinary keys, timed both
ways, alternated (docs/security.md, "The key as a label").

    DJANGO_SETTINGS_MODULE=config.settings.test .venv/bin/python scripts/key_labels_check.py \
        [--rounds 5] [--json OUT]
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHORT_VALUES = (
    "Yes.", "No.", "Dark mode", "Vim", "Python 3.11", "Tuesdays", "EUR", "Berlin",
    "Concise answers", "2 spaces", "main branch", "UTC+1", "Weekly", "Pro", "5", "42",
    "enabled", "true", "Card", "PayPal", "Approved", "Done", "Paid annually", "Shipped fast",
    "Blocked", "Admin", "Owner", "Premium", "gold",
)  # fmt: skip
ORDINARY_KEYS = (
    "preferences.style", "account.timezone", "billing.currency", "project.deadline",
    "health.allergy", "order.history", "user.role", "repo.branching",
)  # fmt: skip
KEY_SPELLING = re.compile(r"""memory_key["']?\s*[:=]\s*["']([^"'\n]+)["']""")


def repository_keys() -> list[str]:
    keys = set()
    for folder in ("tests", "docs", "memory_core"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".json", ".jsonl"}:
                keys.update(KEY_SPELLING.findall(path.read_text(errors="replace")))
    return sorted(k.strip() for k in keys if k.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from memory_core.admission import policy
    from memory_core.admission.candidate import Candidate

    corpus = ROOT / "tests/security/corpus.jsonl"
    entries = [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]
    benign = [e["content"] for e in entries if e["label"] == "benign"]

    def candidate(content: str, key: str) -> Candidate:
        return Candidate(
            subject="u", memory_type="user_preference", content=content,
            source_type="user_input", memory_key=key, source_conversation_id="c",
            source_message_id="m",
        )  # fmt: skip

    with_lines = policy.key_lines

    def without_lines(candidate, *, value=True):
        return []

    def codes(item: Candidate, reader) -> list[str]:
        policy.key_lines = reader
        try:
            return policy.check_content(item)
        finally:
            policy.key_lines = with_lines

    keys = repository_keys()
    values = [*SHORT_VALUES, *(b for b in benign if len(b.split()) <= policy.KEY_LABEL_WORDS)]
    changed = []
    for key in keys:
        for value in values:
            item = candidate(value, key)
            new = set(codes(item, with_lines)) - set(codes(item, without_lines))
            if new:
                changed.append({"key": key, "content": value, "codes": sorted(new)})

    keyed = [
        candidate(text, ORDINARY_KEYS[i % len(ORDINARY_KEYS)]) for i, text in enumerate(benign)
    ]
    benign_changed = sum(codes(c, with_lines) != codes(c, without_lines) for c in keyed)
    timings: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(opts.rounds):
        for name, reader in (("with", with_lines), ("without", without_lines)):
            policy.key_lines = reader
            started = time.perf_counter()
            for item in keyed:
                policy.check_content(item)
            timings[name].append((time.perf_counter() - started) / len(keyed) * 1e6)
            policy.key_lines = with_lines

    report = {
        "keys": len(keys),
        "values_each": len(values),
        "pairs_changed": len(changed),
        "changed": changed,
        "changed_keys": sorted({c["key"] for c in changed}),
        "benign_under_ordinary_keys": {"entries": len(keyed), "changed": benign_changed},
        "check_content_us_best": {k: round(min(v), 1) for k, v in timings.items()},
        "check_content_us_rounds": {k: [round(x, 1) for x in v] for k, v in timings.items()},
    }
    print(json.dumps({k: v for k, v in report.items() if k != "changed"}, indent=2))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
