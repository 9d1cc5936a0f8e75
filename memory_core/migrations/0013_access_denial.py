"""Agents' requests refused for reaching past their grant or subject (``AccessDenial``).

The table holds tenant data (which agent was refused what), so it gets the tenant isolation
policy every such table has (migration 0005): ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` and
one policy on ``tenant_id``.
"""

import importlib
import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

RLS = importlib.import_module("memory_core.migrations.0005_issue7_row_level_security")
TABLE = "memory_core_accessdenial"


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0012_deletion_operation_no_memory_key")]

    operations = [
        migrations.CreateModel(
            name="AccessDenial",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("code", models.CharField(max_length=64)),
                ("endpoint", models.CharField(blank=True, default="", max_length=64)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "agent",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to="memory_core.agent",
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="access_denials",
                        to="memory_core.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(fields=["tenant", "created_at"], name="access_denial_health")
                ],
            },
        ),
        RLS.tenant_isolation(TABLE),
    ]
