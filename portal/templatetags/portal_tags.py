"""Small presentation filters for the portal's templates."""

import json

from django import template
from django.utils import timezone

from memory_core.admission.codes import RULE_CODES
from memory_core.models import MAX_REVIEW_REASON_CHARS
from memory_core.text import format_scope, without_paths

register = template.Library()


@register.simple_tag
def review_reason_max_chars() -> int:
    """The most a reviewer's reason holds (the forms' and the reviewer API's limit)."""
    return MAX_REVIEW_REASON_CHARS


LABELS = {
    "explicit_user": "stated by you",
    "explicit_admin": "set by an administrator",
    "confirmed_system": "confirmed by a system",
    "tool_observation": "observed by a tool",
    "model_inference": "inferred by a model",
    "user_input": "your input",
    "verified_tool_output": "verified tool output",
    "model_inference_source": "model inference",
    "admin": "administrator",
    "pending_approval": "awaiting review",
}


@register.filter
def label(value) -> str:
    """Return a readable label for an enum value: ``user_preference`` -> "User preference"."""
    text = str(value or "")
    return text.replace("_", " ").capitalize()


# The same authorities as a reviewer reads them: "stated by you" is the subject's word, and on
# a reviewer's page it said the reviewer had stated someone else's health or card details.
REVIEWER_LABELS = {"explicit_user": "stated by the user"}


@register.filter
def authority_label(value, reader: str = "") -> str:
    """Return how a memory's authority reads to the person it is about, or to a reviewer
    (``|authority_label:"reviewer"``)."""
    if reader == "reviewer" and str(value) in REVIEWER_LABELS:
        return REVIEWER_LABELS[str(value)]
    return LABELS.get(str(value), label(value))


@register.filter
def source_label(value) -> str:
    """Return a readable source type."""
    if value == "model_inference":
        return "model inference"
    return LABELS.get(str(value), label(value).lower())


@register.filter
def scope(memory) -> str:
    """Return a memory's scope as ``global`` or ``kind:ref``."""
    return format_scope(memory.scope_kind, memory.scope_ref)


@register.filter
def json_pretty(value) -> str:
    """Return a memory's structured value as indented JSON, for a ``<pre>``. Plain text: the
    template escapes it as any other (a value is whatever an agent wrote)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.filter
def percent(value) -> str:
    """Return 0..1 as a whole percentage."""
    try:
        return f"{round(float(value) * 100)}%"
    except (TypeError, ValueError):
        return ""


# Why a memory is not in use, as its page says it where a memory in use says when it expires
# (a revoked memory's page read "Expires: when you revoke it").
NOT_IN_USE = {
    "revoked": "Revoked",
    "expired": "Expired",
    "superseded": "Replaced by a newer version",
    "rejected": "Refused by a reviewer",
    "deleted": "Deleted",
    "past_retention": "Past its retention period, due for deletion,",
}
# A revoked one that the person's later correction withdrew (``REPLACED_BY_LATER_CORRECTION``).
REPLACED_BY_OWN = "Replaced by a later correction of yours"


@register.filter
def not_in_use(memory) -> dict | None:
    """Return {"said": "Revoked", "at": when} for a memory no agent is given any more, or
    None for one in use or waiting for a reviewer. A live one (active, or waiting for a
    reviewer) past its ``valid_until`` is "Expired" (``Memory.status_at``), as the list's
    "Not in use" and the export say, though the retention sweep has not marked it yet; one
    past its class's retention is said so, when the memory page read it (``state_now``,
    ``InUse.state``: the list called it so, and its page "Active")."""
    state = getattr(memory, "state_now", None) or memory.status_at(timezone.now())
    if state not in NOT_IN_USE:
        return None
    said = NOT_IN_USE[state]
    if state == "revoked" and getattr(memory, "replaced_by_own", False):
        # Withdrawn by the person's own later correction (``replaced_by_own``, set by the
        # selectors): "Revoked" read as a memory they took back, beside its events' reason.
        said = REPLACED_BY_OWN
    return {"said": said, "at": not_in_use_since(memory, state)}


def not_in_use_since(memory, state: str):
    """Return when ``memory`` left use (``state``, its status now).

    A live row past its end expired at its ``valid_until``. A row stored expired did when it
    was marked, its ``updated_at``: a task's close expires its task state before its end,
    which still lies ahead ("Expired on <tomorrow>"); but the retention sweep marks a row only
    some time after its end, so the earlier of the two. Anything else when the row last
    changed (the revoke, the newer version, the reviewer's refusal, the deletion); past its
    retention, the day it ran out (``expires_at``, ``memory_expiry``). The list's "Not in
    use" shows and sorts by the same rule, in SQL (``selectors.portal._left_use_at``)."""
    if state == "past_retention":
        return getattr(memory, "expires_at", None) or memory.updated_at
    if state != "expired" or not memory.valid_until:
        return memory.updated_at
    if memory.status != "expired":
        return memory.valid_until
    return min(memory.valid_until, memory.updated_at)


@register.filter
def not_yet_in_effect(memory) -> bool:
    """Return whether ``memory`` is active but its ``valid_from`` is still ahead: remembered,
    and no agent is given it until then (retrieval reads only rows in effect)."""
    return memory.status == "active" and memory.valid_from > timezone.now()


@register.filter
def approvable(writes) -> list:
    """Return the ``writes`` waiting for a reviewer that an approval may still put in use:
    not those a reviewer can only reject (``only_rejected``, set by
    ``selectors.portal.mark_only_rejected``)."""
    return [write for write in writes if not getattr(write, "only_rejected", "")]


@register.filter
def expired(moment) -> bool:
    """Return whether a datetime lies in the past."""
    return bool(moment) and moment <= timezone.now()


@register.filter
def short_id(value) -> str:
    """Return the first eight characters of an id."""
    return str(value)[:8]


@register.filter
def write_name(item) -> str:
    """Return a pending write as its controls name it: "the write health.diet (a1b2c3d4)
    about user-42", by its key and the item's short id, which the message after a decision
    repeats ("Write a1b2c3d4 approved"); several writes about one subject read apart."""
    key = item.memory.memory_key if item.memory else item.memory_key
    short = short_id(item.pk)
    what = f"{key} ({short})" if key else short
    return f"the write {what} about {item.subject.external_id}"


@register.filter
def ago(moment) -> str:
    """Return "just now" or "3 hours ago" for a past datetime."""
    if not moment:
        return ""
    from django.utils.timesince import timesince

    text = timesince(moment)
    return (
        "just now"
        if text.startswith("0\xa0minutes") or text.startswith("0 minutes")
        else f"{text} ago"
    )


# Who asked for a deletion, by DeletionOperation.requested_by_type, as its subject reads it.
REQUESTERS = {"user": "you", "agent": "an agent", "reviewer": "a reviewer"}


@register.filter
def requested_by(operation) -> str:
    """Return who or what asked for a deletion operation: "you", "an agent", "the retention
    policy", ..."""
    kind, name = operation.requested_by_type, operation.requested_by_id
    # The subject only for a queued one: read for every row, it was a query per operation.
    queued = not kind and operation.status == "queued"
    subject = getattr(operation, "subject", None) if queued else None
    if subject is not None:
        # Not made yet (``queued_deletion``): the subject's mark says who queued it, an agent
        # or the person (it read "requested by unknown").
        return "an agent" if subject.deletion_queued_by_agent_id else "you"
    if kind in REQUESTERS:
        return REQUESTERS[kind]
    if kind == "system":
        if name == "retention":
            return "the retention policy"
        return f"the system ({name})" if name else "the system"
    return label(kind) or "unknown"


# Who wrote a memory (``selectors.writers.Writer.kind``) that no agent's write made, as its
# subject reads it: a person's or a reviewer's login is never named.
WRITERS = {
    "user": "you",
    "reviewer": "a reviewer",
    "admin": "an administrator",
    "import": "an import",
    "system": "memledger",
    "agent": "an agent",
}


@register.filter
def written_by(memory) -> str:
    """Return who wrote ``memory`` (its ``writer``, set by the selectors): the agent's name,
    else "you", "a reviewer", "an import", "memledger", ...; "" when not recorded."""
    writer = getattr(memory, "writer", None)
    if writer is None:
        return ""
    return writer.agent or WRITERS.get(writer.kind, "")


# Who did something to a memory (``MemoryEvent.actor_type``), as its subject reads it.
ACTORS = {**REQUESTERS, "system": "the system"}


@register.filter
def actor(kind) -> str:
    """Return who acted on a memory: "you", "an agent", "a reviewer", "the system"."""
    return ACTORS.get(str(kind or ""), label(kind) or "unknown")


# A reason code (``MemoryEvent.reason_code``, ``DeletionOperation.reason_code``) as the person
# the memory is about reads it: the codes name memory_core's rules and services, and the
# pages showed them as they are (`supersession.supersedes`, "requested by you (`requested`)").
REASONS = {
    # How a memory came, changed or stopped being used.
    "admitted": "accepted",
    "import": "imported",
    "correction": "corrected",
    "supersession.supersedes": "a newer version replaced the one before",
    "supersession.conflict_lower_authority": (
        "kept beside a version set with higher authority, for a reviewer to decide"
    ),
    "sensitivity.review_required": "sensitive, so a reviewer approves it before any agent uses it",
    "sensitivity.kept_from_head": (
        "kept as sensitive as the version before: an agent may not mark it less sensitive"
    ),
    "ttl.defaulted": "its end date comes from the retention policy",
    "ttl.capped": "its end date was brought forward to the retention policy's limit",
    "source.confidence_capped": "a model inferred it, so its confidence is capped",
    "class.pointer": "kept as a pointer to the system that holds the data",
    "injection.obfuscated": "hidden characters or look-alike letters were found in the text",
    "review.approved": "approved by a reviewer",
    "review.rejected": "refused by a reviewer",
    "unresolved_high_impact_conflict": "it contradicts another memory; a reviewer decides",
    "choose_winner": "a reviewer chose which memory stands",
    "keep_both_scoped": "a reviewer kept both, each where it applies",
    "ask_user": "a reviewer is asking you which one is right",
    "conflict_lost": "a reviewer chose another memory over this one",
    "revoked": "asked not to be used any more",
    "replaced_by_later_correction": "replaced by a later correction of yours",
    "consent_withdrawn": "the workflow's consent was withdrawn",
    "task_closed": "its task was closed",
    "valid_until_passed": "its end date passed",
    # Why a deletion was made ("requested": asked for, with no reason of its own).
    "requested": "none given",
    "admin": "an administrator deleted it",
    "tenant_deleted": "your organisation's data was deleted",
    "retention:working": "the retention period for working memory ended",
    "retention:episodic": "the retention period for past events ended",
    "retention:preference": "the retention period for preferences ended",
    "retention:inferred": "the retention period for what a model inferred ended",
    "retention:rejected": "the retention period for refused writes ended",
    "retention:revoked": "revoked preferences are not kept",
}


@register.filter
def reason_label(code) -> str:
    """Return a reason code in words: the portal's own, else the admission rule's sentence,
    else the code spelled out ("retention:custom_rule" -> "retention custom rule")."""
    code = str(code or "")
    if code in REASONS:
        return REASONS[code]
    if code in RULE_CODES:
        return RULE_CODES[code][1]
    return " ".join(code.replace(".", " ").replace(":", " ").replace("_", " ").split())


@register.filter
def reviewer_error(text) -> str:
    """A deletion's or a step's ``last_error`` as the dead letters show it to a tenant's
    reviewers: the server's paths left out (``without_paths``); the admin shows it whole."""
    return without_paths(text or "")
