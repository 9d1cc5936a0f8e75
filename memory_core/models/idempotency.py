"""What a write sent with an ``Idempotency-Key`` produced, so that a retry is answered again
instead of being written twice (memory_core/services/idempotency.py)."""

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils import timezone

from .tenancy import Agent, Tenant


class IdempotencyRecord(models.Model):
    """One ``Idempotency-Key`` of one agent: the request it stood for and what it produced.

    Holds no content: the request is kept as a SHA-256 fingerprint (a hash, as the tombstone
    ledger keeps content hashes) and the outcome as ids (admission decisions, review items,
    memories). ``memory_ids`` and ``subject_ids`` are what deletion looks the record up by
    (GIN, the ``idempotency`` store); ``status_code`` is null while the first request holding
    the key is in flight (never seen by another transaction: the row commits with the write).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="idempotency_records")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="idempotency_records")
    key = models.CharField(max_length=255)
    endpoint = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # One entry per write, in the request's order: {"decision": id, "review_item": id | null}.
    results = models.JSONField(default=list, blank=True)
    memory_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    subject_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent", "key"], name="idempotency_key_unique_per_agent"
            )
        ]
        indexes = [
            models.Index(fields=["expires_at"], name="idempotency_expiry"),
            GinIndex(fields=["memory_ids"], name="idempotency_memory_ids_gin"),
            GinIndex(fields=["subject_ids"], name="idempotency_subject_ids_gin"),
        ]

    def __str__(self) -> str:
        return f"idempotency key of agent {self.agent_id} at {self.endpoint}"
