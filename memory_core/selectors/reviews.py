"""Reads of the reviewer queue, scoped to the reviewer's tenant."""

from memory_core.exceptions import NotFound
from memory_core.models import Memory, PortalMembership, ReviewItem, Status
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
    """Return the review items of the reviewer's tenant, oldest first (a queue).

    The open queue leaves out a write deleted while it waited (its deletion's worker may not
    have closed the item yet), as the portal's queue does (``review_queue``): nothing can be
    decided on it (``review_closed``), and it was listed under the deleted write's key."""
    require_reviewer(principal, message="No review queue for this principal.")
    # The item's memory is shown with its subject's external id (a query an item otherwise).
    queryset = ReviewItem.objects.filter(tenant_id=principal.tenant_id).select_related(
        "subject", "memory", "memory__subject"
    )
    if state:
        queryset = queryset.filter(state=state)
    if state == ReviewItem.State.OPEN:
        queryset = queryset.exclude(memory__status=Status.DELETED)
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


def review_approval_conflict(*, principal, item: ReviewItem) -> ReviewItem | None:
    """Return the conflict an approved write stands in beside its key's head, or None.

    Of lower authority than the head, the approval put it beside the head in an open
    conflict (opened, or joined); as the next version it supersedes the head, and a conflict
    that then names it is the head's, followed to its successor, not one the approval made.
    """
    require_reviewer(principal, message="No review item with this id.")
    memory = Memory.objects.filter(pk=item.memory_id, tenant_id=principal.tenant_id).first()
    if memory is None or memory.supersedes_id is not None:
        return None
    return (
        ReviewItem.objects.filter(
            tenant_id=principal.tenant_id,
            kind=ReviewItem.Kind.CONFLICT,
            state=ReviewItem.State.OPEN,
            candidate_ids__contains=[memory.pk],
        )
        .order_by("created_at", "id")
        .first()
    )
