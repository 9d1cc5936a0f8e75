"""RetrievalTrace.user_id_sha256: the SHA-256 of the user id of a retrieval for a user not
known yet (its trace has no subject), so that an agent without ``any_subject`` reads such a
trace only with a token for that user (``traces._of_its_tokens_subject``), and the user's
deletion removes it (``deletion.stores.TracesStore``).

No backfill (none is possible: a trace keeps no user id): older traces without a subject have
"", which no token's digest equals, so an agent without ``any_subject`` no longer reads them
(until stop 58 each was read with any token, or none); an agent with ``any_subject`` still
does. The default is the database's too, so a row inserted without the column (a process of
the previous release during a deployment) names nobody; no row is rewritten (the default is
constant).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0043_tombstone_memory_key_sha256"),
    ]

    operations = [
        migrations.AddField(
            model_name="retrievaltrace",
            name="user_id_sha256",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
    ]
