"""What ``delete_tenant`` and ``delete_subject`` share: ``--yes``, ``--run`` and ``--wait``,
and following the operation they requested until it settles."""

from __future__ import annotations

import math
import time

from django.core.management.base import CommandError

from memory_core.deletion.runner import FINAL, deletion_run
from memory_core.models import DeletionOperation, DeletionStep
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
        command.stderr.write(f"ran its steps here: {run_here(command.stderr.write, operation.pk)}")
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


def steps_line(status: str, steps: dict[str, str]) -> str:
    """Return the line that says how far an operation of ``status`` has got with ``steps``
    (each step's status by store): ``--wait``'s at each change, ``--run``'s at each step."""
    pending = [store for store, state in steps.items() if state != "verified"]
    return f"{status}: {len(steps) - len(pending)}/{len(steps)} steps verified" + (
        f" (left: {', '.join(pending)})" if pending else ""
    )


# The most characters of a failed step's error ``--run`` shows (its whole ``last_error``, up
# to 2,000, is in the operation's steps).
ERROR_SHOWN = 200


def run_here(write, operation_id) -> str:
    """Run the operation's unverified steps in this process (``deletion_run``), calling
    ``write`` with ``--wait``'s line as each step's verdict is made, the step and its time
    named; return the status the run left it in.

    At most two lines a step, whatever the deletion's size (one, and one more for each step
    of a phase that rolled back): a large deletion's steps take minutes, and ``--run`` said
    nothing until the last had run (stop 68's audit of the commands). A step not verified is
    told with its error, and one of a phase that rolled back as such: ``<step> failed`` was
    all it said, for a step whose purge the rollback undid too (stop 69's review)."""
    steps = dict(
        DeletionStep.objects.filter(operation_id=operation_id)
        .order_by("id")
        .values_list("store", "status")
    )

    def step_done(step, *, rolled_back: bool = False) -> None:
        steps[step.store] = step.status
        ms = (step.evidence or {}).get("ms")
        took = why = ""
        if isinstance(ms, int | float) and not rolled_back:
            took = f" in {ms:.0f} ms" if ms < 1000 else f" in {ms / 1000:.1f} s"
        # Why, for a step not verified: its error's first line, as last_error keeps it (the
        # phase's own for each step of a phase that rolled back, which undid its purge).
        error = next(iter((step.last_error or "").strip().splitlines()), "")
        if len(error) > ERROR_SHOWN:
            error = f"{error[:ERROR_SHOWN]}…"
        if rolled_back:
            why = f": its phase rolled back ({error})"
        elif step.status != DeletionStep.State.VERIFIED and error:
            why = f": {error}"
        write(f"{steps_line('running', steps)}; {step.store} {step.status}{took}{why}")

    return deletion_run(operation_id=operation_id, progress=step_done)


def operation_wait(write, operation, seconds: float) -> None:
    """Poll the operation until it settles or ``seconds`` pass, calling ``write`` with a line
    at each change."""
    deadline = time.monotonic() + seconds
    seen = None
    while True:
        document = operation_document(operation)
        shown = (document["status"], document["steps"])
        if shown != seen:
            write(steps_line(document["status"], document["steps"]))
            seen = shown
        if document["status"] in FINAL or time.monotonic() >= deadline:
            return
        time.sleep(0.5)
