"""Print a short-lived subject token for an agent without ``any_subject`` (last line).

``python manage.py issue_subject_token --tenant acme --agent support-bot --user user-42``

The product's backend does the same with ``memory_core.subject_tokens.subject_token_issue``
after it has authenticated the user the agent is about to serve.
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core.models import Agent
from memory_core.subject_tokens import subject_token_issue


class Command(BaseCommand):
    help = "Issue a signed, expiring token that lets one agent act for one subject."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--agent", required=True)
        parser.add_argument("--user", required=True, help="The subject's external id.")

    def handle(self, *args, tenant, agent, user, **options):
        row = Agent.objects.filter(tenant__slug=tenant, name=agent).first()
        if row is None:
            raise CommandError(f"No agent {agent!r} in tenant {tenant!r}.")
        self.stdout.write(
            subject_token_issue(tenant_id=row.tenant_id, agent_id=row.id, user_id=user)
        )
