"""Stage 3: turn the gate's mode and the intent into a retrieval plan.

The plan names the memory types each store is asked for, whether active task state is
loaded, the preferred scopes (narrowest first), how many candidates to pull, and the
request's entities: the named things it is about (``extract_entities``).
"""

from __future__ import annotations

import re
import unicodedata

from .policy import RetrievalPolicy
from .types import RetrievalContext, RetrievalMode, RetrievalPlan

ALL_TYPES = (
    "user_preference",
    "project_constraint",
    "repository_rule",
    "task_state",
    "previous_decision",
    "incident",
    "successful_procedure",
    "episode",
)
EPISODIC_TYPES = ("previous_decision", "incident", "successful_procedure", "episode")
CONSTRAINT_TYPES = ("project_constraint", "repository_rule", "previous_decision")

# Structured types by intent (the ones the seed names); unknown intents use the mode's default.
STRUCTURED_BY_INTENT = {
    "load_preferences": ("user_preference",),
    "load_profile": ("user_preference",),
    "apply_project_rules": CONSTRAINT_TYPES,
    "apply_repository_rules": CONSTRAINT_TYPES,
    "resume_task": ("task_state", *CONSTRAINT_TYPES),
    "continue_task": ("task_state", *CONSTRAINT_TYPES),
}

_TERM = re.compile(r"[^\W_]+", re.UNICODE)

# Entities, deterministic: quoted phrases, and words shaped like identifiers: a capital after
# the first letter (iOS, OpenAPI, AWS; not among words in capitals, ``_shouted``), letters
# with digits (eu-west-1, S3), parts joined by - . _ or / (atlas-api, deploy.region). Not
# capitalized words: people's names are in most memories of a conversation, and favouring
# every turn that names the speaker buried the one that answers (measured on a LoCoMo-shaped
# test).
# Every quoted span, whatever its length, so that each pair of quotes is consumed: bounded to
# 2-60 characters in the pattern, a span outside them was skipped and the next match began at
# its closing quote (`Rename "a" to "b"` gave the entity "to"). The bounds apply to the text.
_QUOTED = re.compile(r"[\"`\u201c]([^\"`\u201d]*)[\"`\u201d]")
QUOTED_CHARS = (2, 60)
_WORD = re.compile(r"[^\W_](?:[\w.\-/]*[^\W_])?", re.UNICODE)
MAX_ENTITIES = 10
# Words in capitals this many in a row are shouted (or typed with caps lock), not acronyms.
SHOUTED_RUN = 3


def _is_identifier(word: str, *, by_case: bool = True) -> bool:
    return (
        (by_case and any(ch.isupper() for ch in word[1:]))
        or (any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word))
        or any(sep in word for sep in "-._/")
    )


def _shouted(words: list[str]) -> list[bool]:
    """Return, for each of ``words``, whether it is in capitals among words in capitals: in a
    query whose words are mostly in capitals, or in a run of ``SHOUTED_RUN`` or more. Their
    case says nothing: read as identifiers by it, every word of "WHAT IS THE DEPLOY REGION?"
    was an entity, and any memory saying "the" or "is" was ranked as naming what the request
    is about (stop 60's audit of retrieval). "AWS" among lower-case words stays an acronym.

    One-letter words neither count nor break a run: the pronoun "I" is in capitals in any
    sentence, and counted, "I use AWS" was mostly in capitals and AWS no entity (stop 60's
    review)."""
    capitals = [len(word) > 1 and word.isupper() for word in words]
    cased = sum(1 for word in words if len(word) > 1 and word.lower() != word.upper())
    if 2 * sum(capitals) > cased:
        return capitals
    shouted = [False] * len(words)
    run: list[int] = []
    for index in range(len(words) + 1):
        if index < len(words) and len(words[index]) == 1:
            continue
        if index < len(words) and capitals[index]:
            run.append(index)
            continue
        if len(run) >= SHOUTED_RUN:
            for member in run:
                shouted[member] = True
        run = []
    return shouted


def extract_entities(query: str) -> tuple[str, ...]:
    """Return the named things ``query`` is about, lower-cased, first seen first (at most
    ``MAX_ENTITIES``): "Continue the iOS network-state work in atlas-api" gives ("ios",
    "network-state", "atlas-api")."""
    query = unicodedata.normalize("NFC", query)  # as the entity is matched (rerank.task_fit)
    least, most = QUOTED_CHARS
    found = [
        quoted.group(1).strip().lower()
        for quoted in _QUOTED.finditer(query)
        if least <= len(quoted.group(1)) <= most
    ]
    words = _WORD.findall(query)
    found += [
        word.lower()
        for word, shouted in zip(words, _shouted(words), strict=True)
        if _is_identifier(word, by_case=not shouted)
    ]
    # A quoted run of separators ("--", ". .") names nothing, and its pattern would be empty
    # (rerank.entity_patterns), matching every memory.
    named = (entity for entity in found if any(ch.isalnum() for ch in entity))
    return tuple(dict.fromkeys(named))[:MAX_ENTITIES]


def build_plan(
    *, mode: RetrievalMode, intent: str, ctx: RetrievalContext, policy: RetrievalPolicy, query: str
) -> RetrievalPlan:
    """Return the plan for ``mode``: stores, types, scopes and candidate counts."""
    readable = set(ALL_TYPES) if ctx.read_types is None else set(ctx.read_types)
    preferred = tuple(
        kind if kind == "global" else f"{kind}:{ref}" for kind, ref in ctx.allowed_scopes
    )
    max_candidates = int(policy["max_candidates"])
    terms = len(set(_TERM.findall(query.lower())))
    if mode == RetrievalMode.NONE:
        return RetrievalPlan(mode=mode, intent=intent, query_terms=terms)
    entities = extract_entities(query)

    def keep(types) -> tuple[str, ...]:
        return tuple(t for t in types if t in readable)

    def bound(structured: tuple[str, ...]) -> dict:
        """The plan's ``bound_types`` and ``bound_kinds``, or neither."""
        kinds = {kind for kind, _ in ctx.allowed_scopes}
        bound_kinds = tuple(k for k in policy["scope_bound_kinds"] if k in kinds)
        bound_types = tuple(t for t in structured if t in policy["scope_bound_types"])
        if not (bound_kinds and bound_types):
            return {}
        return {"bound_types": bound_types, "bound_kinds": bound_kinds}

    if mode == RetrievalMode.STRUCTURED_ONLY:
        structured = keep(
            STRUCTURED_BY_INTENT.get(
                intent, ("user_preference", "project_constraint", "repository_rule")
            )
        )
        task_state = "task_state" in structured and bool(ctx.session_id or ctx.task_id)
        structured = tuple(t for t in structured if t != "task_state")
        return RetrievalPlan(
            mode=mode,
            intent=intent,
            structured_types=structured,
            task_state=task_state,
            excluded_types=tuple(t for t in ALL_TYPES if t not in structured and t != "task_state"),
            preferred_scopes=preferred,
            max_candidates=max_candidates,
            query_terms=terms,
            entities=entities,
            **bound(structured),
        )
    if mode == RetrievalMode.EPISODIC_ONLY:
        semantic = keep(EPISODIC_TYPES)
        return RetrievalPlan(
            mode=mode,
            intent=intent,
            semantic_types=semantic,
            excluded_types=tuple(t for t in ALL_TYPES if t not in semantic),
            preferred_scopes=preferred,
            max_candidates=max_candidates,
            semantic_limit=max_candidates,
            fulltext_limit=max_candidates,
            query_terms=terms,
            entities=entities,
        )
    structured = keep(("user_preference", "project_constraint", "repository_rule"))
    return RetrievalPlan(
        mode=mode,
        intent=intent,
        structured_types=structured,
        semantic_types=keep(
            EPISODIC_TYPES + ("user_preference", "project_constraint", "repository_rule")
        ),
        task_state="task_state" in readable and bool(ctx.session_id or ctx.task_id),
        preferred_scopes=preferred,
        max_candidates=max_candidates,
        semantic_limit=max_candidates,
        fulltext_limit=max_candidates,
        query_terms=terms,
        entities=entities,
        **bound(structured),
    )
