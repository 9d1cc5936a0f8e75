"""Append-only records: memory events, and the agents' requests the API refused."""

from memory_core.models import AccessDenial, MemoryEvent
from memory_core.rls import tenant_atomic


def event_record(**fields) -> MemoryEvent:
    """Append one event for ``memory`` (ids and reasons only, never content): the event
    ``event_build`` makes of ``fields``."""
    event = event_build(**fields)
    event.save(force_insert=True)
    return event


def event_build(
    *,
    memory,
    action: str,
    principal,
    reason_code: str = "",
    policy_version: int | None = None,
    details: dict | None = None,
) -> MemoryEvent:
    """One event for ``memory`` (ids and reasons only, never content), unsaved: a caller with
    many inserts them in one statement (``bulk_create``), ``event_record`` one."""
    return MemoryEvent(
        tenant_id=memory.tenant_id,
        memory_id=memory.id,
        action=action,
        actor_type=principal.actor_type,
        actor_id=principal.actor_id,
        reason_code=reason_code,
        policy_version=policy_version if policy_version is not None else memory.policy_version,
        details=details or {},
    )


def access_denial_record(*, principal, code: str, endpoint: str) -> AccessDenial:
    """Record that ``principal`` (an agent) was refused ``endpoint`` with ``code``, in a
    transaction of its own: the refused request's transaction is rolled back, this is not."""
    with tenant_atomic(principal.tenant_id):
        return AccessDenial.objects.create(
            tenant_id=principal.tenant_id,
            agent_id=principal.agent_id,
            code=code[:64],
            endpoint=endpoint[:64],
        )
