"""What ``delete_tenant`` and ``delete_subject`` share: ``--yes``, ``--run`` and ``--wait``,
and following the operation they requested until it settles."""

from __future__ import annotations

import math
import time

from django.core.management.base import CommandError

from memory_core.deletion.runner import FINAL, deletion_run
from memory_core.models import DeletionOperation
from memory_core.rls import tenant_scope


def add_follow_arguments(parser, *, what: str) -> None:
    parser.add_argument("--yes", action="store_true", help=f"really delete {what}")
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


def check_wait(wait: float) -> None:
    if not 0 <= wait < math.inf:  # nan too: it compares false with every deadline
        raise CommandError("--wait takes a number of seconds, 0 or more.")


def follow(command, operation, *, label: str, run: bool, wait: float) -> dict:
    """Say what was requested, run or wait for the steps as asked, and return the operation's
    document (id, status, steps)."""
    state = "already requested" if operation.already_requested else "requested"
    command.stderr.write(
        f"{label}: deletion operation {operation.pk} ({state}; "
        f"{len(operation.memory_ids)} memories)"
    )
    if run:
        command.stderr.write(f"ran its steps here: {deletion_run(operation_id=operation.pk)}")
    elif wait:
        operation_wait(command.stderr.write, operation, wait)
    return operation_document(operation)


def require_completed(document: dict, *, run: bool, wait: float) -> None:
    """CommandError when the command ran or waited for the operation and it did not complete."""
    if (run or wait) and document["status"] != DeletionOperation.State.COMPLETED:
        raise CommandError(
            f"operation {document['operation_id']} is {document['status']}, not completed: see "
            "its steps (a worker and the beat sweep carry on with it)."
        )


def operation_document(operation) -> dict:
    """Return the operation's id, status and each step's status, read afresh."""
    with tenant_scope(operation.tenant_id):
        operation.refresh_from_db()
        steps = {step.store: step.status for step in operation.steps.order_by("id")}
    return {"operation_id": str(operation.pk), "status": operation.status, "steps": steps}


def operation_wait(write, operation, seconds: float) -> None:
    """Poll the operation until it settles or ``seconds`` pass, calling ``write`` with a line
    at each change."""
    deadline = time.monotonic() + seconds
    seen = None
    while True:
        document = operation_document(operation)
        shown = (document["status"], document["steps"])
        if shown != seen:
            pending = [store for store, state in document["steps"].items() if state != "verified"]
            write(
                f"{document['status']}: {len(document['steps']) - len(pending)}/"
                f"{len(document['steps'])} steps verified"
                + (f" (left: {', '.join(pending)})" if pending else "")
            )
            seen = shown
        if document["status"] in FINAL or time.monotonic() >= deadline:
            return
        time.sleep(0.5)
