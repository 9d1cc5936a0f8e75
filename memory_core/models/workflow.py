"""Records of decisions and work: admission decisions, review items, traces, deletions."""

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils import timezone

from memory_core.clock import ClockTimestamp
from memory_core.environments import MAX_ENVIRONMENT_CHARS
from memory_core.text import format_scope

from .choices import choices_check
from .memory import MAX_SCOPE_REF_CHARS, Memory
from .tenancy import Agent, Subject, Tenant


class AdmissionDecisionOutcome(models.TextChoices):
    ACCEPTED = "accepted"
    PENDING_APPROVAL = "pending_approval"
    REJECTED = "rejected"


class ReviewKind(models.TextChoices):
    SENSITIVE_WRITE = "sensitive_write"
    CONFLICT = "conflict"


class ReviewState(models.TextChoices):
    OPEN = "open"
    APPROVED = "approved"
    REJECTED = "rejected"
    RESOLVED = "resolved"


class AdmissionDecision(models.Model):
    """The outcome of one write through the admission policy, with its rule codes.

    Holds no content: accepted and rejected counts are health figures, and rule codes say why.
    """

    Outcome = AdmissionDecisionOutcome

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="admission_decisions")
    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, blank=True)
    subject = models.ForeignKey(Subject, on_delete=models.SET_NULL, null=True, blank=True)
    memory = models.ForeignKey(
        Memory, on_delete=models.SET_NULL, null=True, blank=True, related_name="admission_decisions"
    )
    outcome = models.CharField(max_length=24, choices=AdmissionDecisionOutcome.choices)
    rule_codes = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    memory_type = models.CharField(max_length=32, blank=True, default="")
    source_type = models.CharField(max_length=32, blank=True, default="")
    content_hash = models.CharField(max_length=64, blank=True, default="")
    policy_version = models.PositiveIntegerField(null=True, blank=True)
    # A rejected write's: the memory it was about (the one a correction corrected, or the
    # key's head it would have superseded). A rejected write has no row of its own, and its
    # event keeps the writer's free-text reason: a deletion of this memory scrubs that event
    # (``deletion.stores.EventsStore``). Empty for any other write. Not a foreign key: an id,
    # as the event's ``memory_id``.
    target_memory_id = models.UUIDField(null=True, blank=True)
    # The end of validity the writer asked for, when admission capped it (rule ``ttl.capped``):
    # a correction of the memory asks for it again, and admission caps it anew for the new
    # version's class and authority (a confirmed inference is not held to inferred_days, nor
    # left without the end its writer gave). Null otherwise, and for decisions before stop 50.
    asked_valid_until = models.DateTimeField(null=True, blank=True)
    # On the database's clock: a whole subject's deletion takes the decisions made before its
    # request, whichever web host took each (``memory_core.clock``). Read per row: the
    # split-write rule takes a subject's newest by it, a batch's in its order
    # (``services.writes._in_batch_order``).
    created_at = models.DateTimeField(db_default=ClockTimestamp(), db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            choices_check("outcome", AdmissionDecisionOutcome, "admission_outcome_valid")
        ]
        indexes = [
            models.Index(fields=["tenant", "outcome", "created_at"], name="admission_health"),
            models.Index(
                fields=["target_memory_id"],
                condition=models.Q(target_memory_id__isnull=False),
                name="admission_target",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.outcome} {','.join(self.rule_codes)}"


class AccessDenial(models.Model):
    """An agent's request the API refused (403) for reaching past its grant or subject: a
    retrieval about a subject its token does not name, a correction, revoke or deletion
    outside its write grant, the reviewer API with an API key. The read side's counterpart of
    a rejected AdmissionDecision, for the "cross-scope denials" health figure.

    Holds no content and no subject: the error code and the endpoint's name say what was
    refused, not whom it was about.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="access_denials")
    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, blank=True)
    code = models.CharField(max_length=64)
    endpoint = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tenant", "created_at"], name="access_denial_health")]

    def __str__(self) -> str:
        return f"{self.code} at {self.endpoint}"


# The most a reviewer's reason (``ReviewItem.reason``, a TextField without a limit of its
# own) may hold: an approval's, a rejection's or a conflict's resolution. The reviewer API and
# the portal's forms refuse more, with this one number.
MAX_REVIEW_REASON_CHARS = 2000


class ReviewItem(models.Model):
    """Work for a reviewer: a sensitive write to approve, or a conflict to resolve."""

    Kind = ReviewKind
    State = ReviewState
    # What resolves a conflict (``resolution``); approvals and rejections hold their own words.
    CONFLICT_OUTCOMES = ("choose_winner", "keep_both_scoped", "ask_user")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="review_items")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="review_items")
    kind = models.CharField(max_length=24, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, null=True, blank=True, related_name="review_items"
    )
    memory_key = models.CharField(max_length=200, blank=True, default="")
    # A conflict's place: the scope and environment of its most specific candidates. With the
    # key they name the conflict (one open item each), so that requests in two projects (or
    # two environments) that each see a conflict on one key get an item each, instead of
    # taking turns rewriting one item's candidates. Empty for other kinds.
    scope_kind = models.CharField(max_length=16, blank=True, default="")
    scope_ref = models.CharField(max_length=MAX_SCOPE_REF_CHARS, blank=True, default="")
    environment = models.CharField(max_length=MAX_ENVIRONMENT_CHARS, blank=True, default="")
    candidate_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    rule_codes = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    resolution = models.CharField(max_length=32, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    # On the database's clock, as a deletion's request (``memory_core.clock``).
    created_at = models.DateTimeField(db_default=ClockTimestamp())
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            choices_check("kind", ReviewKind, "review_kind_valid"),
            choices_check("state", ReviewState, "review_state_valid"),
            models.UniqueConstraint(
                fields=[
                    "tenant",
                    "subject",
                    "memory_key",
                    "scope_kind",
                    "scope_ref",
                    "environment",
                ],
                # Keyless memories share no key: their conflicts are told apart by their
                # rows (services.conflicts._keyless_conflict_open).
                condition=models.Q(kind="conflict", state="open") & ~models.Q(memory_key=""),
                name="review_one_open_conflict_per_place",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "state", "kind"], name="review_queue"),
            # The reviewer's recent decisions, newest first (decided items are never purged).
            models.Index(
                fields=["tenant", "-resolved_at", "-created_at"],
                name="review_decided_newest",
                condition=~models.Q(state="open"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.memory_key or self.memory_id} ({self.state})"

    @property
    def scope(self) -> str:
        """A conflict's scope as one string (``global``, ``project:atlas``); "" for others."""
        return format_scope(self.scope_kind, self.scope_ref) if self.scope_kind else ""


def reviewer_decided_condition() -> models.Q:
    """Return the condition "a reviewer decided this item": approved, rejected, or a conflict
    resolved with a reviewer's outcome (``ReviewItem.CONFLICT_OUTCOMES``). Items are also
    closed without a reviewer, and none of those is a decision: by the deletion worker
    ("deleted"), a revoke or a consent withdrawal ("revoked", "consent_withdrawn"), a
    person's later correction of what their waiting write corrects
    ("replaced_by_later_correction"), the retention sweep ("settled", "valid_until_passed").
    The one spelling of the rule that the health page's chart counts and the queue's
    "Recently decided" lists by."""
    return models.Q(state__in=[ReviewState.APPROVED, ReviewState.REJECTED]) | models.Q(
        state=ReviewState.RESOLVED,
        kind=ReviewKind.CONFLICT,
        resolution__in=ReviewItem.CONFLICT_OUTCOMES,
    )


class DeletionTarget(models.TextChoices):
    MEMORY = "memory"
    MEMORY_KEY = "memory_key"
    SUBJECT = "subject"
    TENANT = "tenant"


class DeletionState(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    PARTIAL = "partial"
    FAILED = "failed"


class RetrievalTrace(models.Model):
    """What one retrieval did and why: plan, counts, rejections, scores. Never raw content."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="traces")
    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, blank=True)
    subject = models.ForeignKey(Subject, on_delete=models.SET_NULL, null=True, blank=True)
    # A retrieval for a user not known yet has no subject: the SHA-256 of its user id
    # (``traces.user_id_digest``) says whose it is, so that an agent acting for one person
    # by subject token reads no other's, and the person's deletion finds it. "" otherwise.
    user_id_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    mode = models.CharField(max_length=32)
    degraded = models.BooleanField(default=False)
    policy_version = models.PositiveIntegerField(null=True, blank=True)
    query_hash = models.CharField(max_length=64, blank=True, default="")
    stages = models.JSONField(default=dict)
    # The memories the answer handed out: its items, then its clarifications' candidates
    # (``pipeline._handed_out_ids``).
    selected_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    # Every memory id the trace mentions (selected or rejected): deletion purges by it.
    cited_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    # What the agent reported its final answers and tool calls used, of ``selected_ids``
    # (``POST /api/v1/traces/{id}/usage``): every id reported, and each report
    # ``{"kind", "reference", "memory_ids", "reported_at"}`` (a reference names the answer or
    # the tool call, never its text).
    used_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    usage = models.JSONField(default=list, blank=True)
    # Null once a memory the trace cites is deleted (``TracesStore``): with the package's
    # other items, the figure told a deleted item's length to a token.
    prompt_tokens = models.PositiveIntegerField(null=True, default=0)
    latency_ms = models.FloatField(default=0.0)
    # On the database's clock: a whole subject's deletion takes the traces made before its
    # first run, which a worker starts (``memory_core.clock``).
    created_at = models.DateTimeField(db_default=ClockTimestamp(), db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            GinIndex(fields=["cited_ids"], name="trace_cited_ids_gin"),
            # A person known only from their traces, by their id's digest: a whole subject's
            # deletion, and the API's ``{"subject"}`` of an id no subject has (every request).
            models.Index(
                fields=["tenant", "user_id_sha256"],
                condition=models.Q(subject__isnull=True),
                name="trace_unknown_user",
            ),
        ]

    def __str__(self) -> str:
        return f"trace {self.id} ({self.mode})"


class DeletionStepState(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    VERIFIED = "verified"
    FAILED = "failed"


class DeletionOperation(models.Model):
    """A deletion request tracked by id until every derived store is verified clean."""

    Target = DeletionTarget
    State = DeletionState

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="deletions")
    subject = models.ForeignKey(
        Subject, on_delete=models.SET_NULL, null=True, blank=True, related_name="deletions"
    )
    target = models.CharField(max_length=16, choices=Target.choices)
    memory_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    status = models.CharField(
        max_length=16, choices=DeletionState.choices, default=DeletionState.PENDING
    )
    requested_by_type = models.CharField(max_length=16, blank=True, default="")
    requested_by_id = models.CharField(max_length=200, blank=True, default="")
    reason_code = models.CharField(max_length=64, blank=True, default="")
    policy_version = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    requested_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    dead_lettered_at = models.DateTimeField(null=True, blank=True)
    # When a run last started: the beat sweep re-drives operations idle longer than a threshold.
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    # When a run left the operation partial, the end of its backoff: a copy of its task
    # delivered before then (the sweep's re-sends) waits for it instead of spending a run.
    next_run_at = models.DateTimeField(null=True, blank=True)
    # When the operation's line reached the deletion journal (fsynced); until then every run
    # appends it again and the operation cannot complete. Null on operations settled before
    # this field existed (their first run appended it, unrecorded).
    journaled_at = models.DateTimeField(null=True, blank=True)
    # The SHA-256 of the person's user id, where the subject's row cannot give it: a whole
    # subject's deletion whose row ``replay_deletions`` made back (named by its own id) keeps
    # its journal line's ``user_id_sha256``, which the operation's line names again
    # (``ledger.ledger_entry``). Empty otherwise (the line reads the subject's external id);
    # cleared by the tenant's deletion with the subjects' names (the ``identities`` step).
    user_id_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            choices_check("target", DeletionTarget, "deletion_target_valid"),
            choices_check("status", DeletionState, "deletion_status_valid"),
            models.CheckConstraint(
                condition=~models.Q(status="completed") | models.Q(completed_at__isnull=False),
                name="deletion_completed_has_time",
            ),
        ]
        indexes = [models.Index(fields=["status", "requested_at"], name="deletion_sweep")]

    def __str__(self) -> str:
        return f"deletion {self.id} ({self.status})"


class DeletionStep(models.Model):
    """One derived store's purge within an operation, with its verification evidence."""

    State = DeletionStepState

    id = models.BigAutoField(primary_key=True)
    operation = models.ForeignKey(DeletionOperation, on_delete=models.CASCADE, related_name="steps")
    store = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    verified_at = models.DateTimeField(null=True, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["operation", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["operation", "store"], name="deletion_step_unique_store"
            ),
            choices_check("status", DeletionStepState, "deletion_step_status_valid"),
            models.CheckConstraint(
                condition=~models.Q(status="verified") | models.Q(verified_at__isnull=False),
                name="deletion_step_verified_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.store} ({self.status})"


class Tombstone(models.Model):
    """The deletion ledger: ids and hashes only. Tasks and restores consult it before acting."""

    id = models.BigAutoField(primary_key=True)
    tenant_id = models.UUIDField(db_index=True)
    subject_id = models.UUIDField(null=True, blank=True)
    memory_id = models.UUIDField(unique=True)
    content_hash = models.CharField(max_length=64, blank=True, default="")
    # The SHA-256 of the memory's key as it was deleted (``ledger.memory_key_digest``; "" for a
    # memory without a key): the row loses its key at the request (``scrub_memories``), and a
    # queued key's request must still tell which deletions took memories on the key
    # (``services._queued_taken_meanwhile``). The database default too: rows inserted by SQL
    # that does not name the column (a process of the previous release during a deployment).
    memory_key_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    operation = models.ForeignKey(
        DeletionOperation,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="tombstones",
    )
    deleted_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-deleted_at"]
        # A subject's tombstones (an import skips what was deleted; a subject's deletion
        # asks whether one covers it): without it, every tombstone of every tenant was read.
        indexes = [models.Index(fields=["tenant_id", "subject_id"], name="tombstone_subject")]

    def __str__(self) -> str:
        return f"tombstone {self.memory_id}"


class Export(models.Model):
    """A subject's JSON export written to a file; a derived store that deletion rewrites."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="exports")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="exports")
    # Relative to settings.MEMLEDGER_EXPORT_DIR.
    path = models.CharField(max_length=500)
    # Every memory id the file holds: deletion finds the exports to rewrite by it.
    memory_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    # The digest of the file's records, all it holds but its own id and time
    # (``exports.export_holds_now``). Empty on a row made before it was kept, and on one a
    # deletion rewrote: such a file is never given again for a form sent twice.
    state_sha256 = models.CharField(max_length=64, blank=True, default="")
    requested_by_type = models.CharField(max_length=16, blank=True, default="")
    requested_by_id = models.CharField(max_length=200, blank=True, default="")
    # On the database's clock, as a trace's.
    created_at = models.DateTimeField(db_default=ClockTimestamp())
    rewritten_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [GinIndex(fields=["memory_ids"], name="export_memory_ids_gin")]
        # Below the export folder (migration 0057; ``exports.export_file`` checks links too).
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(path__startswith="/") & ~models.Q(path__contains=".."),
                name="export_path_inside_folder",
            )
        ]

    def __str__(self) -> str:
        return f"export {self.id}"
