"""Following a deletion operation from a management command (``delete_tenant``,
``delete_subject``): its status and steps, polled until it settles."""

from __future__ import annotations

import time

from memory_core.deletion.runner import FINAL
from memory_core.rls import tenant_scope


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
