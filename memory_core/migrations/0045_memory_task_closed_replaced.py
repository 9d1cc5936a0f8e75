"""A replaced version a task's close names is journaled durably, as the rows it expires are
(0031).

A close names, besides what it expires, the versions bound to it that a newer version
replaced (a backup taken before the replacement holds one in use). Until now their line was
appended as the close committed and, if that append failed, logged and not made again: the
row stayed superseded, and nothing recorded that it owed a line. The close now marks such a
row (``task_closed_at``, ``task_closed_sha256``: when, and the task's digest) and records
its line on ``revocation_journaled_at``, so the deletion sweep appends a line an append
missed. Both columns are null or empty on every row already there (constant defaults: no
row is rewritten); the index of the rows still to journal is built ``CONCURRENTLY``.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0044_retrievaltrace_user_id_sha256")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="task_closed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="task_closed_sha256",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(
                    ("revocation_journaled_at__isnull", True),
                    ("status", "superseded"),
                    ("task_closed_at__isnull", False),
                ),
                fields=["task_closed_at"],
                name="memory_replaced_unjournaled",
            ),
        ),
    ]
