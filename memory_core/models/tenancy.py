"""Who owns and who acts: tenants, subjects, agents with grants, API keys, portal roles."""

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from .choices import MemoryType, Sensitivity, choices_check


class Tenant(models.Model):
    """An organisation whose memories are isolated from every other tenant's."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    # Set by a whole-tenant deletion (memory_core.deletion.services.tenant_deletion_request):
    # the tenant's keys and logins stop working, and the database refuses new memories,
    # subjects, traces, exports, decisions and review items for it (migration 0011).
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Made by an evaluation run (memory_core.evaluation.harness) to hold a copy of a dataset's
    # memories: a deletion's evaluation step removes such a tenant whole when it holds a copy
    # of the deleted words (a run kept with ``eval_retrieval --keep``, or one that crashed
    # before its cleanup). Never set on a tenant of people's own memories.
    evaluation_run = models.BooleanField(default=False, db_default=False, editable=False)
    # When the retention sweep last finished the tenant's deletions by retention: a run takes
    # the tenants swept longest ago first and stops between tenants when its time is up, so
    # the next run starts where it stopped (deletion/retention.py, ``retention_delete``).
    retention_swept_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Subject(models.Model):
    """The person memories are about (the seed's subjectId; the retrieval context's user_id)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="subjects")
    external_id = models.CharField(
        max_length=200, help_text="The id agents use for this person (context.user_id)."
    )
    display_name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # A deletion of the subject too large for a request, queued for a worker
    # (deletion.services.subject_deletion_queue): when, who asked (a portal login or an
    # agent), and of what: every memory of the subject, or those on one memory_key
    # (``deletion_queued_key``, empty for the whole subject). Cleared by the worker as it
    # makes the request; until then agents read and write nothing of the subject.
    deletion_queued_at = models.DateTimeField(null=True, blank=True)
    deletion_queued_by = models.IntegerField(null=True, blank=True)
    deletion_queued_by_agent = models.ForeignKey(
        "Agent", on_delete=models.PROTECT, null=True, blank=True, related_name="+", db_index=False
    )
    # A default in the database too: rows copied in bulk (the benchmarks' COPY) name no key.
    deletion_queued_key = models.CharField(max_length=200, blank=True, default="", db_default="")
    # When the mark's journal line (``ledger.queued_entry``) reached the deletion journal,
    # cleared with the mark; the deletion sweep appends the line of a mark without one (an
    # append that failed): until a worker makes the request, that line alone lets a restore's
    # replay make it. The sweep reads the marks by the index below (a few queued subjects).
    deletion_queued_journaled_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "external_id"], name="subject_unique_external_id"
            ),
            models.CheckConstraint(
                condition=models.Q(deletion_queued_at__isnull=True)
                | models.Q(deletion_queued_by__isnull=False)
                | models.Q(deletion_queued_by_agent__isnull=False),
                name="subject_deletion_queued_by_someone",
            ),
            models.CheckConstraint(
                condition=models.Q(deletion_queued_key="")
                | models.Q(deletion_queued_at__isnull=False),
                name="subject_deletion_queued_key_only_queued",
            ),
        ]
        indexes = [
            # The deletion sweep looks for queued ones every 30 s: a few among millions.
            models.Index(
                fields=["deletion_queued_at"],
                name="subject_deletion_queued",
                condition=models.Q(deletion_queued_at__isnull=False),
            )
        ]
        ordering = ["tenant", "external_id"]

    def __str__(self) -> str:
        return f"{self.tenant_id}:{self.external_id}"


def _all_types() -> list[str]:
    return list(MemoryType.values)


class Agent(models.Model):
    """An AI agent of one tenant, with the grants that bound what it may write and read."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=100)
    write_types = ArrayField(
        models.CharField(max_length=32, choices=MemoryType.choices), default=_all_types, blank=True
    )
    read_types = ArrayField(
        models.CharField(max_length=32, choices=MemoryType.choices), default=_all_types, blank=True
    )
    max_sensitivity = models.CharField(
        max_length=16, choices=Sensitivity.choices, default=Sensitivity.SENSITIVE
    )
    any_subject = models.BooleanField(
        default=True, help_text="May write and read for any subject of its tenant."
    )
    issues_subject_tokens = models.BooleanField(
        default=False,
        help_text=(
            "May issue subject tokens to the tenant's agents (POST /api/v1/subject-tokens): "
            "the product backend's key. Needs 'any subject'."
        ),
    )
    # Deactivated only by ``services.api_keys.agent_deactivate`` (the admin's action), which
    # journals it for a restore's replay; reactivated by ``agent_reactivate``.
    is_active = models.BooleanField(default=True)
    # When the agent was deactivated (empty: active, or deactivated before migration 0027 or
    # by its tenant's deletion), and when its line reached the deletion journal; the deletion
    # sweep appends the line of an inactive agent without one (a failed append).
    deactivated_at = models.DateTimeField(null=True, blank=True)
    deactivation_journaled_at = models.DateTimeField(null=True, blank=True)
    # When the grant (the five fields above) was last set by ``services.api_keys.
    # agent_grant_set`` (the admin's form; empty: never since migration 0029), and when that
    # setting's line reached the deletion journal; the deletion sweep appends the line of a
    # grant set without one (a failed append).
    grant_changed_at = models.DateTimeField(null=True, blank=True)
    grant_journaled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="agent_unique_name"),
            models.CheckConstraint(
                condition=models.Q(is_active=False) | models.Q(deactivated_at__isnull=True),
                name="agent_deactivated_only_inactive",
            ),
            choices_check("max_sensitivity", Sensitivity, "agent_max_sensitivity_valid"),
            # An issuer may name any subject in a token, its own included: it acts for any
            # subject already, so the grant never takes it past its own reach.
            models.CheckConstraint(
                condition=models.Q(issues_subject_tokens=False) | models.Q(any_subject=True),
                name="agent_token_issuer_any_subject",
                violation_error_message="An agent that issues subject tokens must act for any "
                "subject.",
            ),
        ]
        ordering = ["tenant", "name"]

    def __str__(self) -> str:
        return f"{self.tenant_id}:{self.name}"


class ApiKey(models.Model):
    """A hashed API key bound to one agent (and so one tenant). The secret is shown once."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    hashed_key = models.CharField(max_length=128)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # When the revocation's line reached the deletion journal (services.api_keys); the
    # deletion sweep appends it for a revoked key without one (a failed append).
    revocation_journaled_at = models.DateTimeField(null=True, blank=True)
    # When ``expires_at`` was last set by ``services.api_keys.api_key_expiry_set`` (the
    # admin's forms; empty: never since migration 0029), and when that setting's line reached
    # the deletion journal; the deletion sweep appends it when the append failed.
    expiry_changed_at = models.DateTimeField(null=True, blank=True)
    expiry_journaled_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.agent})"

    def is_usable(self, now=None) -> bool:
        """Return whether the key is neither revoked nor expired."""
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


class PortalRole(models.TextChoices):
    END_USER = "end_user"
    REVIEWER = "reviewer"


class PortalMembership(models.Model):
    """A portal login's role: the end user of one subject, or a reviewer of one tenant."""

    Role = PortalRole

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memledger_membership"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=PortalRole.choices)
    subject = models.OneToOneField(
        Subject, on_delete=models.CASCADE, null=True, blank=True, related_name="membership"
    )

    class Meta:
        constraints = [
            choices_check("role", PortalRole, "membership_role_valid"),
            models.CheckConstraint(
                condition=(
                    models.Q(role="end_user", subject__isnull=False)
                    | models.Q(role="reviewer", subject__isnull=True)
                ),
                name="membership_subject_matches_role",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


class LoginAccessLine(models.Model):
    """The deletion journal's line of a login's access taken away (``services.logins``: a
    portal membership removed, a login deactivated, a password changed), owed by the
    change's own transaction.

    Neither Django's user table nor a membership that is gone can record that its line was
    appended, as an agent's ``deactivation_journaled_at`` does: this row does. The line is
    appended as the change commits and ``journaled_at`` set, or by the deletion sweep if
    that failed; ``replay_deletions --ledger-database`` reads the old database's rows. Rows
    older than the oldest backup kept are dropped by the sweep: no restore undoes them.
    """

    # The line's operation id: the same change journaled twice is one operation to the replay.
    id = models.UUIDField(primary_key=True, editable=False)
    entry = models.JSONField()  # the line (ids and digests: ``deletion.ledger``)
    created_at = models.DateTimeField(db_index=True)  # the change's moment, its requested_at
    journaled_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.entry.get('target')} {self.created_at:%Y-%m-%d %H:%M}"
