"""Agents' grants and keys' expiries are journaled, as deactivations and revocations are (0027).

- ``Agent.grant_changed_at``: when ``agent_grant_set`` (the admin's agent form) last set the
  grant; ``Agent.grant_journaled_at``: when that setting's line reached the deletion journal.
- ``ApiKey.expiry_changed_at``, ``ApiKey.expiry_journaled_at``: the same for a key's
  ``expires_at`` (``api_key_expiry_set``: the admin's key forms).

Empty on every row: a grant or an expiry set before this migration left no record of when,
and gets no line. The deletion sweep appends the line of a setting without one (an append
that failed). No index: agents and keys are few, as for their deactivations and revocations.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memory_core", "0028_memory_rejection_unjournaled"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="grant_changed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="agent",
            name="grant_journaled_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apikey",
            name="expiry_changed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apikey",
            name="expiry_journaled_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
