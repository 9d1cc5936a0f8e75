"""Delete a whole tenant through a deletion operation (DESIGN.md: "a whole tenant")."""

import json
import math

from django.core.management.base import BaseCommand, CommandError

from memory_core.deletion.progress import operation_document, operation_wait
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import tenant_deletion_request
from memory_core.exceptions import Busy
from memory_core.models import DeletionOperation, Export, Memory, RetrievalTrace, Subject, Tenant
from memory_core.rls import platform_command, tenant_scope


class Command(BaseCommand):
    help = (
        "Delete every memory of the tenant SLUG and what derives from them (traces, exports, "
        "caches, evaluation files, its subjects' names, its portal logins), as one deletion "
        "operation; revoke its keys and refuse its requests from then on. Without --yes, print "
        "what would go and change nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the tenant's slug")
        parser.add_argument("--yes", action="store_true", help="really delete it")
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
    def handle(self, *args, slug, yes=False, run=False, wait=0, **options):
        if not 0 <= wait < math.inf:  # nan too: it compares false with every deadline
            raise CommandError("--wait takes a number of seconds, 0 or more.")
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"No tenant with the slug {slug!r}.")
        counts = _counts(tenant)
        if not yes:
            self.stdout.write(json.dumps({"tenant": slug, "would_delete": counts}, sort_keys=True))
            raise CommandError("Nothing was deleted: add --yes to delete this tenant.")
        try:
            operation = tenant_deletion_request(tenant_id=tenant.pk, requested_by="delete_tenant")
        except Busy as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        self.stderr.write(
            f"tenant {slug}: deletion operation {operation.pk} "
            f"({'already requested' if operation.already_requested else 'requested'}; "
            f"{len(operation.memory_ids)} memories)"
        )
        if run:
            status = deletion_run(operation_id=operation.pk)
            self.stderr.write(f"ran its steps here: {status}")
        elif wait:
            operation_wait(self.stderr.write, operation, wait)
        document = operation_document(operation)
        self.stdout.write(
            json.dumps({"tenant": slug, **document, "counts": counts}, sort_keys=True)
        )
        if (run or wait) and document["status"] != DeletionOperation.State.COMPLETED:
            raise CommandError(
                f"operation {operation.pk} is {document['status']}, not completed: see its steps "
                "(a worker and the beat sweep carry on with it)."
            )


def _counts(tenant) -> dict:
    with tenant_scope(tenant.pk):
        return {
            "memories": Memory.objects.filter(tenant=tenant).exclude(status="deleted").count(),
            "subjects": Subject.objects.filter(tenant=tenant).count(),
            "traces": RetrievalTrace.objects.filter(tenant=tenant).count(),
            "exports": Export.objects.filter(tenant=tenant).count(),
        }
