"""Reads of deletion operations, scoped like every other read: tenant, then subject."""

from django.db.models import F, Func, IntegerField, Prefetch, Q, QuerySet

from memory_core.deletion.ledger import queued_operation_id
from memory_core.exceptions import NotFound, PermissionDenied
from memory_core.models import DeletionOperation, DeletionStep, Subject
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
    """Return the operation with its steps if ``principal`` may see it, or a queued one not
    made yet (``queued_deletion``); NotFound otherwise."""
    operation = _scope(principal).filter(pk=operation_id).first()
    if operation is None:
        operation = _queued_get(principal, operation_id)
    if operation is None:
        raise NotFound("No deletion operation with this id.")
    return operation


# The status of a deletion (a whole subject's or a key's) queued for a worker and not made
# yet (never stored: the worker's request creates the operation, as pending, under the same
# id).
QUEUED = "queued"


def queued_deletion(subject: Subject) -> DeletionOperation:
    """Return, unsaved, the operation ``subject``'s queued deletion will be: its id
    (``ledger.queued_operation_id``), status ``queued``, its target (the subject, or a
    memory_key), no memories and no steps yet."""
    target = DeletionOperation.Target.SUBJECT
    if subject.deletion_queued_key:
        target = DeletionOperation.Target.MEMORY_KEY
    return DeletionOperation(
        id=queued_operation_id(subject.pk, subject.deletion_queued_at),
        tenant_id=subject.tenant_id,
        subject=subject,
        target=target,
        status=QUEUED,
        requested_at=subject.deletion_queued_at,
    )


def queued_deletions(*, principal) -> list[DeletionOperation]:
    """Return the queued deletions (``queued_deletion``) of the subjects ``principal`` may
    see, newest first: a tenant has few at a time."""
    subjects = Subject.objects.filter(
        tenant_id=principal.tenant_id, deletion_queued_at__isnull=False
    ).order_by("-deletion_queued_at", "-id")
    if isinstance(principal, SubjectPrincipal):
        subjects = subjects.filter(pk=principal.subject_id)
    elif isinstance(principal, AgentPrincipal):
        subjects = principal.scope_subjects(subjects)
    return [queued_deletion(subject) for subject in subjects]


def _queued_get(principal, operation_id) -> DeletionOperation | None:
    """The queued deletion of a subject ``principal`` may see whose id is ``operation_id``."""
    for queued in queued_deletions(principal=principal):
        if str(queued.id) == str(operation_id):
            return queued
    return None


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
