"""Reads of the reviewer queue, scoped to the reviewer's tenant."""

from memory_core.exceptions import NotFound
from memory_core.models import PortalMembership, ReviewItem
from memory_core.principals import ReviewerPrincipal, require_reviewer


def reviewer_principal_for(user) -> ReviewerPrincipal | None:
    """Return the ReviewerPrincipal of a logged-in portal ``user``, or None if not a reviewer."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    membership = PortalMembership.objects.filter(
        user_id=user.pk, role=PortalMembership.Role.REVIEWER, tenant__deleted_at=None
    ).first()
    if membership is None:
        return None
    return ReviewerPrincipal(tenant_id=membership.tenant_id, user_id=user.pk)


def review_list(*, principal, state: str = "open", kind: str = ""):
    """Return the review items of the reviewer's tenant, oldest first (a queue)."""
    require_reviewer(principal, message="No review queue for this principal.")
    # The item's memory is shown with its subject's external id (a query an item otherwise).
    queryset = ReviewItem.objects.filter(tenant_id=principal.tenant_id).select_related(
        "subject", "memory", "memory__subject"
    )
    if state:
        queryset = queryset.filter(state=state)
    if kind:
        queryset = queryset.filter(kind=kind)
    return queryset.order_by("created_at", "id")


def review_get(*, principal, item_id) -> ReviewItem:
    """Return the review item ``item_id`` of the reviewer's tenant; NotFound otherwise."""
    require_reviewer(principal, message="No review item with this id.")
    item = (
        ReviewItem.objects.filter(pk=item_id, tenant_id=principal.tenant_id)
        .select_related("subject", "memory", "memory__subject")
        .first()
    )
    if item is None:
        raise NotFound("No review item with this id.")
    return item
