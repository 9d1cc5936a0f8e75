"""A tenant's policy version is journaled as it is published, as grants and expiries are (0029).

- ``PolicyVersion.journaled_at``: when the version's line (its retention as the sweep reads
  it, ``policy_retention_set``) reached the deletion journal. When it was published is
  ``created_at``.

Empty on every row: the deletion sweep appends the line of each version published after the
oldest backup kept (``ledger.backups_cutoff``) whose line is not recorded, this migration's
included, oldest first; one published before needs none (every backup holds it). No index:
versions are few, as agents and keys are.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memory_core", "0029_journaled_grants_and_expiries"),
    ]

    operations = [
        migrations.AddField(
            model_name="policyversion",
            name="journaled_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
