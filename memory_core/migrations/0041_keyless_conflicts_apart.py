"""Keyless conflicts are told apart by their rows, not their place.

``review_one_open_conflict_per_place`` leaves out the items of memories without a key: two
keyless memories' conflicts at one place shared one item, and choosing a winner in it revoked
the other's rows (``services.conflicts._keyless_conflict_open``). Items stored shared before
stay as they are.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0040_agent_names_in_nfc"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="reviewitem",
            name="review_one_open_conflict_per_place",
        ),
        migrations.AddConstraint(
            model_name="reviewitem",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kind", "conflict"), ("state", "open"))
                & ~models.Q(memory_key=""),
                fields=(
                    "tenant",
                    "subject",
                    "memory_key",
                    "scope_kind",
                    "scope_ref",
                    "environment",
                ),
                name="review_one_open_conflict_per_place",
            ),
        ),
    ]
