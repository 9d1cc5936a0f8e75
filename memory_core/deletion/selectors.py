"""Reads of deletion operations, scoped like every other read: tenant, then subject."""

from django.db.models import F, Func, IntegerField, Prefetch, Q, QuerySet

from memory_core.exceptions import NotFound, PermissionDenied
from memory_core.models import DeletionOperation, DeletionStep
from memory_core.principals import (
    AgentPrincipal,
    ReviewerPrincipal,
    SubjectPrincipal,
    SystemPrincipal,
)


def _scope(principal) -> QuerySet:
    queryset = DeletionOperation.objects.filter(tenant_id=principal.tenant_id)
    if isinstance(principal, SubjectPrincipal):
        queryset = queryset.filter(subject_id=principal.subject_id)
    elif isinstance(principal, AgentPrincipal):
        queryset = principal.scope_subject(queryset)
    return queryset.prefetch_related(
        Prefetch("steps", queryset=DeletionStep.objects.order_by("id"))
    )


def deletion_get(*, principal, operation_id) -> DeletionOperation:
    """Return the operation with its steps if ``principal`` may see it; NotFound otherwise."""
    operation = _scope(principal).filter(pk=operation_id).first()
    if operation is None:
        raise NotFound("No deletion operation with this id.")
    return operation


def deletion_list(*, principal, status: str | None = None) -> QuerySet:
    """Return the operations ``principal`` may see, newest first.

    Without their ``memory_ids`` (a subject's operation may hold tens of thousands): each
    carries ``memory_count`` instead, counted by the database.
    """
    queryset = (
        _scope(principal)
        .defer("memory_ids")
        .annotate(
            memory_count=Func(F("memory_ids"), function="cardinality", output_field=IntegerField())
        )
        .order_by("-requested_at", "-id")
    )
    if status:
        queryset = queryset.filter(status=status)
    return queryset


def deletion_dead_letters(*, principal) -> QuerySet:
    """Return the tenant's operations that gave up (dead-lettered or failed), for reviewers,
    the most recent first."""
    if not isinstance(principal, (ReviewerPrincipal, SystemPrincipal)):
        raise PermissionDenied("Only reviewers see dead-lettered deletions.")
    return (
        _scope(principal)
        .filter(Q(dead_lettered_at__isnull=False) | Q(status=DeletionOperation.State.FAILED))
        .select_related("subject")
        .order_by(F("dead_lettered_at").desc(nulls_last=True), "-requested_at")
    )
