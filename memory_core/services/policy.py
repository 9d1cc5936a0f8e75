"""Versioned policy documents: one active version per tenant."""

import copy

from django.db import transaction

from memory_core.exceptions import ValidationFailed
from memory_core.models import PolicyVersion, Tenant
from memory_core.policy_check import policy_errors
from memory_core.policy_defaults import DEFAULT_POLICY


def policy_ensure(*, tenant: Tenant) -> PolicyVersion:
    """Return the tenant's active policy, creating version 1 from the defaults if none exists."""
    active = PolicyVersion.objects.filter(tenant=tenant, is_active=True).first()
    if active:
        return active
    return PolicyVersion.objects.create(
        tenant=tenant,
        version=1,
        document=copy.deepcopy(DEFAULT_POLICY),
        is_active=True,
        note="defaults",
    )


@transaction.atomic
def policy_publish(*, tenant: Tenant, document: dict, note: str = "") -> PolicyVersion:
    """Publish ``document`` as the tenant's next policy version and make it the active one.

    A document with errors (``policy_errors``) is refused (ValidationFailed, nothing changes).
    """
    errors = policy_errors(document)
    if errors:
        raise ValidationFailed(
            "The policy document is invalid; see details for each key.",
            code="invalid_policy",
            details={path: [{"code": "invalid", "message": m}] for path, m in errors.items()},
        )
    current = (
        PolicyVersion.objects.select_for_update().filter(tenant=tenant).order_by("-version").first()
    )
    PolicyVersion.objects.filter(tenant=tenant, is_active=True).update(is_active=False)
    return PolicyVersion.objects.create(
        tenant=tenant,
        version=(current.version + 1) if current else 1,
        document=document,
        is_active=True,
        note=note,
    )
