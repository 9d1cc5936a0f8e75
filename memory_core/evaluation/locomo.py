"""LoCoMo-format evidence recall: the pipeline against dense and full-text baselines.

Loading (trusted import path, like the other evaluation loaders: no admission, nothing
refused; the report also counts the turns admission's content guards would have refused):
every conversation becomes one subject of a fresh tenant; every turn becomes one ``episode``
memory whose content is ``[session date] speaker: text`` (plus ``[shares a photo:
caption]`` when the turn shared an image), with provenance ``source_conversation_id =
locomo:<sample>:session_<n>``, ``source_message_id = <dia_id>`` and ``value = {dia_id, session,
session_date}``. The stored embedding is of the turn together with the turn before it in the
same session (``context_turns``), so a short reply ("Yes, last Friday!") carries what it
answers. All of it comes from the conversation itself; answers, evidence, observations and
summaries are never read at load time.

Asking: each question with evidence goes through ``retrieve`` (the real pipeline, default
intent, so hybrid) with a budget of ``max(k)`` items and a token budget that does not bind;
recall@k is the share of the question's evidence dia_ids among the first k items by score.
The budget walk is greedy, so the first k of a ``max(k)`` answer are exactly the answer for
k. Baselines on the same rows in the same run: ``baseline_dense`` ranks the turns' plain
``speaker: text`` embeddings by cosine (same model); ``baseline_fulltext`` is the pipeline's
full-text store alone.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from django.db import transaction
from django.utils import timezone

from memory_core.admission.candidate import HARD_MAX_ID_CHARS, bad_text
from memory_core.clock import database_now
from memory_core.deletion.stores import evaluation_run_reached, evaluation_runs_remove
from memory_core.embeddings import get_embedder
from memory_core.json_types import json_type
from memory_core.models import Agent, Memory, MemoryEvent, Subject, Tenant
from memory_core.principals import AgentPrincipal
from memory_core.retrieval.candidates import fetch_candidates
from memory_core.retrieval.pipeline import build_context, retrieve
from memory_core.retrieval.policy import RetrievalPolicy
from memory_core.retrieval.types import Budget, RetrievalMode, RetrievalPlan, RetrievalRequest
from memory_core.services.memories import MemoryDraft, build_memory
from memory_core.services.policy import policy_ensure

from .dataset import DatasetError
from .harness import BUDGET_MOST, RUN_REMOVED

# One whitespace run on either side of the optional colon after the "D", not two around it:
# "D\s*:?\s*" tried a "D" and n spaces before no digit at every split of the run, O(n^2)
# steps (40,000 spaces took 15-20 s; stop 63's audit of exports). The same ids match.
_DIA = re.compile(r"D\s*(?::\s*)?(\d+)\s*:\s*(\d+)")
CATEGORIES = ("1", "2", "3", "4", "5")
# The categories of "cat1_4": a set, compared whole (a substring test of "1234" also took
# a question with no category, "", and one of "12" or "34").
CORE_CATEGORIES = frozenset({"1", "2", "3", "4"})
# The largest k: it becomes the budget's max_items, bounded as the retrieval API bounds it.
MAX_K = BUDGET_MOST["max_items"]


@dataclass
class Turn:
    dia_id: str
    session: int
    date: str
    speaker: str
    text: str
    caption: str = ""

    @property
    def line(self) -> str:
        photo = f" [shares a photo: {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{photo}"

    @property
    def content(self) -> str:
        return f"[{self.date}] {self.line}"


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[dict]


@dataclass
class LoadedLocomo:
    tenant: Tenant
    agent: Agent
    subjects: dict[str, Subject] = field(default_factory=dict)
    dia_by_id: dict[str, str] = field(default_factory=dict)
    stored: int = 0
    refused: int = 0
    guard_flags: list[str] = field(default_factory=list)


def normalize_evidence(values, *, what: str = "evidence id") -> list[str]:
    """Return the well-formed dia_ids of an evidence list ('D1:3', 'D:11:26', 'D8:6; D9:17');
    DatasetError naming the value as ``what`` for one holding a number too long to read."""
    found = []
    for value in values or []:
        text = str(value)
        for match in _DIA.finditer(text):
            dialogue = _number(match.group(1), text, what)
            turn = _number(match.group(2), text, what)
            found.append(f"D{dialogue}:{turn}")
    return sorted(set(found))


def _number(digits: str, text: str, what: str) -> int:
    """Return the number a run of ``digits`` in ``text`` spells; DatasetError naming ``text``
    as ``what`` for a run of more digits than an id holds (HARD_MAX_ID_CHARS): int()
    refuses one of over 4,300 (sys.get_int_max_str_digits), and a dia_id, an evidence id or
    a session key holding one ended eval_locomo in a ValueError traceback (stop 62's audit of
    commands)."""
    if len(digits) > HARD_MAX_ID_CHARS:
        raise DatasetError(
            f"{what} {text[:40]!r}... holds a number of {len(digits)} digits "
            f"(at most {HARD_MAX_ID_CHARS})"
        )
    return int(digits)


def _checked(value: str, what: str, where: str, max_chars: int | None = None) -> str:
    """Return ``value``; DatasetError naming ``what`` and ``where`` for a NUL or a lone
    surrogate (no column or JSON value stores them) or a text over ``max_chars``."""
    if bad_text(value):
        raise DatasetError(f"{where}: {what} must be valid Unicode without NUL characters")
    return _at_most(value, what, where, max_chars)


def _at_most(value: str, what: str, where: str, max_chars: int | None) -> str:
    """Return ``value``; DatasetError naming ``what`` and ``where`` for a text over
    ``max_chars`` (None: no bound)."""
    if max_chars is not None and len(value) > max_chars:
        raise DatasetError(f"{where}: {what} is at most {max_chars} characters, not {len(value)}")
    return value


def _text_of(value, what: str, where: str, *, numbers: bool = False) -> str:
    """Return ``value`` as text: a string ("" for none or null), or with ``numbers`` a
    number's text; DatasetError naming ``what`` and ``where`` for anything else. A list or an
    object was its Python text: the subject "['s']", the content "{'a': 1}" (stop 54's audit
    of the harness)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise DatasetError(f"{where}: {what} must be a string, not {json_type(value)}")


def parse(data) -> list[Conversation]:
    """Return the conversations of a LoCoMo-format list; raise DatasetError when malformed.

    What the tables could not hold is named here, before anything is stored: a sample_id
    used twice (one subject each), one or a dia_id over 200 characters (the subject's and
    the source ids' columns, where ``locomo:<sample_id>:session_<n>`` must fit too), text
    with a NUL or a lone surrogate, and a number of more digits than those columns hold in a
    session key, a dia_id or an evidence id. So is what recall could only misread: a dia_id
    two turns of a conversation share, as read (``D:1:1`` is ``D1:1``).
    """
    if not isinstance(data, list):
        raise DatasetError("a LoCoMo file is a JSON list of conversations")
    conversations = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("conversation"), dict):
            raise DatasetError(f"[{index}]: needs a 'conversation' object")
        conv = entry["conversation"]
        sample_id = _text_of(entry.get("sample_id"), "sample_id", f"[{index}]", numbers=True)
        sample_id = sample_id or f"conv-{index}"
        _checked(sample_id, "sample_id", f"[{index}]", HARD_MAX_ID_CHARS)
        if (first := seen.setdefault(sample_id, index)) != index:
            raise DatasetError(
                f"[{index}]: sample_id {sample_id!r} is also conversation [{first}]'s "
                "(each conversation is one subject)"
            )
        where = f"[{index}] ({sample_id!r})"
        # By number, each read under its own key: "session_01" is session 1 (looking it up
        # again as "session_1" was a KeyError).
        sessions = sorted(
            (_number(m.group(1), key, f"{where}: session key"), key)
            for key in conv
            if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conv[key], list)
        )
        for (n, key), (m, other) in pairwise(sessions):
            if n == m:
                raise DatasetError(f"{where}: {key!r} and {other!r} are both session {n}")
        turns = []
        # Each dia_id (as read: "D:1:1" is "D1:1") names one turn: recall reads every ranked
        # item back to its turn's dia_id, so a second turn under one scored the first's
        # evidence as found (stop 63's audit of exports).
        turn_of: dict[str, str] = {}
        for n, key in sessions:
            _checked(
                _conversation_id(sample_id, n),
                f"{key}'s source conversation id 'locomo:<sample_id>:session_{n}'",
                where,
                HARD_MAX_ID_CHARS,
            )
            date_key = f"{key}_date_time"
            date = _checked(_text_of(conv.get(date_key), date_key, where), date_key, where)
            for position, turn in enumerate(conv[key]):
                if not isinstance(turn, dict) or not turn.get("dia_id"):
                    continue
                written = str(turn["dia_id"])
                at = f"{where}: {key}, turn {written[:40]!r}"
                # Measured before it is read: a long one is refused at once, whatever it holds.
                _at_most(written, "dia_id", at, HARD_MAX_ID_CHARS)
                dia = normalize_evidence([written], what=f"{where}: {key}, dia_id")
                dia_id = dia[0] if dia else written
                named = f"{key}[{position}] ({written[:40]!r})"
                if (first := turn_of.setdefault(dia_id, named)) != named:
                    raise DatasetError(
                        f"{where}: {first} and {named} are both dia_id {dia_id!r} (evidence "
                        "names a turn by its dia_id: each turn needs its own)"
                    )
                turns.append(
                    Turn(
                        dia_id=_checked(dia_id, "dia_id", at, HARD_MAX_ID_CHARS),
                        session=n,
                        date=date,
                        speaker=_checked(
                            _text_of(turn.get("speaker"), "speaker", at), "speaker", at
                        ),
                        text=_checked(_text_of(turn.get("text"), "text", at), "text", at),
                        caption=_checked(
                            _text_of(turn.get("blip_caption"), "blip_caption", at),
                            "blip_caption",
                            at,
                        ),
                    )
                )
        if not isinstance(qa := entry.get("qa") or [], list):
            raise DatasetError(f"{where}: 'qa' must be a list of questions")
        questions = []
        for number, question in enumerate(qa):
            if isinstance(question, dict) and question.get("question"):
                asked = f"{where}: qa[{number}]"
                _checked(_text_of(question["question"], "question", asked), "question", asked)
                evidence = question.get("evidence")
                if evidence is not None and not isinstance(evidence, list):
                    # An int or a bool failed as "object is not iterable", after the turns
                    # were stored (stop 47's audit).
                    raise DatasetError(
                        f"{where}: qa[{number}]: 'evidence' must be a list of dia_ids "
                        f"(got {type(evidence).__name__})"
                    )
                normalize_evidence(evidence, what=f"{asked}: evidence id")
                questions.append(question)
        conversations.append(Conversation(sample_id, turns, questions))
    return conversations


def _conversation_id(sample_id: str, session: int) -> str:
    """Return the source conversation id of a turn of ``session`` (its memory's provenance)."""
    return f"locomo:{sample_id}:session_{session}"


def _embedding_texts(turns: list[Turn], context_turns: int) -> list[str]:
    texts = []
    for i, turn in enumerate(turns):
        before = [t.line for t in turns[max(0, i - context_turns) : i] if t.session == turn.session]
        texts.append("\n".join([*before, turn.content]))
    return texts


def _guard_codes(conv: Conversation, turn: Turn) -> list[str]:
    """Return the codes admission's content guards (rules 4-5) give this turn (not enforced)."""
    from memory_core.admission import check_content, parse_candidate
    from memory_core.exceptions import ValidationFailed

    data = {
        "subject": conv.sample_id,
        "memory_type": "episode",
        "content": turn.content,
        "scope": "global",
        "source": {"type": "user_input", "conversation_id": conv.sample_id,
                   "message_id": turn.dia_id},
    }  # fmt: skip
    try:
        return check_content(parse_candidate(data))
    except ValidationFailed as exc:
        return [exc.code]


@transaction.atomic
def load(conversations: list[Conversation], *, prefix: str, context_turns: int = 1) -> LoadedLocomo:
    """Store every turn as an episode of its conversation's subject (trusted import path)."""
    # Marked as a run's: a deletion of words it copies removes it (deletion.stores).
    tenant = Tenant.objects.create(
        slug=f"{prefix}locomo"[:64], name="LoCoMo evaluation", evaluation_run=True
    )
    policy_ensure(tenant=tenant)
    agent = Agent.objects.create(tenant=tenant, name="locomo-reader")
    loaded = LoadedLocomo(tenant=tenant, agent=agent)
    embedder = get_embedder()
    rows: list[Memory] = []
    for conv in conversations:
        subject = Subject.objects.create(tenant=tenant, external_id=conv.sample_id)
        loaded.subjects[conv.sample_id] = subject
        vectors = embedder.embed(_embedding_texts(conv.turns, context_turns))
        loaded.guard_flags += [
            f"{conv.sample_id}:{turn.dia_id}" for turn in conv.turns if _guard_codes(conv, turn)
        ]
        for turn, vector in zip(conv.turns, vectors, strict=True):
            memory = build_memory(
                MemoryDraft(
                    subject=subject,
                    memory_type="episode",
                    content=turn.content,
                    authority="explicit_user",
                    source_type="user_input",
                    source_conversation_id=_conversation_id(conv.sample_id, turn.session),
                    source_message_id=turn.dia_id,
                    value={"dia_id": turn.dia_id, "session": turn.session, "date": turn.date},
                ),
                policy_version=1,
            )
            memory.id = uuid.uuid4()
            memory.embedding = vector
            memory.embedding_model = embedder.model_name
            rows.append(memory)
            loaded.dia_by_id[str(memory.id)] = turn.dia_id
    Memory.objects.bulk_create(rows, batch_size=500)
    MemoryEvent.objects.bulk_create(
        [
            MemoryEvent(
                tenant_id=tenant.id,
                memory_id=m.id,
                action=MemoryEvent.Action.CREATED,
                actor_type=MemoryEvent.ActorType.SYSTEM,
                actor_id="eval_locomo",
                reason_code="import",
            )
            for m in rows
        ],
        batch_size=1000,
    )
    loaded.stored = len(rows)
    return loaded


def _fulltext_top(loaded: LoadedLocomo, subject: Subject, question: str, k: int) -> list[str]:
    """Return the dia_ids of the pipeline's own full-text store alone, best first."""
    principal = AgentPrincipal.from_agent(loaded.agent)
    request = RetrievalRequest(query=question, user_id=subject.external_id)
    ctx = build_context(principal=principal, request=request, subject_id=subject.id)
    plan = RetrievalPlan(
        mode=RetrievalMode.EPISODIC_ONLY,
        intent="",
        semantic_types=("episode",),
        max_candidates=k,
        fulltext_limit=k,
    )
    with transaction.atomic():
        found, _ = fetch_candidates(
            ctx=ctx, plan=plan, query=question, query_vector=None, now=timezone.now(),
            policy=RetrievalPolicy.from_document(None), use_vector=False,
        )  # fmt: skip
    found.sort(key=lambda c: c.fulltext_rank or k + 1)
    return [loaded.dia_by_id.get(c.id, "") for c in found]


def _recall(evidence: list[str], ranked: list[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def _mean(values: list[float]) -> float | None:
    """Return the mean of ``values`` to 4 places, or None (JSON null) when there are none:
    0.0 for a category never asked read as a measured total miss (stop 56's audit)."""
    return round(float(np.mean(values)), 4) if values else None


def _summary(per_question: list[tuple[str, dict[int, float]]], ks: list[int]) -> dict:
    """Return recall@k for each k: over categories 1-4 (``cat1_4``, LoCoMo's usual figure,
    adversarial category 5 and uncategorized questions left out) and per category, null where
    no question was asked."""
    out = {}
    for k in ks:
        by_cat: dict[str, list[float]] = defaultdict(list)
        for cat, recalls in per_question:
            by_cat[cat].append(recalls[k])
        core = [recalls[k] for cat, recalls in per_question if cat in CORE_CATEGORIES]
        entry = {"cat1_4": _mean(core)}
        for cat in CATEGORIES:
            entry[cat] = _mean(by_cat.get(cat, []))
        out[f"recall@{k}"] = entry
    return out


def _questions_by_category(per_question: list[tuple[str, dict[int, float]]]) -> dict:
    """Return how many questions were asked in categories 1-4 together and in each category:
    what each recall figure is the mean of."""
    cats = [cat for cat, _ in per_question]
    counts = {"cat1_4": sum(1 for cat in cats if cat in CORE_CATEGORIES)}
    counts.update({cat: cats.count(cat) for cat in CATEGORIES})
    return counts


def evaluate_locomo(
    data,
    *,
    ks: list[int],
    context_turns: int = 1,
    keep: bool = False,
    limit: int | None = None,
    log=None,
) -> dict:
    """Load ``data``, ask every question with evidence, and return the recall figures."""
    log = log or (lambda message: None)
    ks = sorted(set(ks))
    top_k = max(ks)
    conversations = parse(data)
    if not any(normalize_evidence(q.get("evidence")) for c in conversations for q in c.questions):
        # Recall 0.0 for every approach would read as a measurement of nothing.
        raise DatasetError("no question has evidence: there is nothing to evaluate")
    prefix = f"eval-{uuid.uuid4().hex[:8]}-"
    started, since = time.perf_counter(), database_now()  # as ``harness.Run.loading_since``
    loaded = load(conversations, prefix=prefix, context_turns=context_turns)
    load_seconds = time.perf_counter() - started
    if evaluation_run_reached([loaded.tenant.pk], since):
        # A deletion that verified while the load was open saw none of its rows: removed as
        # it would have removed the run (the harness's ``Run`` does the same).
        raise DatasetError(RUN_REMOVED)
    log(f"loaded {loaded.stored} turns in {load_seconds:.1f}s (trusted import path)")
    principal = AgentPrincipal.from_agent(loaded.agent)
    embedder = get_embedder()
    system_q, dense_q, fts_q = [], [], []
    latencies = []
    asked = 0
    try:
        for conv in conversations:
            subject = loaded.subjects[conv.sample_id]
            # A conversation of no turns has nothing to rank: an empty (0, dimensions) matrix,
            # as the product below needs (a bare empty array failed in numpy: stop 52's audit).
            plain = np.asarray(
                embedder.embed([t.line for t in conv.turns]), dtype=np.float32
            ).reshape(len(conv.turns), -1 if conv.turns else embedder.dimensions)
            dias = [t.dia_id for t in conv.turns]
            questions = [q for q in conv.questions if normalize_evidence(q.get("evidence"))]
            if limit:
                questions = questions[:limit]
            q_vectors = np.asarray(
                embedder.embed([str(q["question"]) for q in questions]), dtype=np.float32
            )
            for q, q_vector in zip(questions, q_vectors, strict=True):
                evidence = normalize_evidence(q.get("evidence"))
                cat = str(q.get("category", ""))
                t0 = time.perf_counter()
                result = retrieve(
                    principal=principal,
                    request=RetrievalRequest(
                        query=str(q["question"]),
                        user_id=conv.sample_id,
                        budget=Budget(max_items=top_k, max_tokens=32000, max_items_per_type=top_k),
                    ),
                )
                latencies.append((time.perf_counter() - t0) * 1000)
                ranked = [
                    loaded.dia_by_id.get(c.id, "")
                    for c in sorted(result.items, key=lambda c: (-c.score, c.id))
                ]
                system_q.append((cat, {k: _recall(evidence, ranked, k) for k in ks}))
                order = np.argsort(-(plain @ q_vector))[:top_k]
                dense = [dias[i] for i in order]
                dense_q.append((cat, {k: _recall(evidence, dense, k) for k in ks}))
                fts = _fulltext_top(loaded, subject, str(q["question"]), top_k)
                fts_q.append((cat, {k: _recall(evidence, fts, k) for k in ks}))
                asked += 1
            log(f"{conv.sample_id}: {len(questions)} questions")
    finally:
        if not keep:
            evaluation_runs_remove([loaded.tenant.pk])
    return {
        "questions": asked,
        "questions_by_category": _questions_by_category(system_q),
        "system": _summary(system_q, ks),
        "baseline_dense": _summary(dense_q, ks),
        "baseline_fulltext": _summary(fts_q, ks),
        "loading": {
            "path": "trusted_import",
            "turns_stored": loaded.stored,
            "turns_refused": loaded.refused,
            # Informational: turns admission's content guards would refuse had the turns been
            # written through admission (they are dialogue, stored through the trusted path).
            "admission_guard_flags": len(loaded.guard_flags),
            "admission_guard_flagged": loaded.guard_flags,
            "context_turns": context_turns,
            "seconds": round(load_seconds, 1),
        },
        "latency_ms_p50": round(float(np.percentile(latencies, 50)), 1) if latencies else 0.0,
        "latency_ms_p95": round(float(np.percentile(latencies, 95)), 1) if latencies else 0.0,
    }
