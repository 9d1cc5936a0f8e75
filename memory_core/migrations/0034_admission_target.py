"""``AdmissionDecision.target_memory_id``: the memory a rejected write was about.

A write admission rejects has no memory row: its event is keyed by its decision and keeps the
writer's free-text reason, and a correction's reason is about the memory it corrects ("she
said she likes it darker"). Only a deletion of the whole subject reached such events:
deleting the corrected memory, or its key, left the reason in the audit trail. The decision
now names that memory (the one a correction corrected, or the key's head a rejected write
would have superseded), and the deletion's events step finds the rejected writes about the
memories it deletes by the partial index ``admission_target`` (only rejected writes with a
target are in it). Decisions stored before name none: their events are reached as before,
by a deletion of their subject.

The column is nullable without a default (no table rewrite); the index is built
``CONCURRENTLY``, so writes go on while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0033_usage_without_drops_emptied_reports")]

    operations = [
        migrations.AddField(
            model_name="admissiondecision",
            name="target_memory_id",
            field=models.UUIDField(blank=True, null=True),
        ),
        AddIndexConcurrently(
            model_name="admissiondecision",
            index=models.Index(
                condition=models.Q(("target_memory_id__isnull", False)),
                fields=["target_memory_id"],
                name="admission_target",
            ),
        ),
    ]
