"""``IdempotencyRecord``: what a write sent with an ``Idempotency-Key`` produced (ids and
hashes, never content nor the key's text), so a retry is answered again instead of written
twice.

The table holds tenant data (which agent wrote what, by id), so it gets the tenant isolation
policy every such table has (migration 0005, as 0013 did): ``ENABLE`` + ``FORCE ROW LEVEL
SECURITY`` and one policy on ``tenant_id``. The unique (tenant, agent, key) index is what
makes a second request with the key wait for the first one's transaction (on the key's
SHA-256: the key is the agent's free text).
"""

import importlib
import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

RLS = importlib.import_module("memory_core.migrations.0005_issue7_row_level_security")
TABLE = "memory_core_idempotencyrecord"


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0016_memory_environment"),
    ]

    operations = [
        migrations.CreateModel(
            name="IdempotencyRecord",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("key_digest", models.CharField(max_length=64)),
                ("endpoint", models.CharField(max_length=64)),
                ("fingerprint", models.CharField(max_length=64)),
                ("status_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("results", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("expires_at", models.DateTimeField()),
                (
                    "agent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="idempotency_records",
                        to="memory_core.agent",
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="idempotency_records",
                        to="memory_core.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(fields=["expires_at"], name="idempotency_expiry"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "agent", "key_digest"),
                        name="idempotency_key_unique_per_agent",
                    )
                ],
            },
        ),
        RLS.tenant_isolation(TABLE),
    ]
