"""Reading retrieval traces: a tenant sees its own, and nothing else exists for it."""

from memory_core.exceptions import NotFound
from memory_core.models import RetrievalTrace


def trace_get(*, principal, trace_id) -> RetrievalTrace:
    """Return the trace ``trace_id`` of the principal's tenant (and, for an agent bound to one
    subject, of that subject); NotFound otherwise."""
    traces = RetrievalTrace.objects.filter(tenant_id=principal.tenant_id, pk=trace_id)
    scope_subject = getattr(principal, "scope_subject", None)
    if scope_subject is not None:  # an agent without any_subject: its token's subject only
        traces = scope_subject(traces)
    trace = traces.first()
    if trace is None:
        raise NotFound("No retrieval trace with this id.")
    return trace
