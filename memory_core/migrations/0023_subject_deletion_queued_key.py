"""``Subject.deletion_queued_key``: a memory_key's deletion too large for a request is queued
for a worker as a whole subject's is (``deletion.services.subject_deletion_queue``), under the
same mark; the key says what the worker deletes (empty: every memory of the subject). A CHECK
keeps a key only on a queued mark. No row is rewritten (the column's default is constant); the default is the database's too,
so a row inserted without the column (the benchmarks' COPY) names no key.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0022_subject_deletion_queued_by_agent")]

    operations = [
        migrations.AddField(
            model_name="subject",
            name="deletion_queued_key",
            field=models.CharField(blank=True, default="", db_default="", max_length=200),
        ),
        migrations.AddConstraint(
            model_name="subject",
            constraint=models.CheckConstraint(
                condition=models.Q(deletion_queued_key="")
                | models.Q(deletion_queued_at__isnull=False),
                name="subject_deletion_queued_key_only_queued",
            ),
        ),
    ]
