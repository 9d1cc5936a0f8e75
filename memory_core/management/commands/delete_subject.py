"""Delete a subject's memories (or one memory_key of them, or one memory and its history)
through a deletion operation, with no time limit: the way for a deletion without waiting for a
worker (docs/operations.md, "Scaling"), for one too long for a request's time, and for a
queued deletion (a whole subject's or a key's) made now instead of by a worker."""

import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import (
    deletion_request,
    queued_subject_deletion_run,
    traced_subject_deletion_request,
    traced_user,
    with_predecessors,
)
from memory_core.exceptions import DomainError
from memory_core.management.commands._options import check_run_or_wait, check_texts
from memory_core.management.deletion_follow import (
    add_follow_arguments,
    check_wait,
    follow,
    require_completed,
)
from memory_core.models import DeletionOperation, Memory, Status, Subject, Tenant
from memory_core.principals import SystemPrincipal
from memory_core.rls import platform_command, tenant_atomic, tenant_scope
from memory_core.text import identifier

FAILED = DeletionOperation.State.FAILED


class Command(BaseCommand):
    help = (
        "Delete every memory of the subject USER of the tenant SLUG (with --key, only those on "
        "that memory_key; with --memory, only that memory and the older versions it "
        "supersedes) and what derives from them, as one deletion operation, however long "
        "the request takes. A whole subject also loses its exports and traces, and a user no "
        "subject names yet whose retrievals left traces is deleted so (their subject made "
        "first). Without --yes, print what would go and change nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the tenant's slug")
        parser.add_argument("user", help="the subject's external id (the user's id)")
        parser.add_argument(
            "--key", default=None, help="delete only the memories on this key (not empty)"
        )
        parser.add_argument(
            "--memory",
            default=None,
            metavar="ID",
            help=(
                "delete only this memory (its id) and the older versions it supersedes: one "
                "too long for a request's time (422 deletion_too_large)"
            ),
        )
        add_follow_arguments(parser, what="them")

    @platform_command
    def handle(
        self, *args, slug, user, key=None, memory=None, yes=False, run=False, wait=0, **options
    ):
        check_wait(wait)
        check_run_or_wait(run=run, wait=wait)
        check_texts({"slug": slug, "user": user, "--key": key, "--memory": memory})
        if key is not None and memory is not None:
            raise CommandError(
                "Give --key or --memory, not both: --memory deletes one memory and its "
                "history, --key every memory on the key. Nothing was deleted."
            )
        memory_id = _memory_id(memory)
        if key is not None and not key.strip():
            # An empty --key (``--key "$KEY"`` with KEY unset) would otherwise widen the
            # deletion to the whole subject, as a misspelt field never does over the API.
            raise CommandError(
                "--key is empty: name the memory_key to delete, or leave --key out to delete "
                "the whole subject. Nothing was deleted."
            )
        tenant = Tenant.objects.filter(slug=slug, deleted_at=None).first()
        if tenant is None:
            if Tenant.objects.filter(slug=slug).exists():  # not a typo: delete_tenant knows it
                raise CommandError(
                    f"The tenant {slug!r} was deleted: its deletion removed every person's "
                    "memories, so there is nothing to delete. Nothing was deleted."
                )
            raise CommandError(f"No tenant with the slug {slug!r}.")
        # As every request reads them (trimmed, in NFC): "José" from a macOS shell is NFD.
        user, key = identifier(user), identifier(key or "")
        target = {"tenant": slug, "subject": user, **({"memory_key": key} if key else {})}
        if memory_id is not None:
            target["memory_id"] = str(memory_id)
        principal = SystemPrincipal(tenant_id=tenant.pk, name="delete_subject")
        with tenant_scope(tenant.pk):
            subject = Subject.objects.filter(tenant=tenant, external_id=user).first()
            # A person known only from the traces of their retrievals: their whole deletion
            # makes their subject (``traced_subject_deletion_request``), and removes those traces.
            traced = (
                subject is None
                and not key
                and memory_id is None
                and traced_user(principal=principal, external_id=user)
            )
            if subject is None and not traced:
                raise CommandError(f"No subject {user!r} in the tenant {slug!r}.")
            memories = Memory.objects.filter(tenant=tenant, subject=subject)
            if key:
                memories = memories.filter(memory_key=key)
            if memory_id is not None:
                chosen = memories.filter(pk=memory_id).first()
                if chosen is None:
                    raise CommandError(
                        f"No memory {memory_id} of the subject {user!r} in the tenant {slug!r}."
                    )
                # What the request deletes: the memory and every older version it supersedes.
                memories = memories.filter(pk__in_array=with_predecessors(memory_id))
            count = memories.exclude(status=Status.DELETED).count()
        if not yes:
            self.stdout.write(json.dumps({**target, "would_delete": count}, sort_keys=True))
            raise CommandError("Nothing was deleted: add --yes to delete them.")
        try:
            with tenant_atomic(tenant.pk):
                operation = None
                if traced:
                    operation = traced_subject_deletion_request(
                        principal=principal, external_id=user, time_limited=False
                    )
                    subject = operation.subject
                # The mark as it stands now, locked as the queued run locks it (read before
                # this transaction, it may have been made and another queued since). This row
                # only: ``first()`` orders by the tenant, whose row it locked too.
                queued_key = (
                    Subject.objects.select_for_update(no_key=True, of=("self",))
                    .filter(pk=subject.pk, deletion_queued_at__isnull=False)
                    .values_list("deletion_queued_key", flat=True)
                    .first()
                )
                if queued_key is not None:
                    # A request queued by the portal or the API (the subject's, or a key's):
                    # made now, as its asker's, under the id they were given. It is the
                    # operator's request when it is the same, or the whole subject's (it
                    # deleted the key too: asked for again it would be NotFound); else the
                    # operator's follows (a whole subject's is refused while a key's waits).
                    queued = queued_subject_deletion_run(subject.pk)
                    still = Subject.objects.filter(pk=subject.pk, deletion_queued_at__isnull=False)
                    if memory_id is not None:
                        # The queued request took the memory (the whole subject's, or its
                        # key's): it is the operator's; else the memory's follows.
                        if queued_key in ("", chosen.memory_key):
                            operation = queued
                    elif queued_key in ("", key):
                        operation = queued
                    elif not key and memory_id is None and still.exists():
                        # Another deletion not completed yet took the queued key's memories
                        # (``_queued_taken_meanwhile``): the mark stays until it has, and the
                        # whole subject's request is refused while a key's waits. Said so,
                        # not "retry in a few seconds" (stop 59's audit of the commands).
                        raise CommandError(
                            f"The queued deletion of the key {queued_key!r} waits for deletion "
                            f"{queued.pk}, not completed yet, which took its memories "
                            "meanwhile: a worker makes the queued request once that one's "
                            "worker has completed it, and the whole subject's deletion is "
                            "refused until then. Nothing was deleted: retry once deletion "
                            f"{queued.pk} has completed."
                        )
                if operation is None:
                    operation = deletion_request(
                        principal=principal,
                        **(
                            {"memory_id": memory_id}
                            if memory_id is not None
                            else {"subject_id": subject.pk, "memory_key": key or None}
                        ),
                        time_limited=False,
                    )
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        document = follow(self, operation, label=user, run=run, wait=wait)
        # The request re-drove the subject's dead-lettered deletions, and a queued one was
        # made before the operator's: run here too, and unfinished, the command does not say
        # completed (it did, while they waited: stop 54's audit of deletion), as
        # ``delete_tenant`` does.
        # A dead-lettered one its request did not re-drive (a key's request re-drives none)
        # is no worker's: named apart, it does not fail the command, which said "a worker
        # carries on with them" (stop 54's review).
        others = DeletionOperation.objects.filter(tenant_id=tenant.pk, subject=subject)
        others = others.exclude(pk=operation.pk).order_by("pk")
        dead = [str(pk) for pk in others.filter(status=FAILED).values_list("pk", flat=True)]
        unfinished = others.exclude(status__in=[DeletionOperation.State.COMPLETED, FAILED])
        for other in unfinished.values_list("pk", flat=True) if run else ():
            self.stderr.write(f"other deletion {other}: {deletion_run(operation_id=other)}")
        # Read after the run: one it re-drove or ran that failed again is not completed (it
        # was in neither list, and the command said completed: the stop's review).
        waiting = [
            str(pk)
            for pk in others.exclude(status=DeletionOperation.State.COMPLETED).values_list(
                "pk", flat=True
            )
            if str(pk) not in dead
        ]
        self.stdout.write(
            json.dumps(
                {
                    **target,
                    **document,
                    "memories": count,
                    "others_unfinished": waiting,
                    "others_dead_lettered": dead,
                },
                sort_keys=True,
            )
        )
        require_completed(document, run=run, wait=wait)
        if (run or wait) and waiting:
            raise CommandError(
                f"{len(waiting)} other deletion(s) of the subject are not completed "
                f"({', '.join(waiting)}): see their steps (a worker and the beat sweep carry on "
                "with them)."
            )


def _memory_id(memory: str | None) -> uuid.UUID | None:
    """Return ``--memory`` as a UUID, or None without it; a CommandError for anything else."""
    if memory is None:
        return None
    try:
        return uuid.UUID(memory.strip())
    except ValueError:
        raise CommandError(
            f"--memory must be a memory's id (a UUID), not {memory!r}. Nothing was deleted."
        ) from None
