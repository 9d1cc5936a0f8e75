"""Reads of a tenant's policy."""

from memory_core.models import PolicyVersion
from memory_core.policy_defaults import stored_section


def active_retention(tenant_id) -> dict:
    """Return the retention section of the tenant's active policy ({} without one, or for a
    document that holds none), as ``policy_check.memory_expiry`` reads it. One query."""
    document = (
        PolicyVersion.objects.filter(tenant_id=tenant_id, is_active=True)
        .values_list("document", flat=True)
        .first()
    )
    return stored_section(document, "retention")
