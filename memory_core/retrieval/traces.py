"""Reading retrieval traces: an agent sees the traces of its own retrievals, nothing else."""

from django.db.models import Q

from memory_core.exceptions import NotFound
from memory_core.models import RetrievalTrace


def trace_get(*, principal, trace_id) -> RetrievalTrace:
    """Return the trace ``trace_id`` if ``principal`` may read it; NotFound otherwise.

    An agent reads the traces of its own retrievals (another agent's lists that agent's
    private memories), and without ``any_subject`` only those of its token's subject; any
    other principal (a reviewer, memledger itself) the traces of its tenant.
    """
    traces = RetrievalTrace.objects.filter(tenant_id=principal.tenant_id, pk=trace_id)
    if principal.actor_type == "agent":
        traces = traces.filter(agent_id=principal.agent_id)
        if not principal.any_subject:
            # Its token's subject, or none: a retrieval for a subject not yet known stores a
            # trace without one (and names no memory).
            traces = traces.filter(
                Q(subject__external_id=principal.bound_user_id or None) | Q(subject__isnull=True)
            )
    trace = traces.first()
    if trace is None:
        raise NotFound("No retrieval trace with this id.")
    return trace
