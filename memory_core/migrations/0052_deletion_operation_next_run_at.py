"""DeletionOperation.next_run_at: when a run left the operation partial, the end of its
backoff.

The beat sweep sends an operation's task again each minute it waits in ``pending`` (workers
down or behind), and every queued copy counted as a run: when the first ended partial (a
store failing for a moment), the copies ran it again at once, and eight of them
dead-lettered it within a second (stop 64's audit of failures). A copy delivered before this
time now waits for it without spending a run.

No backfill: an operation partial before this migration has none and runs as before.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0051_login_access_line"),
    ]

    operations = [
        migrations.AddField(
            model_name="deletionoperation",
            name="next_run_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
