"""DeletionOperation.user_id_sha256: the SHA-256 of the person's user id of a whole subject's
deletion whose subject's row ``replay_deletions`` made back, named by its own id.

The run appends such an operation's journal line again (the row has no ``journaled_at``),
and the line named the person by the digest of the row's id: with more tombstones than the
line it was replayed from, it was the line the reader kept, and a later restore and replay
of the same backup found none of the person's traces from before they were known (stop 63's
audit of backups). The replay now records its line's digest here, and the line names it.

No backfill (none is possible: the row names the person by its own id): an operation a
replay made before has "", and its line names the digest of that id, as before. The default
is the database's too, so a row inserted without the column (a process of the previous
release during a deployment) names nobody; no row is rewritten (the default is constant).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0049_keyless_corrections_conflict_lost"),
    ]

    operations = [
        migrations.AddField(
            model_name="deletionoperation",
            name="user_id_sha256",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
    ]
