"""Reads of a tenant's policy."""

from memory_core.models import PolicyVersion
from memory_core.policy_defaults import retention_section
from memory_core.retrieval.policy import RetrievalPolicy


def active_retention(tenant_id) -> dict:
    """Return the retention section of the tenant's active policy ({} without one; a key the
    document lacks at its default: ``retention_section``), as ``policy_check.memory_expiry``
    reads it. One query."""
    document = (
        PolicyVersion.objects.filter(tenant_id=tenant_id, is_active=True)
        .values_list("document", flat=True)
        .first()
    )
    return retention_section(document)


def active_retrieval_policy(tenant_id) -> RetrievalPolicy:
    """Return the tenant's active policy as retrieval reads it (its defaults without one:
    ``RetrievalPolicy.from_document``). One query."""
    active = (
        PolicyVersion.objects.filter(tenant_id=tenant_id, is_active=True)
        .values_list("document", "version")
        .first()
    )
    return RetrievalPolicy.from_document(*(active or (None, None)))
