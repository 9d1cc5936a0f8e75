"""The append-only audit trail of every memory's life, and the versioned policy."""

import uuid

from django.db import models
from django.utils import timezone

from .choices import choices_check
from .tenancy import Tenant


class MemoryEventAction(models.TextChoices):
    CREATED = "created"
    ADMITTED = "admitted"
    REJECTED = "rejected"
    PENDING = "pending_approval"
    APPROVED = "approved"
    CORRECTED = "corrected"
    SUPERSEDED = "superseded"
    REVOKED = "revoked"
    EXPIRED = "expired"
    CONFLICT = "conflict"
    CONFLICT_RESOLVED = "conflict_resolved"
    CONSENT_WITHDRAWN = "consent_withdrawn"
    DELETION_REQUESTED = "deletion_requested"
    DELETED = "deleted"


class MemoryEventActorType(models.TextChoices):
    AGENT = "agent"
    USER = "user"
    REVIEWER = "reviewer"
    ADMIN = "admin"
    SYSTEM = "system"


# The actors an agent is told the id of in a memory's events: an agent (its id is no one's
# identity, and the memory's admission names its writer anyway) and memledger itself
# ("retention", "deletion"). An end user's, a reviewer's or an administrator's id is a portal
# login's primary key: who corrected, approved or revoked a memory is theirs to know, not the
# agents' (the portal and the admin show it).
ACTORS_NAMED_TO_AGENTS = frozenset({MemoryEventActorType.AGENT, MemoryEventActorType.SYSTEM})

# How the import command names itself, a system actor (``import:<file name>``): the portal
# tells a person that an import wrote a memory, not memledger on its own
# (``selectors.writers.memory_writers``).
IMPORT_ACTOR_PREFIX = "import:"

# The reason code of a person's write waiting for a reviewer that their later correction of
# the same memory withdrew: revoked, its review item closed
# (``services.writes._withdraw_own_waiting``); the portal says "replaced", not "revoked".
REPLACED_BY_LATER_CORRECTION = "replaced_by_later_correction"


class MemoryEvent(models.Model):
    """One change to a memory. Keeps ids and reason codes, never content.

    ``memory_id`` is a plain column, not a foreign key, so the trail outlives the row it
    describes and a deletion never has to rewrite history.
    """

    Action = MemoryEventAction

    ActorType = MemoryEventActorType

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memory_events")
    memory_id = models.UUIDField(db_index=True)
    action = models.CharField(max_length=32, choices=MemoryEventAction.choices)
    actor_type = models.CharField(max_length=16, choices=MemoryEventActorType.choices)
    actor_id = models.CharField(max_length=200, blank=True, default="")
    reason_code = models.CharField(max_length=100, blank=True, default="")
    policy_version = models.PositiveIntegerField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            choices_check("action", MemoryEventAction, "memory_event_action_valid"),
            choices_check("actor_type", MemoryEventActorType, "memory_event_actor_type_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.memory_id} by {self.actor_type}:{self.actor_id}"

    def actor_id_for_agents(self) -> str:
        """Return ``actor_id`` as an agent is shown it: "" unless the actor is an agent or
        memledger itself (``ACTORS_NAMED_TO_AGENTS``)."""
        return self.actor_id if self.actor_type in ACTORS_NAMED_TO_AGENTS else ""


class PolicyVersion(models.Model):
    """A tenant's policy document (admission, retention, half-lives, weights, budgets).

    Versions are immutable once written; exactly one per tenant is active. ``journaled_at``
    is bookkeeping, not the version: when its retention's line reached the deletion journal
    (``services.policy``; empty: not yet, or published before migration 0030 or before the
    oldest backup kept).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="policy_versions")
    version = models.PositiveIntegerField()
    document = models.JSONField()
    is_active = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    note = models.CharField(max_length=200, blank=True)
    # Not editable: no form (the admin's) offers it; set by the journal's append alone.
    journaled_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["tenant", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "version"], name="policy_unique_version"),
            models.UniqueConstraint(
                fields=["tenant"],
                condition=models.Q(is_active=True),
                name="policy_one_active_per_tenant",
            ),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="policy_version_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant} policy v{self.version}{' (active)' if self.is_active else ''}"
