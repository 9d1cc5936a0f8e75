"""LoginAccessLine: the deletion journal's line a login's access taken away owes.

A portal membership removed, a login deactivated and a password changed were not journaled:
a restore from a backup taken before brought back the membership, the active login or the
old password (a departed reviewer's review queue back: stop 63's audit of backups), and
the replay had no line to take them away again. ``services.logins`` now journals each as it
commits; Django's user table is not memledger's, and a removed membership is gone, so the
line is owed in this table, in the change's transaction, and the deletion sweep appends one
whose append failed.

Outside row-level security, as the memberships and logins it names are (the credentials that
resolve a tenant, migration 0005): it has no tenant column, and the sweep and the replay read
it in platform mode. No backfill: a change made before holds no line, and a restore from a
backup older than it still gives that access back (docs/operations.md).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0050_deletion_operation_user_id_sha256"),
    ]

    operations = [
        migrations.CreateModel(
            name="LoginAccessLine",
            fields=[
                ("id", models.UUIDField(editable=False, primary_key=True, serialize=False)),
                ("entry", models.JSONField()),
                ("created_at", models.DateTimeField(db_index=True)),
                ("journaled_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
    ]
