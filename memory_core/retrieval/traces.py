"""Retrieval traces: an agent reads the traces of its own retrievals, nothing else, and
reports which of their memories its final answers and tool calls used."""

import uuid

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.exceptions import Conflict, NotFound, ValidationFailed
from memory_core.models import RetrievalTrace

USAGE_KINDS = ("answer", "tool_call")
MAX_USAGE_REPORTS = 50  # per trace: one retrieval feeds one task's answers and tool calls


def trace_get(*, principal, trace_id) -> RetrievalTrace:
    """Return the trace ``trace_id`` if ``principal`` may read it; NotFound otherwise.

    An agent reads the traces of its own retrievals (another agent's lists that agent's
    private memories), and without ``any_subject`` only those of its token's subject; any
    other principal (a reviewer, memledger itself) the traces of its tenant.
    """
    return _one(_readable(principal, RetrievalTrace.objects.filter(pk=trace_id)))


def _readable(principal, traces):
    """``traces`` limited to those ``principal`` may read (``trace_get``)."""
    traces = traces.filter(tenant_id=principal.tenant_id)
    if principal.actor_type == "agent":
        traces = traces.filter(agent_id=principal.agent_id)
        if not principal.any_subject:
            # Its token's subject, or none: a retrieval for a subject not yet known stores a
            # trace without one (and names no memory).
            traces = traces.filter(
                Q(subject__external_id=principal.bound_user_id or None) | Q(subject__isnull=True)
            )
    return traces


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
    and only memories the package held: an id the retrieval did not select is
    ``not_selected``. No text is kept: ``reference`` names the answer or the call (a message
    id, a tool's name). Reports accumulate, at most ``MAX_USAGE_REPORTS`` a trace
    (``too_many_reports``); ``used_ids`` is the union of their ids. A trace that a memory's
    deletion purged is gone, and so is the report's target (``NotFound``).
    """
    if kind not in USAGE_KINDS:
        raise ValidationFailed(f"kind must be one of {', '.join(USAGE_KINDS)}.")
    trace = _one(
        _readable(principal, RetrievalTrace.objects.filter(pk=trace_id)).select_for_update(
            of=("self",)
        )
    )
    selected = set(trace.selected_ids)
    unknown = sorted(str(memory_id) for memory_id in set(memory_ids) - selected)
    if unknown:
        raise ValidationFailed(
            "The trace's package did not hold these memories: report only what it selected.",
            details={"memory_ids": [{"code": "not_selected", "message": ", ".join(unknown)}]},
        )
    if len(trace.usage) >= MAX_USAGE_REPORTS:
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
            "reported_at": timezone.now().isoformat(),
        },
    ]
    trace.used_ids = sorted({*trace.used_ids, *(uuid.UUID(memory_id) for memory_id in reported)})
    trace.save(update_fields=["usage", "used_ids"])
    return trace
