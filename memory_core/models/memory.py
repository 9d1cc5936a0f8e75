"""The memory record: one row per remembered item, with provenance, scope and lifecycle."""

import uuid

from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from memory_core.environments import (
    ENVIRONMENT_REGEX,
    MAX_ENVIRONMENT_CHARS,
    validate_stored_environment,
)
from memory_core.text import BIDI_CONTROLS, BIDI_CONTROLS_MESSAGE, format_scope, identifier

from .choices import (
    TYPE_CLASS,
    Authority,
    Consent,
    MemoryClass,
    MemoryType,
    ScopeKind,
    Sensitivity,
    SourceType,
    Status,
    choices_check,
)
from .fields import EmbeddingField
from .tenancy import Agent, Subject, Tenant

EMBEDDING_DIMENSIONS = 384

# Rows that are proposed (awaiting review or refused) are not links of a chain yet.
PROPOSED_STATUSES = (Status.PENDING_APPROVAL, Status.REJECTED)
# Statuses whose rows expire at their valid_until (the retention sweep's memories_expire).
LIVE_STATUSES = (Status.ACTIVE, Status.PENDING_APPROVAL)
# Statuses that can never be shown to a model.
RETIRED_STATUSES = (Status.SUPERSEDED, Status.REVOKED, Status.EXPIRED, Status.DELETED)
# Statuses of a memory that was in use (``Memory.admitted``), and of one that may or may not
# have been: a write revoked, expired or deleted while it waited for a reviewer never was.
IN_USE_STATUSES = (Status.ACTIVE, Status.SUPERSEDED)
ENDED_STATUSES = (Status.REVOKED, Status.EXPIRED, Status.DELETED)


class MemoryQuerySet(models.QuerySet):
    """Memory queries, always entered through a tenant scope."""

    def visible_to(self, principal) -> "MemoryQuerySet":
        """Return the memories ``principal`` may see: its tenant, and its grant or subject.

        Every selector, viewset and portal view starts here. Anything outside the result is
        answered as "not found", exactly like an id that does not exist.
        """
        return principal.scope_memories(self.filter(tenant_id=principal.tenant_id))

    def active(self, now=None) -> "MemoryQuerySet":
        """Return memories that are active and inside their validity interval."""
        now = now or timezone.now()
        return self.filter(status=Status.ACTIVE, valid_from__lte=now).filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=now)
        )

    def past_end(self, now=None) -> "MemoryQuerySet":
        """Return the live rows (active, or waiting for a reviewer) past their valid_until:
        expired at ``now``, though the retention sweep may not have marked them so yet."""
        return self.filter(past_end_condition(now or timezone.now()))

    def not_past_end(self, now=None) -> "MemoryQuerySet":
        """Return the rows ``past_end`` leaves out."""
        return self.exclude(past_end_condition(now or timezone.now()))

    def not_ended(self, use) -> "MemoryQuerySet":
        """Return the rows still in use under ``use`` (a ``policy_check.InUse``, the tenant's
        retention at a moment) if live: neither past their valid_until (``not_past_end``)
        nor past their class's retention (``overdue_condition``), the rule retrieval leaves
        rows out by and the sweep deletes them by, though they are stored "active" still."""
        rows = self.not_past_end(use.now)
        overdue = overdue_condition(use.cutoffs)
        return rows if overdue is None else rows.exclude(overdue)


def overdue_condition(cutoffs) -> Q | None:
    """Return the condition "past its class's retention" under ``cutoffs`` (the
    ``policy_check.RetentionCutoff`` rules at a moment), or None when nothing is limited:
    each rule as the sweep deletes by it (``deletion.retention._rules``) and retrieval leaves
    it out (``retrieval.candidates.retention_filter``)."""
    condition = None
    for rule in cutoffs:
        term = Q(**{rule.column: rule.value, "created_at__lt": rule.cutoff})
        condition = term if condition is None else condition | term
    return condition


def past_end_condition(now) -> Q:
    """Return the condition "live, but past its valid_until at ``now``": the one spelling of
    the rule that ``Memory.status_at`` applies to a row, the retention sweep expires by
    (``due_to_expire``) and the portal's lists sort by. ``valid_until IS NOT NULL`` is spelled
    out so that the sweep's query matches the partial index ``memory_live_expiry``."""
    return Q(status__in=LIVE_STATUSES, valid_until__isnull=False, valid_until__lte=now)


def out_of_use_condition(use) -> Q:
    """Return the condition "live, but out of use under ``use``" (a ``policy_check.InUse``):
    past its valid_until (``past_end_condition``) or its class's retention
    (``overdue_condition``), what ``MemoryQuerySet.not_ended`` leaves out of the live rows."""
    ended = past_end_condition(use.now)
    overdue = overdue_condition(use.cutoffs)
    return ended if overdue is None else ended | (Q(status__in=LIVE_STATUSES) & overdue)


MAX_SCOPE_REF_CHARS = 200  # Memory.scope_ref's length


def held_apart(memories, now=None) -> bool:
    """Return whether the ones of ``memories`` in use at ``now`` (``Memory.status_at``) each
    hold in a place of their own (scope and environment): else a conflict's "keep both" hands
    agents all of them together, which the conflicts page says before a reviewer chooses it."""
    now = now or timezone.now()
    places = [memory.place for memory in memories if memory.status_at(now) == Status.ACTIVE]
    return len(set(places)) == len(places)


def parse_scope(scope: str) -> tuple[str, str]:
    """Split ``global`` or ``kind:ref`` into (kind, ref); raise ValueError if malformed."""
    if scope == ScopeKind.GLOBAL:
        return ScopeKind.GLOBAL, ""
    kind, sep, ref = scope.partition(":")
    # " project : atlas " is project:atlas: the ids a request names a scope by are trimmed
    # (context.project_id, a task close's task_id), so a padded one could never be reached.
    kind, ref = kind.strip(), identifier(ref)
    if not sep or not ref or kind not in ScopeKind.values or kind == ScopeKind.GLOBAL:
        raise ValueError(
            "scope must be 'global' or kind:id with kind one of user, project, repo, task; "
            f"got {scope[:100]!r}"
        )
    if len(ref) > MAX_SCOPE_REF_CHARS:
        raise ValueError(f"the scope's id is at most {MAX_SCOPE_REF_CHARS} characters")
    if BIDI_CONTROLS.search(ref):
        raise ValueError(BIDI_CONTROLS_MESSAGE)
    return kind, ref


class Memory(models.Model):
    """One remembered item. Corrections add a row that supersedes it; nothing is overwritten."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memories")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="memories")
    agent = models.ForeignKey(
        Agent,
        # Not SET_NULL: an agent's private memories would become every agent's. Deactivate
        # the agent (is_active) instead, or delete its memories by operation first. RESTRICT,
        # not PROTECT: a cascade from the tenant still removes both.
        on_delete=models.RESTRICT,
        null=True,
        blank=True,
        related_name="memories",
        help_text="The agent that may use it; empty = shared by the tenant's agents.",
    )
    memory_class = models.CharField(max_length=16, choices=MemoryClass.choices)
    memory_type = models.CharField(max_length=32, choices=MemoryType.choices)
    memory_key = models.CharField(max_length=200, blank=True, default="")
    scope_kind = models.CharField(
        max_length=16, choices=ScopeKind.choices, default=ScopeKind.GLOBAL
    )
    scope_ref = models.CharField(max_length=MAX_SCOPE_REF_CHARS, blank=True, default="")
    session_id = models.CharField(max_length=200, blank=True, default="")
    task_id = models.CharField(max_length=200, blank=True, default="")
    # The database default too: rows inserted by SQL that does not name the column (bulk
    # loaders, a process of the previous release during a deployment) apply everywhere.
    environment = models.CharField(
        max_length=MAX_ENVIRONMENT_CHARS,
        blank=True,
        default="",
        db_default="",
        validators=[validate_stored_environment],
        help_text="The environment it holds in (lower case); empty = every environment.",
    )
    content = models.TextField(blank=True)
    value = models.JSONField(null=True, blank=True)
    source_type = models.CharField(max_length=32, choices=SourceType.choices)
    source_conversation_id = models.CharField(max_length=200, blank=True, default="")
    source_message_id = models.CharField(max_length=200, blank=True, default="")
    source_tool = models.CharField(max_length=200, blank=True, default="")
    authority = models.CharField(max_length=32, choices=Authority.choices)
    confidence = models.FloatField(default=1.0)
    consent = models.CharField(max_length=16, choices=Consent.choices, default=Consent.EXPLICIT)
    sensitivity = models.CharField(
        max_length=16, choices=Sensitivity.choices, default=Sensitivity.PERSONAL
    )
    valid_from = models.DateTimeField(default=timezone.now)
    valid_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.ACTIVE)
    # Whether it was ever in use: accepted by admission, or approved by a reviewer. A write
    # that waited for a reviewer was not, nor is it once revoked, expired (by its task's
    # close, or its valid_until) or rejected before an approval: agents are never answered
    # its words (selectors.memories.memory_words_withheld). Its status alone cannot tell, as
    # a memory approved and then revoked is revoked too. The database default covers rows
    # inserted by SQL that does not name the column (bulk loaders, a process of the previous
    # release during a deployment), which are never waiting ones.
    admitted = models.BooleanField(
        default=True,
        db_default=True,
        help_text="In use at some point (accepted, or approved by a reviewer).",
    )
    version = models.PositiveIntegerField(default=1)
    supersedes = models.ForeignKey(
        "self",
        on_delete=models.RESTRICT,
        null=True,
        blank=True,
        related_name="successors",
    )
    policy_version = models.PositiveIntegerField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, blank=True, default="")
    embedding = EmbeddingField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True, default="")
    # When a revocation's line (revoked, or its consent withdrawn) reached the deletion
    # journal (services.revocations), or, on a rejected row, its rejection's line, or, on a
    # row its task's close expired, the close's line, or, on a superseded row a close named
    # (``task_closed_at``), that line (a row is one of them); on a row expired
    # by its valid_until, when it was (it owes no line). The deletion sweep appends the line
    # of such a row without one (a failed append, or a row revoked before migration 0027,
    # rejected before 0028, expired by a close before 0031).
    revocation_journaled_at = models.DateTimeField(null=True, blank=True)
    # On a superseded version bound to a task whose close found it replaced: when, and the
    # task's digest (``ledger.task_digest``). The close's line for it is owed until
    # ``revocation_journaled_at`` is set, and the deletion sweep appends it if the close's
    # append failed (services.tasks._journal_replaced, migration 0045).
    task_closed_at = models.DateTimeField(null=True, blank=True)
    task_closed_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = MemoryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "memories"
        ordering = ["-created_at"]
        constraints = [
            choices_check("memory_class", MemoryClass, "memory_class_valid"),
            choices_check("memory_type", MemoryType, "memory_type_valid"),
            choices_check("scope_kind", ScopeKind, "memory_scope_kind_valid"),
            choices_check("source_type", SourceType, "memory_source_type_valid"),
            choices_check("authority", Authority, "memory_authority_valid"),
            choices_check("consent", Consent, "memory_consent_valid"),
            choices_check("sensitivity", Sensitivity, "memory_sensitivity_valid"),
            choices_check("status", Status, "memory_status_valid"),
            models.CheckConstraint(
                condition=Q(confidence__gte=0.0, confidence__lte=1.0),
                name="memory_confidence_range",
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="memory_version_positive"),
            models.CheckConstraint(
                condition=Q(scope_kind=ScopeKind.GLOBAL, scope_ref="")
                | (~Q(scope_kind=ScopeKind.GLOBAL) & ~Q(scope_ref="")),
                name="memory_scope_ref_matches_kind",
            ),
            models.CheckConstraint(
                condition=Q(
                    *[
                        Q(memory_type=memory_type, memory_class=memory_class)
                        for memory_type, memory_class in TYPE_CLASS.items()
                    ],
                    _connector=Q.OR,
                ),
                name="memory_class_matches_type",
            ),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gt=models.F("valid_from")),
                name="memory_validity_interval",
            ),
            models.CheckConstraint(
                condition=~Q(supersedes=models.F("id")), name="memory_not_self_superseding"
            ),
            # The parser's form (memory_core.environments), for the paths that store a draft
            # without it (evaluation loaders, the demo).
            models.CheckConstraint(
                condition=Q(environment__regex=ENVIRONMENT_REGEX),
                name="memory_environment_valid",
            ),
            # A write waiting for a reviewer, or rejected, was never in use; a memory in use,
            # or superseded, was. Revoked, expired and deleted rows may be either.
            models.CheckConstraint(
                condition=Q(status__in=PROPOSED_STATUSES, admitted=False)
                | Q(status__in=IN_USE_STATUSES, admitted=True)
                | Q(status__in=ENDED_STATUSES),
                name="memory_admitted_matches_status",
            ),
            # A tombstone keeps ids and the hash, never the content or its vectors.
            models.CheckConstraint(
                condition=~Q(status=Status.DELETED)
                | Q(content="", value__isnull=True, embedding__isnull=True),
                name="memory_tombstone_has_no_content",
            ),
            # One successor per row: a chain never forks, so it has exactly one head.
            models.UniqueConstraint(
                fields=["supersedes"],
                condition=Q(supersedes__isnull=False) & ~Q(status__in=PROPOSED_STATUSES),
                name="memory_one_successor",
            ),
        ]
        # No ANN (HNSW) or GIN index: every read is one subject's rows, found by the btree
        # indexes below and ranked exactly (memory_core.retrieval.candidates; migration 0007).
        indexes = [
            models.Index(
                fields=["tenant", "subject", "status"], name="memory_tenant_subject_status"
            ),
            models.Index(
                fields=["tenant", "subject", "memory_type", "status"], name="memory_subject_type"
            ),
            models.Index(fields=["tenant", "subject", "memory_key"], name="memory_subject_key"),
            models.Index(fields=["tenant", "scope_kind", "scope_ref"], name="memory_scope"),
            models.Index(fields=["tenant", "session_id", "task_id"], name="memory_session_task"),
            models.Index(fields=["tenant", "subject", "content_hash"], name="memory_content_hash"),
            # GET /api/v1/memories: a tenant's rows newest first, a page at a time; and one
            # subject's (without it, a small subject's page walked its whole tenant's rows).
            models.Index(fields=["tenant", "-created_at", "-id"], name="memory_tenant_newest"),
            models.Index(
                fields=["tenant", "subject", "-created_at", "-id"], name="memory_subject_newest"
            ),
            # The retention sweep: the rows due to expire (active, or waiting for a reviewer)...
            models.Index(
                fields=["valid_until"],
                name="memory_live_expiry",
                condition=Q(status__in=LIVE_STATUSES, valid_until__isnull=False),
            ),
            # ... and a tenant's rows of a class, or inferred, older than its retention, never
            # the tombstones a sweep left behind (deletion/retention.py, ``_rules``).
            models.Index(
                fields=["tenant", "memory_class", "created_at"],
                name="memory_retention",
                condition=~Q(status=Status.DELETED),
            ),
            models.Index(
                fields=["tenant", "created_at"],
                name="memory_inferred_retention",
                condition=Q(authority=Authority.MODEL_INFERENCE) & ~Q(status=Status.DELETED),
            ),
            # The deletion sweep: the revoked rows whose journal line is not recorded, a few
            # among millions (services.revocations.memory_revocations_journal).
            models.Index(
                fields=["updated_at"],
                name="memory_revocation_unjournaled",
                condition=Q(status=Status.REVOKED, revocation_journaled_at__isnull=True),
            ),
            # The same for the rejected rows (services.revocations.memory_rejections_journal).
            models.Index(
                fields=["updated_at"],
                name="memory_rejection_unjournaled",
                condition=Q(status=Status.REJECTED, revocation_journaled_at__isnull=True),
            ),
            # The same for the expired rows: a task's close owes a line, an expiry by
            # valid_until none (services.revocations.memory_task_closes_journal).
            models.Index(
                fields=["updated_at"],
                name="memory_expiry_unjournaled",
                condition=Q(status=Status.EXPIRED, revocation_journaled_at__isnull=True),
            ),
            # The same for the replaced versions a task's close named
            # (services.revocations.memory_task_replaced_journal).
            models.Index(
                fields=["task_closed_at"],
                name="memory_replaced_unjournaled",
                condition=Q(
                    status=Status.SUPERSEDED,
                    task_closed_at__isnull=False,
                    revocation_journaled_at__isnull=True,
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.memory_type} {self.memory_key or self.id} v{self.version} ({self.status})"

    def status_at(self, moment) -> str:
        """Return the status as it stands at ``moment``: a live row (active, or waiting for a
        reviewer) past its ``valid_until`` is expired there, though the retention sweep has
        not yet marked it so (the sweep expires both, ``memories_expire``). The same rule
        as a query is ``MemoryQuerySet.past_end``."""
        if self.status in LIVE_STATUSES and self.valid_until and self.valid_until <= moment:
            return Status.EXPIRED
        return self.status

    @property
    def place(self) -> tuple[str, str, str]:
        """Where the memory holds: its scope and its environment ("" for every one)."""
        return (self.scope_kind, self.scope_ref, self.environment)

    @property
    def scope(self) -> str:
        """Return the scope as one string: ``global`` or ``kind:ref``."""
        return format_scope(self.scope_kind, self.scope_ref)
