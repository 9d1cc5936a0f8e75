"""Delete a whole tenant through a deletion operation (DESIGN.md: "a whole tenant")."""

import json

from django.core.management.base import BaseCommand, CommandError

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import tenant_deletion_request
from memory_core.exceptions import Busy
from memory_core.management.commands._options import check_run_or_wait, check_texts
from memory_core.management.deletion_follow import (
    add_follow_arguments,
    check_wait,
    follow,
    require_completed,
)
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
        add_follow_arguments(parser, what="it")

    @platform_command
    def handle(self, *args, slug, yes=False, run=False, wait=0, **options):
        check_wait(wait)
        check_run_or_wait(run=run, wait=wait)
        check_texts({"slug": slug})
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
        document = follow(self, operation, label=f"tenant {slug}", run=run, wait=wait)
        # Asked again, the request re-drove the tenant's other dead-lettered deletions (a
        # memory's, a key's): run here too, and unfinished, the command does not say completed
        # (it did, while they waited: stop 53's end-to-end review).
        others = DeletionOperation.objects.filter(tenant_id=tenant.pk).exclude(pk=operation.pk)
        unfinished = others.exclude(status=DeletionOperation.State.COMPLETED).order_by("pk")
        for other in unfinished.values_list("pk", flat=True) if run else ():
            self.stderr.write(f"re-driven deletion {other}: {deletion_run(operation_id=other)}")
        waiting = [str(pk) for pk in unfinished.values_list("pk", flat=True)]
        self.stdout.write(
            json.dumps(
                {"tenant": slug, **document, "counts": counts, "others_unfinished": waiting},
                sort_keys=True,
            )
        )
        require_completed(document, run=run, wait=wait)
        if (run or wait) and waiting:
            raise CommandError(
                f"{len(waiting)} other deletion(s) of the tenant are not completed "
                f"({', '.join(waiting)}): see their steps (a worker and the beat sweep carry on "
                "with them)."
            )


def _counts(tenant) -> dict:
    with tenant_scope(tenant.pk):
        return {
            "memories": Memory.objects.filter(tenant=tenant).exclude(status="deleted").count(),
            "subjects": Subject.objects.filter(tenant=tenant).count(),
            "traces": RetrievalTrace.objects.filter(tenant=tenant).count(),
            "exports": Export.objects.filter(tenant=tenant).count(),
        }
