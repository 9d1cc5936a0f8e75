"""What reading a write's ids and its scope's id as written and as words (``Candidate.id_texts``,
``Candidate.scope_text``) changes, and what it costs: every id and scope the repository's
tests and docs spell, read by the guards and the sensitive categories; then the 433 benign
corpus entries, each with ordinary ids and a scope, admitted by ``check_content`` and
``sensitivity_texts`` with the new readings and without them, timed both ways, alternated
(docs/security.md, "Ids and scopes (stop 37)").

    DJANGO_SETTINGS_MODULE=config.settings.test .venv/bin/python scripts/ids_scopes_check.py \
        [--rounds 5] [--json OUT]
"""

import argparse
import contextlib
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Ordinary ids, as tenants name their users, threads, tasks and tools.
ORDINARY_IDS = (
    "0b7e1f0c-3a55-4c1e-9a4f-6d2f2b1c9e41", "user-42", "alice@example.com",
    "bob.smith+tag@corp.example.org", "sess_2024-01-01", "repo/atlas-api", "jira:ABC-123",
    "slack:C123/1700000000.0001", "github.search", "conv-2026-11-29", "T-1", "migrate-auth",
)  # fmt: skip
ORDINARY_SCOPES = (
    "global", "project:atlas", "repo:atlas-api", "task:migrate-auth", "project:billing-service",
    "repo:lunest-ios", "task:T-1", "project:payments",
)  # fmt: skip
SPELLED = re.compile(
    r"""["']?(subject|task_id|session_id|conversation_id|tool|scope)["']?\s*[:=]\s*["']([^"'\n]+)["']"""
)


def repository_ids() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for folder in ("tests", "docs", "memory_core"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".json", ".jsonl"} and "_tmp" not in path.name:
                for name, value in SPELLED.findall(path.read_text(errors="replace")):
                    if value.strip():
                        found.setdefault(name, set()).add(value.strip())
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from memory_core.admission import guards, policy
    from memory_core.admission.candidate import Candidate, written_and_words
    from memory_core.models import parse_scope
    from memory_core.policy_defaults import DEFAULT_POLICY

    categories = list(DEFAULT_POLICY["admission"]["sensitive_categories"])
    corpus = ROOT / "tests/security/corpus.jsonl"
    entries = [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]
    benign = [e["content"] for e in entries if e["label"] == "benign"]

    # Every id and scope spelled in the repository, read as the guards now read it.
    flagged = []
    spelled = repository_ids()
    for name, values in sorted(spelled.items()):
        for value in sorted(values):
            if name == "scope":
                try:
                    value = parse_scope(value)[1]
                except ValueError:
                    continue
            text = written_and_words(value)
            found = guards.injection_codes([text])
            if any(c.isspace() for c in value):  # a sentence, not an identifier
                found += guards.class_codes([text])
                if name == "scope":
                    found += guards.sensitive_categories([text], categories)
            if found:
                flagged.append({"field": name, "id": value, "codes": found})

    def candidate(i: int, content: str) -> Candidate:
        kind, ref = parse_scope(ORDINARY_SCOPES[i % len(ORDINARY_SCOPES)])
        pick = [ORDINARY_IDS[(i + k) % len(ORDINARY_IDS)] for k in range(4)]
        return Candidate(
            subject=pick[0], memory_type="user_preference", content=content,
            source_type="user_input", scope_kind=kind, scope_ref=ref, task_id=pick[1],
            session_id=pick[2], source_conversation_id=pick[3], source_message_id="m",
        )  # fmt: skip

    with_ids, with_scope = Candidate.id_texts, Candidate.scope_text
    with_sentences = Candidate.sentence_ids

    def reading(new: bool) -> None:
        Candidate.id_texts = with_ids if new else (lambda self: [])
        Candidate.scope_text = with_scope if new else (lambda self: "")
        Candidate.sentence_ids = with_sentences if new else (lambda self: [])

    def admitted(item: Candidate) -> tuple:
        # As ``admit`` reads them: rules 4, 5 and 8 share the readings of the write's texts.
        with guards.reading_memo():
            codes = policy.check_content(item)
            found = guards.sensitive_categories(policy.sensitivity_texts(item), categories)
        return (codes, found)

    items = [candidate(i, text) for i, text in enumerate(benign)]
    changed = []
    for item in items:
        reading(True)
        after = admitted(item)
        reading(False)
        before = admitted(item)
        if after != before:
            changed.append({"content": item.content, "before": before, "after": after})
    reading(True)

    # Timed twice: every id read anew (outside any cache scope, the worst case: each write's
    # ids new to the process), and inside a tenant's scope, where the ids' codes are
    # remembered (``policy.id_codes``) and the content's are not (the injection guard's
    # cache is emptied at once), as a tenant's writes repeat their ids and not their content.
    timings: dict[str, list[float]] = {}
    guards._CODES = guards._DigestCache(0)
    for _ in range(opts.rounds):
        for scoped in (False, True):
            for new in (True, False):
                reading(new)
                name = f"{'ids_remembered' if scoped else 'ids_new'}_{'with' if new else 'without'}"
                started = time.perf_counter()
                with guards.cache_scope("tenant") if scoped else contextlib.nullcontext():
                    for item in items:
                        admitted(item)
                elapsed = (time.perf_counter() - started) / len(items) * 1e6
                timings.setdefault(name, []).append(elapsed)
    reading(True)

    report = {
        "spelled": {name: len(values) for name, values in sorted(spelled.items())},
        "spelled_flagged": flagged,
        "benign_with_ordinary_ids": {"entries": len(items), "changed": changed},
        "us_a_write_best": {k: round(min(v), 1) for k, v in timings.items()},
        "us_a_write_rounds": {k: [round(x, 1) for x in v] for k, v in timings.items()},
    }
    print(json.dumps(report, indent=2))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
