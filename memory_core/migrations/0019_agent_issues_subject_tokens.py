"""``Agent.issues_subject_tokens``: the product backend's agent asks for its agents' subject
tokens over HTTP (``POST /api/v1/subject-tokens``, memory_core/subject_tokens.py).

False for every agent, so no agent gains the grant by upgrading. The CHECK keeps an issuer
acting for any subject itself: the grant never takes an agent past its own reach. The agents
table is small: both apply at once.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0018_review_item_conflict_place")]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="issues_subject_tokens",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "May issue subject tokens to the tenant's agents (POST "
                    "/api/v1/subject-tokens): the product backend's key. Needs 'any subject'."
                ),
            ),
        ),
        migrations.AddConstraint(
            model_name="agent",
            constraint=models.CheckConstraint(
                condition=models.Q(issues_subject_tokens=False) | models.Q(any_subject=True),
                name="agent_token_issuer_any_subject",
                violation_error_message=(
                    "An agent that issues subject tokens must act for any subject."
                ),
            ),
        ),
    ]
