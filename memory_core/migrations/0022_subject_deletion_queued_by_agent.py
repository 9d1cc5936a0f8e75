"""``Subject.deletion_queued_by_agent``: an agent's whole-subject deletion too large for a
request is queued for a worker too (``deletion.services.subject_deletion_queue``), as the
portal's already was. The CHECK now ties a queued deletion to a portal login or to an agent.
No row is rewritten (the column is empty); no index (nothing looks subjects up by it).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0021_subject_deletion_queue")]

    operations = [
        migrations.RemoveConstraint(
            model_name="subject",
            name="subject_deletion_queued_by_someone",
        ),
        migrations.AddField(
            model_name="subject",
            name="deletion_queued_by_agent",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="memory_core.agent",
            ),
        ),
        migrations.AddConstraint(
            model_name="subject",
            constraint=models.CheckConstraint(
                condition=models.Q(deletion_queued_at__isnull=True)
                | models.Q(deletion_queued_by__isnull=False)
                | models.Q(deletion_queued_by_agent__isnull=False),
                name="subject_deletion_queued_by_someone",
            ),
        ),
    ]
