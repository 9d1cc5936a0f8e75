"""Subject.deletion_queued_journaled_at: when a queued deletion's line reached the deletion
journal; the deletion sweep appends it for a queued mark without one (an append that failed).

A mark queued before this migration has none, and the first sweeps append its line again: a
duplicate of a line already written is harmless (the reader keeps one per operation id).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0041_keyless_conflicts_apart"),
    ]

    operations = [
        migrations.AddField(
            model_name="subject",
            name="deletion_queued_journaled_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
