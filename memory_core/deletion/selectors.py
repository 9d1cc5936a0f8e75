"""Reads of deletion operations, scoped like every other read: tenant, then subject."""

import uuid

from django.db.models import BooleanField, F, Func, IntegerField, Prefetch, Q, QuerySet
from django.db.models.expressions import RawSQL

from memory_core.deletion.ledger import queued_operation_id
from memory_core.deletion.stores import REGISTRY
from memory_core.exceptions import NotFound
from memory_core.models import DeletionOperation, DeletionStep, Memory, Status, Subject
from memory_core.models.choices import sensitivities_up_to
from memory_core.principals import AgentPrincipal, SubjectPrincipal, require_reviewer
from memory_core.retrieval.traces import user_id_digest

# An operation an agent may see: one it asked for, or one every memory of which its grant
# reaches (their rows keep type, sensitivity and owner once scrubbed). Another's deletion of
# memories outside its grant (a private, a restricted or another type's) told it their
# number, target and times, where the memories themselves answer 404. One that keeps a
# person's digest (``user_id_sha256``: of a person known only from traces, or a row a replay
# made back) is its asker's alone: of no memories, it told every agent how many retrievals
# another made for someone it had never named (stop 64's review of the erasure from traces).
_WITHIN_GRANT = (
    "(memory_core_deletionoperation.requested_by_type = 'agent'"
    " AND memory_core_deletionoperation.requested_by_id = %s)"
    " OR memory_core_deletionoperation.user_id_sha256 = '' AND NOT EXISTS (SELECT 1"
    " FROM memory_core_memory m"
    " WHERE m.id = ANY(memory_core_deletionoperation.memory_ids)"
    " AND NOT ((m.agent_id IS NULL OR m.agent_id = %s::uuid)"
    " AND m.memory_type = ANY(%s) AND m.sensitivity = ANY(%s)))"
)


def _within_grant(principal: AgentPrincipal) -> RawSQL:
    params = [
        str(principal.agent_id),
        str(principal.agent_id),
        sorted(principal.read_types),
        sensitivities_up_to(principal.max_sensitivity),
    ]
    return RawSQL(_WITHIN_GRANT, params, output_field=BooleanField())  # noqa: S611 (constant)


def deletion_scope(principal) -> QuerySet:
    """Return the operations ``principal`` may see (``deletion_get``'s rule): every other
    answer that names an operation (a request asked again, a memory's events) names only
    these."""
    queryset = DeletionOperation.objects.filter(tenant_id=principal.tenant_id)
    if isinstance(principal, SubjectPrincipal):
        queryset = queryset.filter(subject_id=principal.subject_id)
    elif isinstance(principal, AgentPrincipal):
        queryset = _of_its_subjects(principal, queryset).filter(_within_grant(principal))
    return queryset


def _of_its_subjects(principal: AgentPrincipal, operations: QuerySet) -> QuerySet:
    """``operations`` of the subjects ``principal`` may act for (``scope_subject``), and, for
    an agent bound by a subject token, those that keep the digest of its token's user id
    (``user_id_sha256``): the erasure of that person known only from traces, whose subject
    is named by its own id, which no token names (``may_act_for_digest``). ``_within_grant``
    leaves such an operation to its asker alone."""
    scoped = principal.scope_subject(operations)
    if principal.any_subject or not principal.bound_user_id:
        return scoped
    return scoped | operations.filter(user_id_sha256=user_id_digest(principal.bound_user_id))


def step_evidence(step: DeletionStep) -> dict:
    """Return the evidence of ``step`` as API clients are answered it: without the figures a
    store every tenant shares withholds (``Store.withheld``: the evaluation step's purge
    counts, files scanned and duration). Those moved with other tenants' data: an agent that
    wrote and deleted a guessed sentence learnt from ``purged.rewritten`` whether an
    evaluation file held it. Nor the store's own record in its ``purged`` evidence
    (``Store.recorded``: the identities step's ids of admin history entries, one a login,
    tens of thousands for a large tenant). The stored step, which the admin shows, keeps
    them."""
    store = REGISTRY.get(step.store)
    withheld = store.withheld if store else frozenset()
    recorded = store.recorded if store else frozenset()
    answered = {key: value for key, value in (step.evidence or {}).items() if key not in withheld}
    if recorded and isinstance(answered.get("purged"), dict):
        purged = answered["purged"]
        answered["purged"] = {key: value for key, value in purged.items() if key not in recorded}
    return answered


def deletion_visible_ids(*, principal, ids) -> frozenset[uuid.UUID]:
    """Return those of ``ids`` (UUIDs or their strings; others are left out) that name an
    operation ``principal`` may see: one query, none for no ids."""
    wanted = set()
    for value in ids:
        try:
            wanted.add(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))
        except ValueError:
            continue
    if not wanted:
        return frozenset()
    visible = deletion_scope(principal).filter(pk__in=sorted(wanted))
    return frozenset(visible.values_list("pk", flat=True))


def _scope(principal) -> QuerySet:
    return deletion_scope(principal).prefetch_related(
        Prefetch("steps", queryset=DeletionStep.objects.order_by("id"))
    )


def _memory_count():
    """How many memory ids an operation holds, counted by the database."""
    return Func(F("memory_ids"), function="cardinality", output_field=IntegerField())


def deletion_get(*, principal, operation_id, ids: bool = True) -> DeletionOperation:
    """Return the operation with its steps and ``memory_count`` if ``principal`` may see it,
    or a queued one not made yet (``queued_deletion``); NotFound otherwise.

    Without its ``memory_ids`` unless ``ids``: the portal's progress page, and its status
    polled every second, show how many there are, and read a whole subject's tens of
    thousands of ids each time to count them.
    """
    operations = _scope(principal).annotate(memory_count=_memory_count())
    if not ids:
        operations = operations.defer("memory_ids")
    operation = operations.filter(pk=operation_id).first()
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
    memory_key), no memories and no steps yet (known without a query)."""
    target = DeletionOperation.Target.SUBJECT
    if subject.deletion_queued_key:
        target = DeletionOperation.Target.MEMORY_KEY
    operation = DeletionOperation(
        id=queued_operation_id(subject.pk, subject.deletion_queued_at),
        tenant_id=subject.tenant_id,
        subject=subject,
        target=target,
        status=QUEUED,
        requested_at=subject.deletion_queued_at,
    )
    # Its steps are none: a serializer reading them read the table for each (stop 50's audit).
    operation._prefetched_objects_cache = {"steps": DeletionStep.objects.none()}
    return operation


def _queued_subjects(principal) -> QuerySet:
    """The subjects ``principal`` may see whose deletion is queued, newest first, before the
    grant check of an agent (``_queued_within_grant``)."""
    subjects = Subject.objects.filter(
        tenant_id=principal.tenant_id, deletion_queued_at__isnull=False
    ).order_by("-deletion_queued_at", "-id")
    if isinstance(principal, SubjectPrincipal):
        return subjects.filter(pk=principal.subject_id)
    if isinstance(principal, AgentPrincipal):
        return principal.scope_subjects(subjects)
    return subjects


def queued_deletions(*, principal) -> list[DeletionOperation]:
    """Return the queued deletions (``queued_deletion``) of the subjects ``principal`` may
    see, newest first: a tenant has few at a time."""
    subjects = list(_queued_subjects(principal))
    if isinstance(principal, AgentPrincipal):
        # As a request of the same answers it: an agent whose grant does not reach every
        # memory of the subject (or of the key) gets 403 there, never the id, and so not here.
        subjects = _queued_within_grant(principal, subjects)
    return [queued_deletion(subject) for subject in subjects]


def _queued_within_grant(principal: AgentPrincipal, subjects: list[Subject]) -> list[Subject]:
    """Those of ``subjects`` whose deletion ``principal`` queued itself, or whose deletion
    takes only memories its grant reaches (the subject's, or those on the queued key): one
    query for them all (it was one a subject: stop 50's audit)."""
    others = [s for s in subjects if s.deletion_queued_by_agent_id != principal.agent_id]
    if not others:
        return subjects
    memories = Memory.objects.filter(tenant_id=principal.tenant_id, subject__in=others).exclude(
        status=Status.DELETED
    )
    outside = set(
        memories.exclude(pk__in=principal.scope_granted(memories).values("pk"))
        .values_list("subject_id", "memory_key")
        .distinct()
    )
    queued_key = {subject.pk: subject.deletion_queued_key for subject in others}
    beyond = {
        subject_id
        for subject_id, key in outside
        if not queued_key[subject_id] or key == queued_key[subject_id]
    }
    return [s for s in subjects if s.pk not in beyond]


def _queued_get(principal, operation_id) -> DeletionOperation | None:
    """The queued deletion of a subject ``principal`` may see whose id is ``operation_id``:
    the grant checked for that subject only (for each queued one, a probe of an unknown id
    cost a query a subject: stop 50's audit)."""
    for subject in _queued_subjects(principal):
        if str(queued_operation_id(subject.pk, subject.deletion_queued_at)) != str(operation_id):
            continue
        if isinstance(principal, AgentPrincipal) and not _queued_within_grant(principal, [subject]):
            return None
        return queued_deletion(subject)
    return None


def deletion_list(*, principal, status: str | None = None, steps: bool = True) -> QuerySet:
    """Return the operations ``principal`` may see, newest first, with their steps (one
    query for them all) unless ``steps`` is false: the portal's deletions page shows none,
    and read every step of the page's operations.

    Without their ``memory_ids`` (a subject's operation may hold tens of thousands): each
    carries ``memory_count`` instead, counted by the database.
    """
    queryset = (
        (_scope(principal) if steps else deletion_scope(principal))
        .defer("memory_ids")
        .annotate(memory_count=_memory_count())
        .order_by("-requested_at", "-id")
    )
    if status:
        queryset = queryset.filter(status=status)
    return queryset


def deletion_dead_letters(*, principal) -> QuerySet:
    """Return the tenant's operations that gave up (dead-lettered or failed), for reviewers,
    the most recent first."""
    require_reviewer(
        principal, message="No dead-lettered deletions for this login.", or_system=True
    )
    return (
        _scope(principal)
        .filter(Q(dead_lettered_at__isnull=False) | Q(status=DeletionOperation.State.FAILED))
        .select_related("subject")
        .order_by(F("dead_lettered_at").desc(nulls_last=True), "-requested_at", "-id")
    )
