"""Migration 0035: ``Memory.admitted`` is false for the rows stored before it that were never in
use: waiting and rejected writes (by their status, which the CHECK then ties to the column) and
revoked or expired ones whose trail holds a ``pending_approval`` and no ``approved``."""

import importlib

import pytest
from django.contrib.auth import get_user_model

from memory_core.models import Memory, Status
from memory_core.principals import ReviewerPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.reviews import review_approve
from memory_core.services.tasks import task_close
from memory_core.services.writes import memory_revoke, memory_write
from tests.factories import write_body
from tests.rls_support import run_as_a_migration

pytestmark = pytest.mark.django_db

NEVER_IN_USE = importlib.import_module("memory_core.migrations.0035_memory_admitted").NEVER_IN_USE


def _mark_never_in_use() -> None:
    run_as_a_migration(NEVER_IN_USE)


def test_rows_ended_while_they_waited_are_marked_and_the_others_kept(tenant):
    system = SystemPrincipal(tenant_id=tenant.id)
    reviewer = ReviewerPrincipal(
        tenant_id=tenant.id, user_id=get_user_model().objects.create_user("rev").id
    )

    def sensitive(key: str, **fields):
        data = write_body(memory_key=key, content="User is allergic to penicillin.", **fields)
        written = memory_write(principal=system, data=data)
        assert written.decision == "pending_approval", written.rule_codes
        return written

    with tenant_scope(tenant.id):
        revoked_waiting = sensitive("health.a").memory
        memory_revoke(principal=system, memory_id=revoked_waiting.id)
        # Scoped to the task: one merely carrying its task_id outlives the close (stop 57).
        expired_waiting = sensitive("health.b", scope="task:t-1", task_id="t-1").memory
        task_close(principal=system, user_id="user-1", task_id="t-1")
        approved = sensitive("health.c")
        review_approve(principal=reviewer, item_id=approved.review_item.id, reason="ok")
        memory_revoke(principal=system, memory_id=approved.memory.id)
        accepted = memory_write(principal=system, data=write_body(memory_key="style.a")).memory
        memory_revoke(principal=system, memory_id=accepted.id)
        waiting = sensitive("health.d").memory
        in_use = memory_write(principal=system, data=write_body(memory_key="style.b")).memory
    ended = [revoked_waiting.id, expired_waiting.id, approved.memory.id, accepted.id]
    # As a row stored before the column was: every one admitted by its default.
    Memory.objects.filter(pk__in=ended).update(admitted=True)

    _mark_never_in_use()

    rows = dict(Memory.objects.values_list("pk", "admitted"))
    assert (rows[revoked_waiting.id], rows[expired_waiting.id]) == (False, False)
    assert (rows[approved.memory.id], rows[accepted.id], rows[in_use.id]) == (True, True, True)
    assert rows[waiting.id] is False
    statuses = dict(Memory.objects.values_list("pk", "status"))
    assert statuses[expired_waiting.id] == Status.EXPIRED
    assert statuses[approved.memory.id] == statuses[revoked_waiting.id] == Status.REVOKED
