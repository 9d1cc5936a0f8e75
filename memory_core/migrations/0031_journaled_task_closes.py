"""Memories expired by their task's close are journaled, as revocations (0027) and rejections
(0028) are.

An expired row records its line on ``Memory.revocation_journaled_at`` (a row is revoked,
rejected or expired, one of them); an expiry by ``valid_until`` owes none and is recorded as
it is made. The deletion sweep appends the line of a row a task's close expired without one
(an append that failed, or a task closed before this migration and after the oldest backup
kept), and records the other expired rows it reads. Its index of the expired rows still to
journal is built ``CONCURRENTLY``: writes go on while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0030_journaled_policy_versions")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("revocation_journaled_at__isnull", True), ("status", "expired")),
                fields=["updated_at"],
                name="memory_expiry_unjournaled",
            ),
        ),
    ]
