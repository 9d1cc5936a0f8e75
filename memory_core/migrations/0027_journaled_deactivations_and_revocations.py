"""Agent deactivations and memory revocations are journaled, as key revocations are (0026).

- ``Agent.deactivated_at``: when ``agent_deactivate`` (the admin's action) deactivated it;
  empty while it is active (a constraint), and for one deactivated before this migration or
  by its tenant's deletion. ``Agent.deactivation_journaled_at``: when its line reached the
  deletion journal.
- ``Memory.revocation_journaled_at``: when a revocation's line (a revoke, a consent
  withdrawal, a conflict lost) reached the journal.

The deletion sweep appends the line of an inactive agent or a revoked memory without one (an
append that failed, or one deactivated or revoked before this migration). Its index of the
revoked rows still to journal is built ``CONCURRENTLY``: writes go on while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0026_apikey_revocation_journaled")]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="deactivated_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="agent",
            name="deactivation_journaled_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="revocation_journaled_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("revocation_journaled_at__isnull", True), ("status", "revoked")),
                fields=["updated_at"],
                name="memory_revocation_unjournaled",
            ),
        ),
        migrations.AddConstraint(
            model_name="agent",
            constraint=models.CheckConstraint(
                condition=models.Q(("is_active", False), ("deactivated_at__isnull", True), _connector="OR"),
                name="agent_deactivated_only_inactive",
            ),
        ),
    ]
