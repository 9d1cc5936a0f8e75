"""Reading retrieval traces: a tenant sees its own, and nothing else exists for it."""

from memory_core.exceptions import NotFound
from memory_core.models import RetrievalTrace


def trace_get(*, principal, trace_id) -> RetrievalTrace:
    """Return the trace ``trace_id`` of the principal's tenant; NotFound otherwise."""
    trace = RetrievalTrace.objects.filter(tenant_id=principal.tenant_id, pk=trace_id).first()
    if trace is None:
        raise NotFound("No retrieval trace with this id.")
    return trace
