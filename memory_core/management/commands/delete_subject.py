"""Delete a subject's memories (or one memory_key of them) through a deletion operation, with
no time limit: the way for a subject too large for a request over HTTP (422
``deletion_too_large``, docs/operations.md, "Scaling")."""

import json
import math

from django.core.management.base import BaseCommand, CommandError

from memory_core.deletion.progress import operation_document, operation_wait
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exceptions import DomainError
from memory_core.models import DeletionOperation, Memory, Status, Subject, Tenant
from memory_core.principals import SystemPrincipal
from memory_core.rls import platform_command, tenant_atomic, tenant_scope


class Command(BaseCommand):
    help = (
        "Delete every memory of the subject USER of the tenant SLUG (with --key, only those on "
        "that memory_key) and what derives from them, as one deletion operation, however long "
        "the request takes. A whole subject also loses its exports and traces. Without --yes, "
        "print what would go and change nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the tenant's slug")
        parser.add_argument("user", help="the subject's external id (the user's id)")
        parser.add_argument("--key", default="", help="delete only the memories on this key")
        parser.add_argument("--yes", action="store_true", help="really delete them")
        parser.add_argument(
            "--run",
            action="store_true",
            help="run the operation's steps in this process instead of leaving them to a worker",
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=0,
            metavar="SECONDS",
            help="wait up to SECONDS for a worker to complete the operation, printing its steps",
        )

    @platform_command
    def handle(self, *args, slug, user, key="", yes=False, run=False, wait=0, **options):
        if not 0 <= wait < math.inf:  # nan too: it compares false with every deadline
            raise CommandError("--wait takes a number of seconds, 0 or more.")
        tenant = Tenant.objects.filter(slug=slug, deleted_at=None).first()
        if tenant is None:
            raise CommandError(f"No tenant with the slug {slug!r}.")
        key = key.strip()
        target = {"tenant": slug, "subject": user, **({"memory_key": key} if key else {})}
        with tenant_scope(tenant.pk):
            subject = Subject.objects.filter(tenant=tenant, external_id=user).first()
            if subject is None:
                raise CommandError(f"No subject {user!r} in the tenant {slug!r}.")
            memories = Memory.objects.filter(tenant=tenant, subject=subject)
            if key:
                memories = memories.filter(memory_key=key)
            count = memories.exclude(status=Status.DELETED).count()
        if not yes:
            self.stdout.write(json.dumps({**target, "would_delete": count}, sort_keys=True))
            raise CommandError("Nothing was deleted: add --yes to delete them.")
        try:
            with tenant_atomic(tenant.pk):
                operation = deletion_request(
                    principal=SystemPrincipal(tenant_id=tenant.pk, name="delete_subject"),
                    subject_id=subject.pk,
                    memory_key=key or None,
                    time_limited=False,
                )
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        self.stderr.write(
            f"{user}: deletion operation {operation.pk} "
            f"({'already requested' if operation.already_requested else 'requested'}; "
            f"{len(operation.memory_ids)} memories)"
        )
        if run:
            status = deletion_run(operation_id=operation.pk)
            self.stderr.write(f"ran its steps here: {status}")
        elif wait:
            operation_wait(self.stderr.write, operation, wait)
        document = operation_document(operation)
        self.stdout.write(json.dumps({**target, **document, "memories": count}, sort_keys=True))
        if (run or wait) and document["status"] != DeletionOperation.State.COMPLETED:
            raise CommandError(
                f"operation {operation.pk} is {document['status']}, not completed: see its steps "
                "(a worker and the beat sweep carry on with it)."
            )
