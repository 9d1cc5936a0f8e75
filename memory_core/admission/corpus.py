"""Run the admission policy over a labelled corpus of writes and compute the figures.

The corpus (``tests/security/corpus.jsonl``) holds one write per line: ``label`` attack or
benign, ``category``, ``split`` dev or holdout, ``content``, and optionally ``value``,
``memory_key``, ``memory_type``, ``source_type`` and ``previous`` (earlier writes of the same
agent and subject, for instructions split across writes). Admission runs in-process: pure, no
database.
"""

from __future__ import annotations

import io
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from memory_core.admission.candidate import Candidate, FieldErrors, bad_text, check_value
from memory_core.admission.policy import ACCEPTED, REJECTED, AdmissionContext, Grant, admit
from memory_core.json_types import json_loads
from memory_core.models import MemoryType, Sensitivity, SourceType
from memory_core.policy_defaults import DEFAULT_POLICY

DEFAULT_CORPUS = Path(settings.BASE_DIR) / "tests" / "security" / "corpus.jsonl"
# The corpus writer: an agent allowed every type up to "sensitive" (the default grant).
CORPUS_GRANT = Grant(
    write_types=frozenset(MemoryType.values), max_sensitivity=Sensitivity.SENSITIVE
)


def load_corpus(path: Path | str = DEFAULT_CORPUS) -> list[dict]:
    """Return the corpus entries; raise ValueError naming the line of a malformed one."""
    return parse_corpus(Path(path).read_text(encoding="utf-8"), name=str(path))


def parse_corpus(text: str, *, name: str) -> list[dict]:
    """Return the entries of a corpus's JSONL ``text``; raise ValueError naming the line
    (``name:number``) of a malformed one.

    A line is read as the API reads a write's body (``as_api``): an object naming a key twice,
    which every write is refused for (400 ``malformed_json``), had its last value read and
    decided, a value ``check_value`` passed once merged, or a content not the text a reader
    of the corpus sees (stop 63's review)."""
    entries = []
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            entry = json_loads(line, as_api=True)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}:{number}: {exc}") from exc
        if not isinstance(entry, dict):
            raise ValueError(f"{name}:{number}: an entry is a JSON object, one per line")
        if entry.get("label") not in ("attack", "benign") or not entry.get("content"):
            raise ValueError(f"{name}:{number}: needs label attack|benign and content")
        problem = _entry_problem(entry)
        if problem:
            raise ValueError(f"{name}:{number}: {problem}")
        entries.append(entry)
    return entries


def _lines(text: str) -> list[str]:
    """Return the lines of ``text`` as a text-mode read splits them (\\n, \\r\\n, \\r), as
    ``import_memories`` reads its file: not str.splitlines, which also splits at U+2028,
    U+2029, U+0085 and \\x1c-\\x1e, characters JSON allows raw inside a string (a valid
    entry was refused as an unterminated string)."""
    return io.StringIO(text, newline=None).readlines()


# The fields and what each must be: admission reads the texts as a write's, and the report
# groups by the names (a number is a name too: "split": 7).
_TEXT_FIELDS = ("content", "memory_key")
_NAME_FIELDS = ("id", "category", "split")
_CHOICES = {"memory_type": MemoryType.values, "source_type": SourceType.values}


def _entry_problem(entry: dict) -> str:
    """Return what is wrong with an entry's fields, or ""."""
    for key in _TEXT_FIELDS:
        if key in entry and not isinstance(entry[key], str):
            return f"{key} must be a string"
    for key in _NAME_FIELDS:
        value = entry.get(key, "")
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            return f"{key} must be a string or a number"
    for key, choices in _CHOICES.items():
        if key in entry and entry[key] not in choices:
            return f"{key} must be one of {', '.join(choices)}"
    previous = entry.get("previous")
    if previous is not None and not (
        isinstance(previous, list) and all(isinstance(text, str) for text in previous)
    ):
        return "previous must be a list of strings (the earlier writes)"
    # Text no report can be written with (a lone surrogate: the --json file failed with a
    # traceback after the figures were printed, stop 54's audit of the harness), or a NUL.
    texts = [(key, entry.get(key)) for key in (*_TEXT_FIELDS, *_NAME_FIELDS)]
    texts += [("previous", text) for text in previous or ()]
    for key, text in texts:
        if isinstance(text, str) and bad_text(text):
            return f"{key} holds a character that is not text ({bad_text(text)})"
    return _value_problem(entry.get("value"))


def _value_problem(value) -> str:
    """Return the first error the write API answers for ``value`` (``check_value``), or "".
    Admission only ever sees a value the API took: a lone surrogate in it ended the report
    in a UnicodeEncodeError traceback (rule 3 measures the value's bytes), and a NUL or a
    NaN, which every write is refused for, was decided and counted (stop 63's audit of
    exports)."""
    if value is None:  # left out or null, as a write may send it
        return ""
    errors = FieldErrors()
    check_value(value, errors)
    found = errors.by_field.get("value")
    return f"value: {found[0]['message']} ({found[0]['code']})" if found else ""


def _candidate(entry: dict) -> Candidate:
    """Return the write of ``entry``, its id read as text (a number is a name too, but the
    candidate's source_message_id is a string: admission iterated an int and died)."""
    return Candidate(
        subject="corpus-subject",
        memory_type=entry.get("memory_type", MemoryType.USER_PREFERENCE),
        content=entry["content"],
        value=entry.get("value"),
        memory_key=entry.get("memory_key", ""),
        source_type=entry.get("source_type", SourceType.USER_INPUT),
        source_conversation_id="corpus",
        source_message_id=str(entry.get("id", "")),
    )


@dataclass
class CorpusReport:
    """Figures of one corpus run."""

    total: Counter = field(default_factory=Counter)  # by label
    outcomes: dict = field(default_factory=lambda: defaultdict(Counter))  # label -> outcome
    by_split: dict = field(default_factory=lambda: defaultdict(Counter))  # (label, split)
    by_category: dict = field(default_factory=lambda: defaultdict(Counter))
    rules: dict = field(default_factory=lambda: defaultdict(Counter))  # code -> label count
    latencies_ms: list = field(default_factory=list)
    accepted_attacks: list = field(default_factory=list)
    rejected_benign: list = field(default_factory=list)

    def rate(self, label: str, outcome: str, split: str | None = None) -> float:
        if split:
            total = self.by_split[(label, split)]["total"]
            return self.by_split[(label, split)][outcome] / total if total else 0.0
        return self.outcomes[label][outcome] / self.total[label] if self.total[label] else 0.0

    @property
    def attack_acceptance(self) -> float:
        return self.rate("attack", ACCEPTED)

    @property
    def benign_false_rejection(self) -> float:
        return self.rate("benign", REJECTED)

    def latency_summary(self) -> dict:
        """Return p50, p95 and max of one admit() call, in milliseconds."""
        ordered = sorted(self.latencies_ms)
        if not ordered:
            return {}

        def pick(share: float) -> float:
            return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)

        return {"p50": pick(0.5), "p95": pick(0.95), "max": round(ordered[-1], 2)}

    def as_dict(self) -> dict:
        return {
            "attacks": self.total["attack"],
            "benign": self.total["benign"],
            "attack_acceptance_rate": round(self.attack_acceptance, 4),
            "attack_pending_rate": round(self.rate("attack", "pending_approval"), 4),
            "benign_false_rejection_rate": round(self.benign_false_rejection, 4),
            "benign_pending_rate": round(self.rate("benign", "pending_approval"), 4),
            "admit_ms": self.latency_summary(),
            "by_split": {
                f"{label}/{split}": dict(counts) for (label, split), counts in self.by_split.items()
            },
            "by_category": {cat: dict(counts) for cat, counts in sorted(self.by_category.items())},
            "per_rule": {code: dict(counts) for code, counts in sorted(self.rules.items())},
            "accepted_attacks": self.accepted_attacks,
            "rejected_benign": self.rejected_benign,
        }


def evaluate(entries: list[dict], *, policy: dict | None = None) -> CorpusReport:
    """Run admission over ``entries`` and return the figures."""
    report = CorpusReport()
    now = timezone.now()
    for entry in entries:
        # Keyed by the split's text, as --split compares it: 7 and "7" are one split, and
        # two keys turned into the one "benign/7" of as_dict, the later overwriting.
        label, split = entry["label"], str(entry.get("split", "dev"))
        context = AdmissionContext(
            now=now,
            policy=policy or DEFAULT_POLICY,
            policy_version=1,
            recent_texts=list(entry.get("previous") or []),
        )
        started = time.perf_counter()
        decision = admit(_candidate(entry), CORPUS_GRANT, context)
        report.latencies_ms.append((time.perf_counter() - started) * 1000)
        report.total[label] += 1
        report.outcomes[label][decision.outcome] += 1
        report.by_split[(label, split)]["total"] += 1
        report.by_split[(label, split)][decision.outcome] += 1
        report.by_category[f"{label}:{entry.get('category', '')}"][decision.outcome] += 1
        for code in decision.rule_codes:
            report.rules[code][label] += 1
        summary = {
            "id": entry.get("id"),
            "content": entry["content"][:160],
            "codes": decision.rule_codes,
        }
        if label == "attack" and decision.outcome == ACCEPTED:
            report.accepted_attacks.append(summary)
        if label == "benign" and decision.outcome == REJECTED:
            report.rejected_benign.append(summary)
    return report
