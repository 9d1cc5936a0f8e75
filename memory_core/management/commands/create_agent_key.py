"""Create (if missing) a tenant and an agent, and print a new API key as the last line."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory_core.exceptions import ValidationFailed
from memory_core.management.commands._options import check_texts
from memory_core.rls import platform_command
from memory_core.services.api_keys import agent_ensure, agent_grant_set, api_key_create


class Command(BaseCommand):
    help = "Create the tenant and agent if missing and print a new API key (last line of output)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="Tenant slug.")
        parser.add_argument("--agent", required=True, help="Agent name.")
        parser.add_argument("--name", default="", help="A label for the key.")
        parser.add_argument(
            "--issues-subject-tokens",
            action="store_true",
            help="Grant the agent issues_subject_tokens: its key is the product backend's, "
            "which asks POST /api/v1/subject-tokens for its agents' subject tokens.",
        )

    @platform_command
    def handle(self, *args, tenant, agent, name, issues_subject_tokens, **options):
        check_texts({"--tenant": tenant, "--agent": agent, "--name": name})
        if not tenant.strip() or not agent.strip():
            raise CommandError("--tenant and --agent must not be empty.")
        try:
            with transaction.atomic():  # a refused --name creates no tenant or agent either
                agent_row = agent_ensure(tenant_slug=tenant.strip(), agent_name=agent.strip())
                if not agent_row.is_active:
                    # api_key_resolve refuses every key of an inactive agent: a key printed
                    # for it would never work.
                    raise ValidationFailed(
                        f"Agent {agent_row.name!r} of tenant {agent_row.tenant.slug!r} is "
                        "deactivated: its keys are refused (reactivate it in the admin first)."
                    )
                if issues_subject_tokens and not agent_row.issues_subject_tokens:
                    if not agent_row.any_subject:
                        raise ValidationFailed(
                            f"Agent {agent_row.name!r} acts only for its tokens' subjects, "
                            "so it cannot issue subject tokens (grant it any_subject first)."
                        )
                    # Journaled, as the admin's form's grants are.
                    agent_grant_set(agent=agent_row, issues_subject_tokens=True)
                key, raw_key = api_key_create(agent=agent_row, name=name)
        except ValidationFailed as exc:
            raise CommandError(f"{exc.message} Nothing was created.") from exc
        issuer = " It may issue subject tokens." if agent_row.issues_subject_tokens else ""
        self.stdout.write(
            f"Tenant {agent_row.tenant.slug} ({agent_row.tenant_id}), agent {agent_row.name} "
            f"({agent_row.id}), key {key.prefix}.{issuer} Store the key now: it is not shown "
            "again."
        )
        self.stdout.write(raw_key)
