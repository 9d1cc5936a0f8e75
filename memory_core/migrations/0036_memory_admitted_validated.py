"""Validate migration 0035's CHECK on ``Memory.admitted`` in a transaction of its own: the scan
takes a lock that lets reads and writes go on."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0035_memory_admitted")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_core_memory VALIDATE CONSTRAINT memory_admitted_matches_status",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
