"""Retrieval traces: an agent reads the traces of its own retrievals, nothing else, and
reports which of their memories its final answers and tool calls used."""

import hashlib
import re
import uuid

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.admission.candidate import (
    HARD_MAX_ID_CHARS,
    ID_PATTERN,
    INVALID_ID,
    written_and_words,
)
from memory_core.admission.policy import REFUSING, describe, id_codes
from memory_core.exceptions import Conflict, NotFound, ValidationFailed
from memory_core.models import Memory, RetrievalTrace, Status
from memory_core.retrieval.budget import STAGE as BUDGET_STAGE
from memory_core.text import identifier

USAGE_KINDS = ("answer", "tool_call")
# Per trace, as its agent sees it: one retrieval feeds one task's answers and tool calls.
MAX_USAGE_REPORTS = 50
_REFERENCE = re.compile(ID_PATTERN)


def trace_get(*, principal, trace_id) -> RetrievalTrace:
    """Return the trace ``trace_id`` if ``principal`` may read it; NotFound otherwise.

    An agent reads the traces of its own retrievals (another agent's lists that agent's
    private memories), and without ``any_subject`` only those of its token's subject; any
    other principal (a reviewer, memledger itself) the traces of its tenant.

    An agent's trace names only the memories it may read now (``_hidden_ids``).
    """
    trace = _one(_readable(principal, RetrievalTrace.objects.filter(pk=trace_id)))
    return _as_the_agent_sees_it(trace, _hidden_ids(principal, trace))


# What a trace's document counts over its memories: each figure would still measure one the
# agent may no longer read (the prompt's tokens, the length of its words).
_FIGURES_OVER_MEMORIES = ("counts", "candidates_by_store")


def _as_the_agent_sees_it(trace: RetrievalTrace, hidden: set[str]) -> RetrievalTrace:
    """``trace``, unsaved, as an agent that may no longer read ``hidden`` is answered it: the
    ids left out (``trace_without``) and, if any was, the figures that count them too: the
    prompt's tokens (null), the document's ``counts`` and ``candidates_by_store``. With them,
    the tokens told the hidden memories' length to a token (a finding of stop 47's audit).
    And the selected items' figures measured against the others (``_unscored``), once one of
    its memories is hidden or deleted."""
    trace = trace_without(trace, hidden)
    if hidden:
        trace.prompt_tokens = None
        stages = {k: v for k, v in trace.stages.items() if k not in _FIGURES_OVER_MEMORIES}
        if "tokens" in stages:
            stages["tokens"] = {**stages["tokens"], "prompt_tokens": None}
        trace.stages = stages
    if hidden or (isinstance(trace.stages, dict) and trace.stages.get("deleted_since")):
        trace = _unranked(trace)
    return trace


def _unranked(trace: RetrievalTrace) -> RetrievalTrace:
    """``trace``, unsaved, as answered once one of its memories is hidden from the agent or
    deleted: without what ranked its items by score, the hidden memory perhaps among them.

    Each selected item's score and redundancy penalty go (``_unscored``), and their order
    with them: the items are answered by section, as the package had them, then by id, and
    ``selected_ids`` by id. In score order, with the components each item keeps and the
    policy's weights (the defaults are public), two items of a section told which of them
    the penalty lowered the more, and by how much at least. The budget stage's rejections
    lose their reason, measured against the items chosen above them: ``redundant_with_
    selected`` told that one of them was within ``diversity_cosine`` of it, and
    ``over_token_budget`` how long at least they were (what the null prompt tokens keep
    from it: stop 47's audit). Every rejection is answered by stage, then id, the budget's
    having been in score order. Stop 69's review of the traces' audit."""
    trace.selected_ids = sorted(trace.selected_ids, key=str)
    stages = dict(trace.stages)
    selected = stages.get("selected")
    if isinstance(selected, list) and all(isinstance(item, dict) for item in selected):
        sections = {}
        for item in selected:
            sections.setdefault(str(item.get("section")), len(sections))
        stages["selected"] = [
            _unscored(item)
            for item in sorted(
                selected, key=lambda i: (sections[str(i.get("section"))], str(i.get("id")))
            )
        ]
    rejections = stages.get("rejections")
    if isinstance(rejections, list) and all(isinstance(r, dict) for r in rejections):
        order = {}
        for rejection in rejections:
            order.setdefault(str(rejection.get("stage")), len(order))
        stages["rejections"] = [
            {**r, "reason": None} if r.get("stage") == BUDGET_STAGE else r
            for r in sorted(
                rejections, key=lambda r: (order[str(r.get("stage"))], str(r.get("id")))
            )
        ]
    trace.stages = stages
    return trace


def _unscored(item: dict) -> dict:
    """A selected item of a trace without the figures measured against the candidates ranked
    above it: ``components.redundancy_penalty`` (how close its embedding was to the closest
    better one of its type, ``rerank._redundancy``) and the ``score`` it is taken from (null,
    both). Once one of the trace's memories is hidden from the agent or deleted, the penalty
    may be that memory's: with the item's own components it told that memory's cosine to the
    item (and a penalty of 0, that none of its type above it came close), which nothing else
    of the trace tells (stop 68's audit of traces). The trace does not say whose penalty it
    was, so every item's goes; the item's own components stay. The stored row keeps them until
    a memory of it is deleted: the deletion's scrub nulls them there too (migration 0056)."""
    unscored = {**item, "score": None}
    if isinstance(item.get("components"), dict):
        unscored["components"] = {**item["components"], "redundancy_penalty": None}
    return unscored


def user_id_digest(user_id: str) -> str:
    """The SHA-256 (hex) of a user id as every path looks it up (``text.identifier``: trimmed,
    in NFC): how the trace of a retrieval for a user not known yet names them
    (``RetrievalTrace.user_id_sha256``), never answered to anyone, and the lock that
    retrieval holds until it commits (``locks.unknown_user_lock_name``). The retrieval's id, a
    subject token's and a subject's external id, each in its own spelling, give one digest."""
    return hashlib.sha256(identifier(user_id).encode("utf-8", "surrogatepass")).hexdigest()


def unknown_user_traces(*, principal, user_id: str):
    """Return the traces ``principal`` may read (``trace_get``) of the retrievals for
    ``user_id`` made while no subject named them (by their id's digest): an agent's own only,
    so what it is answered about them tells nothing of another agent's retrievals."""
    traces = RetrievalTrace.objects.filter(
        subject__isnull=True, user_id_sha256=user_id_digest(user_id)
    )
    return _readable(principal, traces)


def _readable(principal, traces):
    """``traces`` limited to those ``principal`` may read (``trace_get``)."""
    traces = traces.filter(tenant_id=principal.tenant_id)
    if principal.actor_type == "agent":
        traces = traces.filter(agent_id=principal.agent_id)
        if not principal.any_subject:
            traces = _of_its_tokens_subject(principal, traces)
    return traces


def _of_its_tokens_subject(principal, traces):
    """``traces`` limited to those of the subject ``principal``'s token names: without a token
    none. A retrieval for a user not known yet stores a trace without a subject, named by the
    digest of their id: every such trace passed, whatever the token named or without one, and
    told the other person's task, project and environment (stop 58's audit of
    authentication)."""
    if not principal.bound_user_id:
        return traces.none()
    return traces.filter(
        Q(subject__external_id=principal.bound_user_id)
        | Q(subject__isnull=True, user_id_sha256=user_id_digest(principal.bound_user_id))
    )


def _hidden_ids(principal, trace: RetrievalTrace) -> set[str]:
    """The ids ``trace`` cites that ``principal``, an agent, may no longer read: its grant
    narrowed, the subject's deletion is queued, or the memory is deleted and the deletion's
    worker has not scrubbed the trace yet (until then the agent was answered its id, its
    content hash and the package's prompt tokens: stop 62's audit of deletion). Any other
    principal reads every id.

    A trace lists what its retrieval found, all of it readable then. What the agent has lost
    sight of since is left out of what it is shown, as a memory's answer leaves out a version
    it may not see; the stored trace keeps every id, for deletion to purge by and for
    reviewers.
    """
    if principal.actor_type != "agent" or not trace.cited_ids:
        return set()
    readable = set(
        Memory.objects.visible_to(principal)
        .filter(pk__in=trace.cited_ids)
        .exclude(status=Status.DELETED)
        .values_list("pk", flat=True)
    )
    return {str(memory_id) for memory_id in trace.cited_ids if memory_id not in readable}


def trace_without(trace: RetrievalTrace, hidden: set[str]) -> RetrievalTrace:
    """``trace``, unsaved, with the ids in ``hidden`` left out of every list that names them;
    ``hidden_count`` says how many; a usage report left citing none is left out whole. What an
    agent may no longer read is left out so (``trace_get``); a deleted memory is scrubbed out
    of the stored rows by the same rules in SQL (migrations 0025 and 0033,
    ``deletion.stores.TracesStore``; a test compares the two)."""
    trace.hidden_count = len(hidden)
    if not hidden:
        return trace

    def seen(ids):
        return [memory_id for memory_id in ids if str(memory_id) not in hidden]

    trace.selected_ids = seen(trace.selected_ids)
    trace.cited_ids = seen(trace.cited_ids)
    trace.used_ids = seen(trace.used_ids)
    trace.usage = _usage_without(trace.usage, hidden)
    trace.stages = _stages_without(trace.stages, hidden)
    return trace


def _usage_without(usage: list[dict], hidden: set[str]) -> list[dict]:
    """The usage reports ``usage`` without the ids in ``hidden``."""
    seen = []
    for report in usage:
        memory_ids = [i for i in report["memory_ids"] if str(i) not in hidden]
        # A report left citing none of its memories is about them only: its reference (the
        # agent's name for the answer that used them) goes with them. One that cited none to
        # begin with stays (migration 0033 does the same in SQL).
        if memory_ids or not report["memory_ids"]:
            seen.append({**report, "memory_ids": memory_ids})
    return seen


def _stages_without(stages: dict, hidden: set[str]) -> dict:
    """The trace document ``stages`` (``pipeline._trace_document``) without the memory ids in
    ``hidden``: their candidates, rejections, merges and selected items left out, a conflict's
    hidden candidates and winner too (the conflict itself left out once none is left). A
    list the document does not hold (a trace written before it existed) stays absent."""
    stages = dict(stages)
    for name in ("candidates", "rejections"):
        if name in stages:
            stages[name] = [row for row in stages[name] if row["id"] not in hidden]
    if "selected" in stages:
        stages["selected"] = [
            {**item, "merged_from": [i for i in item.get("merged_from", []) if i not in hidden]}
            for item in stages["selected"]
            if item["id"] not in hidden
        ]
    if "dedup_merges" in stages:
        stages["dedup_merges"] = [
            merge
            for merge in stages["dedup_merges"]
            if merge["kept"] not in hidden and merge["merged"] not in hidden
        ]
    if "conflicts" in stages:
        conflicts = (_conflict_without(conflict, hidden) for conflict in stages["conflicts"])
        stages["conflicts"] = [conflict for conflict in conflicts if conflict is not None]
    return stages


def _conflict_without(conflict: dict, hidden: set[str]) -> dict | None:
    candidate_ids = [i for i in conflict.get("candidate_ids", []) if i not in hidden]
    if not candidate_ids:
        return None
    winner = conflict.get("winner_id")
    return {
        **conflict,
        "candidate_ids": candidate_ids,
        "winner_id": None if winner in hidden else winner,
    }


def _one(traces) -> RetrievalTrace:
    trace = traces.first()
    if trace is None:
        raise NotFound("No retrieval trace with this id.")
    return trace


@transaction.atomic
def trace_usage_record(
    *, principal, trace_id, kind: str, reference: str, memory_ids: list[uuid.UUID]
) -> RetrievalTrace:
    """Record that the agent's final answer or tool call ``reference`` used ``memory_ids`` of
    the trace's package (the seed's trace question "which final answer or tool call used the
    memory?").

    Only the agent whose retrieval it is reports (the trace of any other is ``NotFound``),
    and only memories the answer handed out (``selected_ids``: its items and its
    clarifications' candidates, whose content it held too): any other id is
    ``not_selected``. No text is kept: ``reference`` names the answer or the call (a message
    id, a tool's name), an id (``ID_PATTERN``, at most ``HARD_MAX_ID_CHARS``; ``invalid_id``
    otherwise). Reports accumulate, at most ``MAX_USAGE_REPORTS`` a trace as the agent sees
    it (``too_many_reports``; one citing only memories it may no longer read is not shown to
    it, nor counted); ``used_ids`` is the union of their ids. A memory deleted since is
    no longer in the trace (``not_selected``); a trace its subject's deletion removed is gone
    (``NotFound``).
    """
    if kind not in USAGE_KINDS:
        raise ValidationFailed(f"kind must be one of {', '.join(USAGE_KINDS)}.")
    if reference and (len(reference) > HARD_MAX_ID_CHARS or not _REFERENCE.fullmatch(reference)):
        # Kept in the trace and answered as sent: an id, never a sentence (an answer's text
        # stayed in the trace, readable, whatever memory it quoted).
        raise ValidationFailed(
            "The usage report's reference is not an id.",
            details={"reference": [{"code": "invalid_id", "message": INVALID_ID}]},
        )
    # Read as a write's ids are ("Ignore_all_previous_instructions_and_..." as a task id is
    # refused; as a reference it was kept and answered: stop 47's audit).
    refused = (
        [c for c in id_codes([written_and_words(reference)]) if c in REFUSING] if reference else []
    )
    if refused:
        raise ValidationFailed(
            "The usage report's reference was refused.",
            details={
                "reference": [
                    {
                        "code": "refused",
                        "message": f"{describe(refused)} ({', '.join(refused)}) It would be "
                        "kept in the trace, which is answered again.",
                    }
                ]
            },
        )
    trace = _one(
        _readable(principal, RetrievalTrace.objects.filter(pk=trace_id)).select_for_update(
            of=("self",)
        )
    )
    hidden = _hidden_ids(principal, trace)
    selected = {memory_id for memory_id in trace.selected_ids if str(memory_id) not in hidden}
    unknown = sorted(str(memory_id) for memory_id in set(memory_ids) - selected)
    if unknown:
        raise ValidationFailed(
            "The trace's package did not hold these memories: report only what it handed out.",
            details={
                "memory_ids": [
                    {
                        "code": "not_selected",
                        "message": f"Memory {memory_id} was not in this retrieval's package (or "
                        "the agent may no longer read it); report only the memories it held.",
                    }
                    for memory_id in unknown
                ]
            },
        )
    # The reports the agent sees, as it is answered them: counted with those it no longer sees
    # (each citing only memories it lost sight of), the 409 told an agent shown fewer than 50
    # that such reports exist (stop 68's audit of traces). The row stays bounded all the same:
    # a report names memories the agent reads then, and every report naming a memory it reads
    # is one it sees, so at most 50 reports name any one memory of ``selected_ids`` and at
    # most 50 name none: at most 50 x (len(selected_ids) + 1) reports, 50 x len(selected_ids)
    # ids, whatever is hidden, shown again or deleted meanwhile.
    if len(_usage_without(trace.usage, hidden)) >= MAX_USAGE_REPORTS:
        raise Conflict(
            f"This trace already holds {MAX_USAGE_REPORTS} usage reports.",
            code="too_many_reports",
        )
    reported = sorted({str(memory_id) for memory_id in memory_ids})
    trace.usage = [
        *trace.usage,
        {
            "kind": kind,
            "reference": reference,
            "memory_ids": reported,
            # As every other time the API writes (DRF's form): "Z", not "+00:00".
            "reported_at": timezone.now().isoformat().replace("+00:00", "Z"),
        },
    ]
    trace.used_ids = sorted({*trace.used_ids, *(uuid.UUID(memory_id) for memory_id in reported)})
    trace.save(update_fields=["usage", "used_ids"])
    return _as_the_agent_sees_it(trace, hidden)
