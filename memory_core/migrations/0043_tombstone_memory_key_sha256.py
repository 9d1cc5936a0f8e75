"""Tombstone.memory_key_sha256: the SHA-256 of a deleted memory's key (the row's key is
cleared at the request), so that a queued key's request waits only for the unfinished
deletions that took memories on its key (``deletion.services._queued_taken_meanwhile``).

No backfill (none is possible: the keys of the memories already deleted are cleared):
older tombstones have "", and a key's queued request whose memories they took is made
without waiting for their deletion, as before stop 57. The default is the database's too,
so a row inserted without the column (a process of the previous release during a
deployment) names no key; no row is rewritten (the default is constant).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0042_subject_deletion_queued_journaled_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="tombstone",
            name="memory_key_sha256",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
    ]
