"""Print a short-lived subject token for an agent without ``any_subject`` (last line).

``python manage.py issue_subject_token --tenant acme --agent support-bot --user user-42``

The product's backend does the same with ``memory_core.subject_tokens.subject_token_create``
after it has authenticated the user the agent is about to serve.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from memory_core.exceptions import SubjectRefused, is_tenant_deleted
from memory_core.management.commands._options import check_texts
from memory_core.models import Agent
from memory_core.rls import platform_command, tenant_scope
from memory_core.subject_tokens import subject_ensure, subject_id_problem, subject_token_issue
from memory_core.text import BIDI_CONTROLS, BIDI_CONTROLS_MESSAGE, identifier


class Command(BaseCommand):
    help = "Issue a signed, expiring token that lets one agent act for one subject."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--agent", required=True)
        parser.add_argument("--user", required=True, help="The subject's external id.")

    @platform_command
    def handle(self, *args, tenant, agent, user, **options):
        # The same refusals as POST /api/v1/subject-tokens (subject_token_grant and its
        # serializer): a token for nobody, or for an agent whose key is refused, never works.
        check_texts({"--tenant": tenant, "--agent": agent, "--user": user})
        user = identifier(user)  # as every request reads an id: "José" from macOS is NFD
        problem = subject_id_problem(user)
        if problem:
            raise CommandError(f"--user{problem}")
        agent = identifier(agent)  # names are stored in NFC (migration 0040)
        if BIDI_CONTROLS.search(agent):
            raise CommandError(f"--agent: {BIDI_CONTROLS_MESSAGE}")
        row = Agent.objects.select_related("tenant").filter(tenant__slug=tenant, name=agent)
        row = row.first()
        if row is None:
            raise CommandError(f"No agent {agent!r} in tenant {tenant!r}.")
        if row.tenant.deleted_at is not None:
            raise CommandError(f"Tenant {tenant!r} was deleted: its agents' keys are refused.")
        if not row.is_active:
            raise CommandError(
                f"Agent {agent!r} of tenant {tenant!r} is deactivated: its keys are refused "
                "(reactivate it in the admin first)."
            )
        with tenant_scope(row.tenant_id):
            try:
                subject_ensure(tenant_id=row.tenant_id, user_id=user)
            except SubjectRefused as exc:
                raise CommandError(exc.message) from exc
            except IntegrityError as exc:
                if not is_tenant_deleted(exc):
                    raise
                # Its deletion committed while the subject's row waited for the tenant's:
                # the trigger refused the row, and the command ended in a traceback (stop
                # 59's audit of the commands), as the API answers 410 tenant_deleted.
                raise CommandError(
                    f"Tenant {tenant!r} was deleted while the token was issued; no token issued."
                ) from exc
        self.stdout.write(
            subject_token_issue(tenant_id=row.tenant_id, agent_id=row.id, user_id=user)
        )
