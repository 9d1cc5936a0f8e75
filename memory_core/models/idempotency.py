"""What a write sent with an ``Idempotency-Key`` produced, so that a retry is answered again
instead of being written twice (memory_core/services/idempotency.py)."""

import uuid

from django.db import models
from django.utils import timezone

from .tenancy import Agent, Tenant


class IdempotencyRecord(models.Model):
    """One ``Idempotency-Key`` of one agent: the request it stood for and what it produced.

    Holds ids and hashes only, as the tombstone ledger does: the key as its SHA-256 (the key
    is the agent's free text), the request as a SHA-256 fingerprint, the outcome as ids
    (admission decisions, review items). So it outlives a deletion of what the write made,
    and a retry of the write then replays the tombstone instead of writing the memory again.
    ``status_code`` is null while the first request holding the key is in flight (never seen
    by another transaction: the row commits with the write).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="idempotency_records")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="idempotency_records")
    key_digest = models.CharField(max_length=64)
    endpoint = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # One entry per write, in the request's order: {"decision": id, "review_item": id | null}.
    results = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent", "key_digest"], name="idempotency_key_unique_per_agent"
            )
        ]
        indexes = [
            models.Index(fields=["expires_at"], name="idempotency_expiry"),
        ]

    def __str__(self) -> str:
        return f"idempotency key of agent {self.agent_id} at {self.endpoint}"
