"""The shape every policy document must have before it can become a tenant's policy.

Admission, retrieval and retention read numbers, lists and names from the active policy on
every request; a ``null`` budget or a negative ``rrf_k`` would fail every retrieval of the
tenant. ``policy_errors(document)`` returns what is wrong (empty when nothing is), by dotted
path; ``policy_publish`` and the admin refuse a document with errors. Keys the code does not
know are allowed (an older or newer version's), but for the names a section is keyed by or
lists (a retention period, a memory type's half-life, a ranking weight, the types and kinds
retrieval binds): a misspelt one would do nothing while the tenant believed it set. Every
section and key may be absent (the defaults fill in, ``RetrievalPolicy.from_document``).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from memory_core.models.choices import (
    Authority,
    MemoryClass,
    MemoryType,
    ScopeKind,
    Sensitivity,
    Status,
)
from memory_core.policy_defaults import DEFAULT_POLICY, retention_section
from memory_core.text import lone_surrogate

logger = logging.getLogger(__name__)

# A hundred years: longer than anything is kept, and far inside what a date can hold (a
# cutoff of a million days before now is before year 1 and raised OverflowError).
MAX_DAYS = 36_500

# (path, kind, low, high): kind "int" or "number"; None bounds are open. Every number that
# becomes a period of time is bounded (a ``timedelta`` or a date past year 9999 raises), and
# every weight, so a score stays finite.
_NUMBERS = [
    ("admission.max_content_chars", "int", 1, 4000),
    ("admission.max_key_chars", "int", 1, 200),
    ("admission.confidence_floor", "number", 0, 1),
    ("admission.inferred_max_confidence", "number", 0, 1),
    ("admission.max_value_bytes", "int", 0, 65_536),
    ("admission.split_window_minutes", "int", 0, MAX_DAYS * 24 * 60),
    ("admission.split_window_writes", "int", 0, 100),
    ("budget.max_items", "int", 1, 100),
    ("budget.max_tokens", "int", 16, 32_000),
    ("budget.max_items_per_type", "int", 1, 100),
    ("budget.confidence_floor", "number", 0, 1),
    ("retrieval.max_candidates", "int", 1, 1000),
    ("retrieval.rrf_k", "number", 1, 1_000_000),
    ("retrieval.rrf_vector_weight", "number", 0, 1000),
    ("retrieval.rrf_fulltext_weight", "number", 0, 1000),
    ("retrieval.relevance_floor", "number", -1, 1),
    ("retrieval.fulltext_floor", "number", 0, 1000),
    ("retrieval.relevance_margin", "number", 0, 1000),
    ("retrieval.near_duplicate_cosine", "number", -1, 1),
    ("retrieval.inferred_echo_cosine", "number", -1, 1),
    ("retrieval.diversity_cosine", "number", -1, 1),
    ("retrieval.redundancy_cosine", "number", -1, 1),
    ("retrieval.semantic_cosine_share", "number", 0, 1),
    ("retrieval.inferred_half_life_days", "number", 0.01, MAX_DAYS),
    ("retrieval.conflict_min_confidence", "number", 0, 1),
]
# Each retention number and its most: a whole number of hours or days, or null (no limit).
# The least is 0 (a rejected write or a trace kept no longer than the next sweep), but for the
# classes whose period admission caps a write's valid_until by (``CLASS_RULES``): at 0 a
# write would end as it starts, which the table's CHECK refused with a 500 on every write
# of the class (stop 51's audit of policies).
RETENTION_MAX = {
    "working_hours": MAX_DAYS * 24,
    "episodic_days": MAX_DAYS,
    "preference_days": MAX_DAYS,
    "inferred_days": MAX_DAYS,
    "rejected_days": MAX_DAYS,
    "trace_days": MAX_DAYS,
}
# A section of numbers keyed by names, the names it may hold, and each number's bounds. A
# half-life of 0 has no meaning (freshness divides by it; retrieval read it as 90 days). A
# name the stages do not read ("task-state", "semantics") was stored and did nothing (stop
# 51's audit of policies).
_NAMED_SECTIONS = (
    ("half_life_days", MemoryType.values, "memory type", 0.01, MAX_DAYS),
    ("ranking_weights", list(DEFAULT_POLICY["ranking_weights"]), "ranking weight", 0, 1000),
)
_SECTIONS = ("admission", "retention", "half_life_days", "ranking_weights", "budget", "retrieval")


def policy_errors(document) -> dict[str, str]:
    """Return ``{dotted path: what is wrong}`` for ``document`` (empty when it is valid)."""
    if not isinstance(document, dict):
        return {"": "A policy document is a JSON object."}
    # First, and alone: no later check (nor the message naming an unknown name) reads a text
    # PostgreSQL cannot store.
    errors = _text_errors(document)
    if errors:
        return errors
    for section in _SECTIONS:
        if section in document and not isinstance(document[section], dict):
            errors[section] = "Must be a JSON object."
    if errors:
        return errors
    for path, kind, low, high in _NUMBERS:
        section, key = path.split(".")
        if key in document.get(section, {}):
            problem = _number_problem(document[section][key], kind, low, high)
            if problem:
                errors[path] = problem
    for key in document.get("retention", {}):
        if key not in RETENTION_MAX:
            # "episode_days" (the class is "episodic_days") was stored and limited nothing:
            # the tenant's episodes kept 90 days, its preferences forever (stop 51's fuzzing).
            name = key if isinstance(key, str) and key.isprintable() else _shown(key)
            errors[f"retention.{name}"] = (
                f"Unknown retention period: {_shown(key)}. One of {', '.join(RETENTION_MAX)}."
            )
    for key, high in RETENTION_MAX.items():
        value = document.get("retention", {}).get(key)
        if value is not None:
            problem = _number_problem(value, "int", 1 if key in _CAPPING else 0, high)
            if problem:
                errors[f"retention.{key}"] = problem + " Or null, for no limit."
    for section, names, what, low, high in _NAMED_SECTIONS:
        for key, value in document.get(section, {}).items():
            if key not in names:
                name = key if key.isprintable() else _shown(key)
                errors[f"{section}.{name}"] = (
                    f"Unknown {what}: {_shown(key)}. One of {', '.join(names)}."
                )
            elif problem := _number_problem(value, "number", low, high):
                errors[f"{section}.{key}"] = problem
    retrieval = document.get("retrieval", {})
    if "max_prompt_sensitivity" in retrieval and retrieval["max_prompt_sensitivity"] not in (
        Sensitivity.values
    ):
        errors["retrieval.max_prompt_sensitivity"] = f"One of {', '.join(Sensitivity.values)}."
    for path, allowed, what in (
        ("retrieval.scope_bound_types", MemoryType.values, "memory types"),
        ("retrieval.high_impact_types", MemoryType.values, "memory types"),
        ("admission.workflow_consent_types", MemoryType.values, "memory types"),
        # "Repo" or "repository" bound nothing, silently (stop 49's audit).
        ("retrieval.scope_bound_kinds", ScopeKind.values, "scope kinds"),
        ("retrieval.high_impact_key_prefixes", None, ""),
        ("admission.sensitive_categories", None, ""),
    ):
        section, key = path.split(".")
        if key in document.get(section, {}):
            value = document[section][key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                errors[path] = "Must be a list of strings."
            elif allowed is not None and set(value) - set(allowed):
                unknown = ", ".join(_shown(v) for v in sorted(set(value) - set(allowed)))
                errors[path] = f"Unknown {what}: {unknown}. One of {', '.join(allowed)}."
    prefixes = "retrieval.high_impact_key_prefixes"
    if prefixes not in errors:  # a list of strings, or absent
        if problem := _prefixes_problem(retrieval.get("high_impact_key_prefixes")):
            errors[prefixes] = problem
    if "admission.sensitive_categories" not in errors:  # a list of strings, or absent
        problem = _categories_problem(document.get("admission", {}).get("sensitive_categories"))
        if problem:
            errors["admission.sensitive_categories"] = problem
    return errors


def _prefixes_problem(prefixes) -> str:
    """Return what is wrong with a list of high-impact key prefixes ("" when nothing is).

    A key's first segment is read in lower case and ends at any character that is not a
    letter or a digit (``retrieval.policy.is_high_impact``): "Payroll" or "payroll.account"
    could never match, and a conflict on ``payroll.account`` got a winner by score, the
    tenant believing it guarded (stop 49's audit).
    """
    never = [p for p in dict.fromkeys(prefixes or []) if not (p.isalnum() and p == p.lower())]
    if not never:
        return ""
    return (
        f"These can never match a key's first segment: {', '.join(_shown(p) for p in never)}. "
        "A prefix is one segment in lower case, letters and digits only (deploy, billing)."
    )


def _categories_problem(categories) -> str:
    """Return what is wrong with a list of sensitive category names ("" when nothing is).

    Admission checks a write for each category it finds in the guards' patterns and skips
    any other name: "Health" or "government ids" sent health facts and passport numbers to
    agents without a reviewer, the tenant believing them guarded.
    """
    # Imported here: the guards' package imports admission, which imports this module.
    from memory_core.admission.guards.sensitive import SENSITIVE_PATTERNS

    if categories is None:
        return ""
    unknown = [c for c in dict.fromkeys(categories) if c not in SENSITIVE_PATTERNS]
    if not unknown:
        return ""
    return (
        f"Unknown sensitive categories: {', '.join(_shown(c) for c in unknown)}. "
        f"The categories are {', '.join(SENSITIVE_PATTERNS)}."
    )


# How deep a document's objects and lists may nest: a policy is sections of knobs, some of
# them lists (3 deep). Some 850 levels parsed and then failed to encode again as the version
# was saved or shown: RecursionError, a 500 in the admin (stop 51's audit of policies).
MAX_DEPTH = 32


def _text_errors(document: dict) -> dict[str, str]:
    """Return ``{dotted path: what is wrong}`` for each string of ``document``, a key or a
    value at any depth, that PostgreSQL's jsonb cannot hold: one with a NUL character, or
    with a lone surrogate (no UTF-8 encodes one). Published, either failed with a database
    error (a 500 in the admin) instead of a refusal. And for an object or a list nested
    deeper than ``MAX_DEPTH``."""
    errors: dict[str, str] = {}
    stack: list[tuple[str, object, int]] = [("", document, 1)]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, dict | list) and depth > MAX_DEPTH:
            errors[path] = f"Nested more than {MAX_DEPTH} levels deep: a policy cannot hold it."
        elif isinstance(value, dict):
            for key, inner in value.items():
                name = key if isinstance(key, str) and key.isprintable() else _shown(key)
                inner_path = f"{path}.{name}" if path else name
                if isinstance(key, str) and (problem := _unstorable(key)):
                    errors[inner_path] = f"This key holds {problem}, which a policy cannot store."
                stack.append((inner_path, inner, depth + 1))
        elif isinstance(value, list):
            stack.extend(
                (f"{path}[{index}]", inner, depth + 1) for index, inner in enumerate(value)
            )
        elif isinstance(value, str) and (problem := _unstorable(value)):
            errors[path] = f"Holds {problem}, which a policy cannot store."
        elif isinstance(value, float) and not math.isfinite(value):
            # Under a key no check reads ("note_extra": NaN): PostgreSQL's JSON holds none.
            errors[path] = "Must be a finite number: a policy cannot store NaN or Infinity."
    return errors


def _unstorable(text: str) -> str:
    """Return the character of ``text`` no policy can store, described ("" when none)."""
    if "\x00" in text:
        return "a NUL character (U+0000)"
    surrogate = lone_surrogate(text)
    if surrogate is not None:
        return f"a lone surrogate (U+{ord(surrogate):04X}; no UTF-8 text holds one)"
    return ""


def _shown(text) -> str:
    """Return ``text`` as a message names it: quoted, anything unprintable escaped (a NUL
    as ``\\x00``, a lone surrogate as ``\\ud800``), so that the message itself can be
    stored and shown."""
    if not isinstance(text, str):
        return repr(text)
    escaped = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )
    return f'"{escaped}"'


def _number_problem(value, kind: str, low, high) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "Must be a number."
    # An integer is compared as it is: math.isfinite raised OverflowError on one no float
    # holds (a 401-digit JSON number), failing the admin form, publishing and every sweep of
    # the tenant that stored it (stop 47's audit).
    if isinstance(value, float) and not math.isfinite(value):
        return "Must be finite."
    if kind == "int" and value != int(value):
        return "Must be a whole number."
    if low is not None and value < low:
        return f"At least {low}."
    if high is not None and value > high:
        return f"At most {high}."
    return ""


# The unreadable retention values already logged by this process: retrieval reads the policy
# on every request, and one bad value logged a warning on each (bounded: a process logs at most
# this many distinct ones, and then each again).
_WARNED: set[tuple[str, str, str]] = set()
_WARNED_MAX = 1000


def _warn_once(tenant_id, key: str, value) -> None:
    """Log an unreadable retention value once per process (per tenant, key and value)."""
    seen = (str(tenant_id), key, repr(value))
    if seen in _WARNED:
        return
    if len(_WARNED) >= _WARNED_MAX:
        _WARNED.clear()
    _WARNED.add(seen)
    logger.warning(
        "tenant %s: retention.%s is %r, not a number of hours or days: treated as no limit",
        tenant_id,
        key,
        value,
    )


def retention_period(retention: dict, key: str, *, tenant_id=None) -> timedelta | None:
    """Return how long ``retention[key]`` keeps a class (hours for ``working_hours``, else
    days), or None for no limit.

    Read from a stored policy, which may predate a bound of ``policy_errors``: a number past
    ``RETENTION_MAX`` counts as that most (a million days kept everything, as a hundred
    years does), and one that is no number of hours or days at all (a string, a negative,
    NaN) as no limit, logged once a process (``_warn_once``): nothing is deleted, and no
    write fails, on a number nobody can read. Never raises.
    """
    value = retention.get(key)
    if value is None:
        return None
    if _number_problem(value, "number", 0, None):
        _warn_once(tenant_id, key, value)
        return None
    value = min(value, RETENTION_MAX[key])
    if key in _CAPPING and value < 1:
        # The least a class's period may say since stop 51: at 0 a write of the class ended as
        # it started, which the table's CHECK refused (a 500 on every write of the class).
        value = 1
    return timedelta(hours=value) if key == "working_hours" else timedelta(days=value)


# The sweep's reason for a revoked preference, deleted with every version it supersedes at
# its next run (``deletion.retention``); an export says when (``exports``).
REVOKED_RULE = "retention:revoked"

# The retention rules of the classes, in the order the sweep applies them: (the sweep's
# reason code, the retention key, and the column and value a memory matches the rule by).
# One table for every reader: the sweep deletes by it (``deletion.retention``), retrieval
# leaves out what it no longer allows (``retrieval.candidates``, stage 5), admission caps a
# write's ``valid_until`` by it and the portal says when (``retention_limit``).
CLASS_RULES = (
    ("retention:working", "working_hours", "memory_class", MemoryClass.WORKING),
    ("retention:episodic", "episodic_days", "memory_class", MemoryClass.EPISODIC),
    ("retention:preference", "preference_days", "memory_class", MemoryClass.PREFERENCE),
    ("retention:inferred", "inferred_days", "authority", Authority.MODEL_INFERENCE),
)
# The retention keys admission caps a write's valid_until by: at least 1.
_CAPPING = frozenset(key for _, key, _, _ in CLASS_RULES)


@dataclass(frozen=True)
class RetentionCutoff:
    """One class rule of a tenant's retention at one moment: a memory whose ``column``
    (``memory_class`` or ``authority``) holds ``value`` and that was written before ``cutoff``
    is overdue. The sweep deletes it; no read hands it to an agent meanwhile."""

    reason: str  # the sweep's reason code (``retention:episodic``)
    key: str  # the retention key (``episodic_days``)
    column: str
    value: str
    cutoff: datetime

    def applies(self, *, memory_class: str, authority: str, created_at: datetime) -> bool:
        """Return whether a memory of ``memory_class`` and ``authority`` written at
        ``created_at`` is overdue under this rule (``created_at < cutoff``, as the sweep's
        query has it)."""
        held = memory_class if self.column == "memory_class" else authority
        return held == self.value and created_at < self.cutoff


def retention_cutoffs(retention: dict, now: datetime, *, tenant_id=None) -> list[RetentionCutoff]:
    """Return the class rules of ``retention`` (a policy's ``retention`` section) that limit
    anything, each with its cutoff at ``now``: ``now`` less the period (``retention_period``;
    a ``null`` period limits nothing and has no rule)."""
    # In UTC: an aware ``now`` of a zone with summer time is subtracted from on its wall
    # clock, and a period that crossed a change moved the cut-off by an hour (stop 67's audit
    # of retention).
    now = now.astimezone(UTC)
    cutoffs = []
    for reason, key, column, value in CLASS_RULES:
        period = retention_period(retention, key, tenant_id=tenant_id)
        if period is not None:
            cutoffs.append(RetentionCutoff(reason, key, column, str(value), now - period))
    return cutoffs


def retention_overdue(cutoffs, *, memory_class: str, authority: str, created_at) -> str:
    """Return the reason code of the first of ``cutoffs`` a memory is overdue under, or ""."""
    for cutoff in cutoffs:
        if cutoff.applies(memory_class=memory_class, authority=authority, created_at=created_at):
            return cutoff.reason
    return ""


@dataclass(frozen=True)
class InUse:
    """What "in use" means at ``now`` under a tenant's active retention: the rows retrieval
    gives agents and the sweep leaves alone. A live row (active, or waiting for a reviewer)
    is out of use once past its ``valid_until`` (``Memory.status_at``) or past its class's
    retention (``cutoffs``, ``retention_cutoffs``: retrieval leaves it out from that moment
    and the sweep deletes it within minutes), though both keep it stored "active" until a
    sweep runs. Writes, approvals, corrections and conflict resolutions read their heads and
    winners by it (``MemoryQuerySet.not_ended`` is the same rule as a query), or a fact no
    agent is given again superseded, or stood in conflict with, the key's live value.
    """

    now: datetime
    cutoffs: tuple[RetentionCutoff, ...] = ()
    # The section the cutoffs were read from, for when each row ends (``memory_expiry``).
    retention: dict = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, retention: dict, now: datetime, *, tenant_id=None) -> InUse:
        """Return the rule at ``now`` under ``retention`` (the active policy's section, as
        the sweep reads it: ``{}`` without an active policy limits nothing)."""
        cutoffs = tuple(retention_cutoffs(retention, now, tenant_id=tenant_id))
        return cls(now, cutoffs, retention)

    def overdue(self, memory) -> str:
        """Return the reason code of the retention rule ``memory`` (a Memory) is past
        (``retention:preference``), or ""."""
        return retention_overdue(
            self.cutoffs,
            memory_class=memory.memory_class,
            authority=memory.authority,
            created_at=memory.created_at,
        )

    def state(self, memory) -> str:
        """Return ``memory``'s status as it stands at ``now`` (``Memory.status_at``), or
        ``past_retention`` for a live row its class's retention no longer allows."""
        state = memory.status_at(self.now)
        if state in (Status.ACTIVE, Status.PENDING_APPROVAL) and self.overdue(memory):
            return PAST_RETENTION
        return state

    def holds(self, memory) -> bool:
        """Return whether ``memory`` is active and in use at ``now``."""
        return self.state(memory) == Status.ACTIVE


# ``InUse.state`` of a live row past its class's retention, and how a message names it.
PAST_RETENTION = "past_retention"
STATE_WORDS = {PAST_RETENTION: "past its retention period under the tenant's policy"}


def retention_as_swept(document) -> dict[str, int | None]:
    """Return every retention key of ``RETENTION_MAX`` as the retention sweep reads the policy
    ``document``: a whole number of hours or days, or None for no limit.

    As every part reads it (``policy_defaults.retention_section``): a key the document lacks
    at its default, ``null`` no limit (until stop 54 a missing key limited nothing here, but
    for ``trace_days``, while admission gave it the default); a number past
    ``RETENTION_MAX`` is that most, and one that is no number of hours or days at all no
    limit (``retention_period``). A fraction (a document stored before ``policy_errors``
    asked for whole numbers) is rounded up: the longer reading, so that a replay that narrows
    to it never deletes more than the tenant asked.
    """
    retention = retention_section(document)
    swept: dict[str, int | None] = {}
    for key in RETENTION_MAX:
        period = retention_period(retention, key)
        if period is None:
            swept[key] = None
        else:
            unit = timedelta(hours=1) if key == "working_hours" else timedelta(days=1)
            swept[key] = math.ceil(period / unit)
    return swept


def retention_limit(memory_class: str, authority: str, retention: dict) -> timedelta | None:
    """Return how long ``retention`` keeps a memory of ``memory_class`` and ``authority``
    after it was written (the shortest period of the ``CLASS_RULES`` it matches: its class's
    and, for an inferred memory, ``inferred_days``), or None: no limit. Admission caps a
    write's ``valid_until`` by it; the retention sweep deletes by the same rules; the portal
    says when."""
    held = {"memory_class": memory_class, "authority": authority}
    periods = [
        retention_period(retention, key)
        for _, key, column, value in CLASS_RULES
        if held[column] == value
    ]
    limits = [period for period in periods if period is not None]
    return min(limits) if limits else None


@dataclass(frozen=True)
class MemoryExpiry:
    """When a memory stops being used (``at``, None: no end) and whether the retention
    policy ends it (``by_retention``) rather than its own ``valid_until``."""

    at: datetime | None
    by_retention: bool


def memory_expiry(memory, retention: dict, *, revoked_at=None) -> MemoryExpiry:
    """Return when ``memory`` (a Memory, or a row with its ``memory_class``, ``authority``,
    ``created_at`` and ``valid_until``) stops being used: the earlier of its ``valid_until``
    and the day the retention sweep deletes it by ``retention`` (the tenant's active policy's
    section, ``retention_limit``: its class's period or, inferred, ``inferred_days`` after it
    was written). The portal's pages and the export say the same: a row stored without
    admission's cap (an import), or written before a policy shortened its period, ends by
    the policy, not by its ``valid_until``. A write a reviewer refused is deleted
    ``rejected_days`` after the decision, if that is sooner (the sweep's "retention:rejected"
    rule: the export said such a write was kept with no end). A revoked preference is deleted
    with its history by the sweep's next run (its "retention:revoked" rule): due from its
    revocation, ``revoked_at`` for an older version of its chain (the export said both were
    kept with no end: stop 52's audits)."""
    limit = retention_limit(memory.memory_class, memory.authority, retention)
    deleted_at = _deletion_day(memory.created_at, limit)
    status = getattr(memory, "status", None)
    if status == Status.REJECTED:
        refused = _deletion_day(memory.updated_at, retention_period(retention, "rejected_days"))
        if refused is not None and (deleted_at is None or refused < deleted_at):
            deleted_at = refused
    if (
        revoked_at is None
        and status == Status.REVOKED
        and memory.memory_class == MemoryClass.PREFERENCE
    ):
        revoked_at = memory.updated_at
    if revoked_at is not None and (deleted_at is None or revoked_at < deleted_at):
        deleted_at = revoked_at
    valid_until = memory.valid_until
    by_retention = deleted_at is not None and (valid_until is None or deleted_at < valid_until)
    return MemoryExpiry(at=deleted_at if by_retention else valid_until, by_retention=by_retention)


def _deletion_day(created_at: datetime, limit: timedelta | None) -> datetime | None:
    """Return ``created_at + limit``, or None (no end) when there is no limit or no date is
    there: a row written near the year 9999 (stored before the import refused a
    ``created_at`` to come) outlives every date, and its sum raised OverflowError on the
    person's portal page and export."""
    if limit is None:
        return None
    try:
        return created_at + limit
    except OverflowError:
        return None
