"""Load the demo (idempotent): tenants, subjects with portal logins, a reviewer, an agent key,
and the memories of the seed's iOS project example."""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import Q

from memory_core.evaluation.dataset import load_dataset_memories
from memory_core.models import ApiKey, PortalMembership, Subject, Tenant
from memory_core.rls import platform_command
from memory_core.services.api_keys import agent_ensure, api_key_create, api_key_revoke

DEMO_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "demo_memories.json"

# Demo logins: for a local machine only. `make run` prints them.
ADMIN = ("admin", "memledger-admin")
END_USERS = [
    ("alice", "memledger-alice", "tenant-a", "user-42"),
    ("bob", "memledger-bob", "tenant-a", "user-77"),
]
REVIEWER = ("reviewer", "memledger-reviewer", "tenant-a")
DEMO_AGENT = ("tenant-a", "coder")


# What ``_logins_and_key`` returns for a deactivated demo agent, instead of a key.
DEACTIVATED = "deactivated"


class Command(BaseCommand):
    help = "Load the demo data (idempotent) and print the logins and a fresh demo API key."

    @platform_command
    def handle(self, *args, **options):
        # A demo tenant deleted since (delete_tenant, the admin action) takes no new rows
        # (migration 0011): it is left as its deletion left it, and the rest is loaded.
        deleted = set(Tenant.objects.exclude(deleted_at=None).values_list("slug", flat=True))
        demo = json.loads(DEMO_FILE.read_text())
        gone = sorted(deleted & {entry["tenant"] for entry in demo["memories"]})
        data = {**demo, "memories": [m for m in demo["memories"] if m["tenant"] not in deleted]}
        demo_tenant_live = DEMO_AGENT[0] not in deleted  # the logins' and the key's tenant
        raw_key = None
        with transaction.atomic():
            loaded = load_dataset_memories(data)
            if _admin_missing():
                get_user_model().objects.create_superuser(
                    ADMIN[0], "admin@example.invalid", ADMIN[1]
                )
            if demo_tenant_live:
                raw_key = self._logins_and_key()
        self.stdout.write(
            f"Demo memories: {len(loaded.memory_ids)} in tenants "
            f"{', '.join(sorted(loaded.tenants)) or '(none)'}"
        )
        if loaded.deleted:
            self.stdout.write(
                f"Demo memories deleted since an earlier load, not loaded again: "
                f"{len(loaded.deleted)}"
            )
        for slug in gone:
            self.stdout.write(f"Demo tenant {slug} was deleted: left as its deletion left it.")
        self._print_admin()
        if raw_key is None:
            self.stdout.write(
                f"No end-user or reviewer login and no demo key: demo tenant {DEMO_AGENT[0]} "
                "was deleted (a fresh database gets the whole demo again)."
            )
            return
        for username, password, _, _ in END_USERS:
            self._print_login(username, password)
        self._print_login(REVIEWER[0], REVIEWER[1])
        if raw_key == DEACTIVATED:
            self.stdout.write(
                f"No demo API key: agent {DEMO_AGENT[1]} of {DEMO_AGENT[0]} was deactivated (the "
                "admin); reactivate it there for a key, or make one for another agent with "
                "`manage.py create_agent_key`."
            )
            return
        self.stdout.write(f"Demo agent API key ({DEMO_AGENT[0]}/{DEMO_AGENT[1]}): {raw_key}")

    def _print_admin(self) -> None:
        """Print the demo's admin login while it is a superuser, or the superusers that hold
        its place: the demo makes none while one exists, made by an operator first or the
        demo's renamed, and a line naming ``admin`` named a login that was never there (stop
        61's reviews), or one demoted from superuser (stop 62's audit of commands)."""
        users = get_user_model()
        if users.objects.filter(username=ADMIN[0], is_superuser=True).exists():
            self.stdout.write(f"Admin login:    {ADMIN[0]} / {_password_shown(*ADMIN)}")
            return
        names = users.objects.filter(is_superuser=True).values_list("username", flat=True)
        if not names:
            self.stdout.write(
                f"Admin login:    none: login {ADMIN[0]} is no longer a superuser (left as it "
                "is) and no other is; make one with `manage.py createsuperuser`."
            )
            return
        self.stdout.write(
            f"Admin login:    none made by the demo: superusers exist ({', '.join(sorted(names))})"
        )

    def _print_login(self, username: str, password: str) -> None:
        """Print a demo login as it is now: its membership's role, tenant and subject, and the
        demo's password only while it still logs in. An administrator may have changed any
        of them, and the demo's own were printed (stop 53's end-to-end review)."""
        membership = (
            PortalMembership.objects.select_related("tenant", "subject", "user")
            .filter(user__username=username)
            .first()
        )
        if membership is None:
            self.stdout.write(
                f"Demo login {username} has no portal membership (an administrator removed it, "
                "or the login): left as it is."
            )
            return
        role = "Reviewer" if membership.role == PortalMembership.Role.REVIEWER else "End user"
        shown = _password_shown(username, password)
        where = membership.tenant.slug
        if membership.subject is not None:
            where += f", {membership.subject.external_id}"
        self.stdout.write(f"{role} login: {username} / {shown}  ({where})")

    def _logins_and_key(self) -> str:
        """Make the demo logins of tenant-a that do not exist yet; revoke the last demo key
        and return a new one (``DEACTIVATED`` when the demo agent is: no key).

        A login that exists is left as an administrator left it: its password, its
        membership, its role and subject, or none (every start of ``make run`` put a removed
        membership back, and a changed one as the demo had it: stop 52's audit).
        """
        for username, password, tenant_slug, external_id in END_USERS:
            subject = Subject.objects.get(tenant__slug=tenant_slug, external_id=external_id)
            self._login(
                username,
                password,
                tenant=subject.tenant,
                role=PortalMembership.Role.END_USER,
                subject=subject,
            )
        self._login(
            REVIEWER[0],
            REVIEWER[1],
            tenant=Tenant.objects.get(slug=REVIEWER[2]),
            role=PortalMembership.Role.REVIEWER,
            subject=None,
        )
        agent = agent_ensure(tenant_slug=DEMO_AGENT[0], agent_name=DEMO_AGENT[1])
        if not agent.is_active:
            # Deactivated by an administrator: a key printed for it would never work (as
            # ``create_agent_key`` refuses), and its last key stays as the deactivation left it
            # (stop 52's audit of authentication).
            return DEACTIVATED
        # Keys are shown once: each run revokes the previous demo key and prints a new one.
        for key in ApiKey.objects.filter(agent=agent, name="demo", revoked_at__isnull=True):
            api_key_revoke(key=key)
        _, raw_key = api_key_create(agent=agent, name="demo")
        return raw_key

    def _login(self, username, password, **membership) -> None:
        """Make the login ``username`` with ``membership`` unless the login exists, or one
        holds such a membership already (the subject's, or the tenant's reviewer): an
        administrator may have renamed the demo's, whose subject's only membership it holds (a
        second was an IntegrityError that ended every start of ``make run``: stop 61's audit
        of logins), and a renamed reviewer got a second login with the published password
        (its review)."""
        users = get_user_model()
        subject = membership["subject"]
        held = PortalMembership.objects.filter(subject=subject) if subject else None
        if subject is None:
            held = PortalMembership.objects.filter(
                tenant=membership["tenant"], role=membership["role"]
            )
        if users.objects.filter(username=username).exists() or held.exists():
            return
        user = users.objects.create_user(username, password=password)
        PortalMembership.objects.create(user=user, **membership)


def _admin_missing() -> bool:
    """Return whether the demo should make its admin login: no superuser exists (any is the
    demo's admin, its own renamed say: a second one with the published password was made at
    every start, stop 61's review) and no login takes its name (one demoted from superuser
    is left as an administrator left it: making it again was an IntegrityError that ended
    every start of ``make run``, stop 62's audit of commands)."""
    users = get_user_model()
    return not users.objects.filter(Q(is_superuser=True) | Q(username=ADMIN[0])).exists()


def _password_shown(username: str, password: str) -> str:
    """Return the demo's ``password`` of the login ``username`` while it still logs in, else
    why not: an administrator may have deactivated the login or changed its password, and
    the demo's own were printed (stop 53's reviews)."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None or not user.is_active:
        return "(deactivated)"
    return password if user.check_password(password) else "(password changed)"
