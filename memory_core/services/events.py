"""Append-only memory events."""

from memory_core.models import MemoryEvent


def event_record(
    *,
    memory,
    action: str,
    principal,
    reason_code: str = "",
    policy_version: int | None = None,
    details: dict | None = None,
) -> MemoryEvent:
    """Append one event for ``memory`` (ids and reasons only, never content)."""
    return MemoryEvent.objects.create(
        tenant_id=memory.tenant_id,
        memory_id=memory.id,
        action=action,
        actor_type=principal.actor_type,
        actor_id=principal.actor_id,
        reason_code=reason_code,
        policy_version=policy_version if policy_version is not None else memory.policy_version,
        details=details or {},
    )
