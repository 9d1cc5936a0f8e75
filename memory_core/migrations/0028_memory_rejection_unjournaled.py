"""Rejections of sensitive writes are journaled, as memory revocations are (0027).

A rejected row records its line on ``Memory.revocation_journaled_at`` (a row is revoked or
rejected, never both). The deletion sweep appends the line of a rejected row without one (an
append that failed, or a write rejected before this migration and after the oldest backup
kept). Its index of the rejected rows still to journal is built ``CONCURRENTLY``: writes go
on while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0027_journaled_deactivations_and_revocations")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("revocation_journaled_at__isnull", True), ("status", "rejected")),
                fields=["updated_at"],
                name="memory_rejection_unjournaled",
            ),
        ),
    ]
