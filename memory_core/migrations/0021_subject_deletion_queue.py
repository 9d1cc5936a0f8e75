"""``Subject.deletion_queued_at`` / ``deletion_queued_by``: a whole-subject deletion the
portal could not make within a request's time budget, queued for a worker
(``deletion.services.subject_deletion_queue``). Both empty for every subject; the CHECK
keeps a queued deletion tied to the login that asked; a partial index finds the few queued
ones for the deletion sweep. No row is rewritten (the columns are empty); the CHECK's
validation and the index's build read the subjects table once each, a small table beside the
memories, holding up new subjects for that time.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0020_chain_trigger_skips_tombstoning")]

    operations = [
        migrations.AddField(
            model_name="subject",
            name="deletion_queued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="subject",
            name="deletion_queued_by",
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AddConstraint(
            model_name="subject",
            constraint=models.CheckConstraint(
                condition=models.Q(deletion_queued_at__isnull=True)
                | models.Q(deletion_queued_by__isnull=False),
                name="subject_deletion_queued_by_someone",
            ),
        ),
        migrations.AddIndex(
            model_name="subject",
            index=models.Index(
                condition=models.Q(deletion_queued_at__isnull=False),
                fields=["deletion_queued_at"],
                name="subject_deletion_queued",
            ),
        ),
    ]
