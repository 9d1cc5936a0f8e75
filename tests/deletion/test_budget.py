"""A deletion request made over HTTP has a time budget (MEMLEDGER_DELETION_REQUEST_BUDGET):
past it the request ends, rolled back, with 422 deletion_too_large, instead of a web worker
killed mid-transaction; ``manage.py delete_subject`` deletes without one."""

import json
import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.urls import reverse

from memory_core.deletion.services import deletion_request
from memory_core.exceptions import OverBudget
from memory_core.models import DeletionOperation, Memory, Tombstone
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import MemoryFactory, insert_memories

pytestmark = pytest.mark.django_db

NO_TIME = 1e-9  # runs out before the first statement


def statement_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout')")
        return cursor.fetchone()[0]


def untouched(subject, count):
    memories = Memory.objects.filter(subject=subject)
    assert memories.filter(status="active").exclude(content="").count() == count
    assert not DeletionOperation.objects.filter(subject=subject).exists()
    assert not Tombstone.objects.filter(subject_id=subject.id).exists()


def test_a_request_out_of_time_changes_nothing_and_says_why(settings, owner, memories):
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    before = statement_timeout()
    with pytest.raises(OverBudget) as refused:
        deletion_request(principal=system, subject_id=owner.id)
    assert refused.value.code == "deletion_too_large" and refused.value.status == 422
    assert "nothing was deleted" in refused.value.message
    assert "manage.py delete_subject" in refused.value.message
    untouched(owner, len(memories))
    assert statement_timeout() == before


def test_a_request_cut_short_inside_a_request_gives_the_timeout_back(settings, owner):
    """Inside a request's transaction (ATOMIC_REQUESTS; here the test's) the deletion is a
    savepoint: rolling it back also undoes its statement_timeout, so the rest of the request
    runs unbounded as before."""
    insert_memories(owner, 3000)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 0.02  # 3,000 rows take ten times as long
    before = statement_timeout()
    with pytest.raises(OverBudget):
        deletion_request(principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id)
    assert statement_timeout() == before
    untouched(owner, 3000)


def test_a_request_within_its_budget_deletes_and_gives_the_timeout_back(settings, owner, memories):
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    before = statement_timeout()
    operation = deletion_request(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
    )
    assert sorted(operation.memory_ids) == sorted(m.id for m in memories)
    assert set(Memory.objects.filter(subject=owner).values_list("status", flat=True)) == {"deleted"}
    assert statement_timeout() == before  # the rest of the request is not bounded by it


def test_an_unlimited_request_ignores_the_budget(settings, owner, memories):
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    operation = deletion_request(
        principal=SystemPrincipal(tenant_id=owner.tenant_id),
        subject_id=owner.id,
        time_limited=False,
    )
    assert len(operation.memory_ids) == len(memories)


@pytest.mark.django_db(transaction=True)
def test_a_statement_still_running_when_the_budget_ends_is_cancelled(settings, owner):
    """The budget bounds the statements themselves (a lock wait here): the request does not
    wait past it for rows another transaction holds, and leaves no trace."""
    memories = [MemoryFactory(subject=owner) for _ in range(3)]
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 0.5

    def hold_a_row():
        Memory.objects.select_for_update().get(pk=memories[1].pk)

    with held_in_another_transaction(owner.tenant_id, hold_a_row):
        with tenant_scope(owner.tenant_id), pytest.raises(OverBudget) as refused:
            deletion_request(
                principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
            )
        assert refused.value.details == {"budget_seconds": 0.5}
        assert "QueryCanceled" in type(refused.value.__cause__.__cause__).__name__
    with tenant_scope(owner.tenant_id):
        untouched(owner, len(memories))


def test_the_api_answers_422_deletion_too_large_for_a_memory(settings, api_client, owner, memories):
    """A memory's deletion is not queued (a key's is: tests/deletion/test_queued_key.py):
    delete in parts, or run the command."""
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    body = {"memory_id": str(memories[0].pk)}
    response = api_client.post("/api/v1/deletions", body, format="json")
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "deletion_too_large"
    assert error["details"] == {"budget_seconds": NO_TIME}
    # The way out it names is one memory's: "Delete by memory_key in parts" deleted every
    # memory on the key (stop 62's audit of the commands).
    assert "delete_subject` with --memory" in error["message"]
    assert "memory_key" not in error["message"]
    untouched(owner, len(memories))


@pytest.mark.parametrize("why", ["out of time", "too many"])
def test_the_api_queues_a_whole_subject_too_large_for_a_request(
    settings, api_client, agent, owner, memories, why
):
    """As the portal does: the agent gets the id the worker's operation will have."""
    from memory_core.deletion.services import queued_subject_deletion_run

    if why == "out of time":
        settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    else:
        settings.MEMLEDGER_DELETION_QUEUE_ABOVE = len(memories) - 1
    response = api_client.post("/api/v1/deletions", {"subject": owner.external_id}, format="json")
    assert response.status_code == 202, response.content
    queued = response.json()
    assert queued["status"] == "queued"
    assert response["Location"] == f"/api/v1/deletions/{queued['operation_id']}"
    owner.refresh_from_db()
    assert (owner.deletion_queued_by_agent_id, owner.deletion_queued_by) == (agent.pk, None)
    untouched(owner, len(memories))

    operation = queued_subject_deletion_run(owner.pk)
    assert str(operation.pk) == queued["operation_id"]
    assert (operation.requested_by_type, operation.requested_by_id) == ("agent", str(agent.pk))
    assert operation.requested_at == owner.deletion_queued_at
    assert sorted(operation.memory_ids) == sorted(m.pk for m in memories)


@pytest.mark.parametrize("why", ["out of time", "above the threshold"])
def test_an_agent_that_does_not_reach_the_whole_subject_is_refused_not_queued(
    settings, tenant, owner, memories, why
):
    """The worker deletes a queued subject whole for whoever asked, so the queue checks that
    they reach all of it, even when the request ran out of time before it checked: a narrow
    agent's request was queued, and the worker then deleted memories outside its grant."""
    from memory_core.deletion.services import subject_deletion_request_or_queue
    from memory_core.exceptions import PermissionDenied
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    narrow = AgentPrincipal.from_agent(
        AgentFactory(tenant=tenant, read_types=["task_state"], write_types=["task_state"])
    )
    if why == "out of time":
        settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    else:
        settings.MEMLEDGER_DELETION_QUEUE_ABOVE = len(memories) - 1
    with pytest.raises(PermissionDenied) as refused:
        subject_deletion_request_or_queue(principal=narrow, subject_id=owner.id)
    assert refused.value.code == "subject_not_fully_granted"
    owner.refresh_from_db()
    assert owner.deletion_queued_at is None
    untouched(owner, len(memories))


def test_the_command_asks_first_then_deletes_without_a_budget(settings, owner, memories, capsys):
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    slug, user = owner.tenant.slug, owner.external_id
    with pytest.raises(CommandError, match="--yes"):
        call_command("delete_subject", slug, user)
    assert json.loads(capsys.readouterr().out)["would_delete"] == len(memories)
    untouched(owner, len(memories))

    call_command("delete_subject", slug, user, "--key", memories[0].memory_key, "--yes")
    report = json.loads(capsys.readouterr().out)
    assert (report["memory_key"], report["memories"]) == (memories[0].memory_key, 1)
    assert Memory.objects.get(pk=memories[0].pk).status == "deleted"
    assert Memory.objects.filter(subject=owner, status="active").count() == len(memories) - 1

    call_command("delete_subject", slug, user, "--yes", "--run")
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "completed" and set(report["steps"].values()) == {"verified"}
    operation = DeletionOperation.objects.get(pk=report["operation_id"])
    assert (operation.target, operation.requested_by_id) == ("subject", "delete_subject")
    assert not Memory.objects.filter(subject=owner).exclude(status="deleted").exists()


def test_the_command_refuses_what_it_cannot_find(owner):
    with pytest.raises(CommandError, match="No tenant"):
        call_command("delete_subject", "no-such-tenant", owner.external_id, "--yes")
    with pytest.raises(CommandError, match="No subject"):
        call_command("delete_subject", owner.tenant.slug, "nobody", "--yes")
    with pytest.raises(CommandError, match="No memory with this key"):
        call_command("delete_subject", owner.tenant.slug, owner.external_id, "--key", "x", "--yes")
    with pytest.raises(CommandError, match="--wait"):
        call_command("delete_subject", owner.tenant.slug, owner.external_id, "--wait", "nan")


def test_the_admin_action_shows_the_refusal(settings, admin_client, owner, memories):
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    body = {"action": "request_subject_deletion", "_selected_action": [str(owner.pk)]}
    page = admin_client.post("/admin/memory_core/subject/", body, follow=True)
    assert page.status_code == 200
    assert "manage.py delete_subject" in page.content.decode()
    untouched(owner, len(memories))

    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    page = admin_client.post("/admin/memory_core/subject/", body, follow=True)
    assert "deletion operation" in page.content.decode()
    assert not Memory.objects.filter(subject=owner, status="active").exists()


def test_the_admin_tenant_deletion_has_the_budget_and_the_command_has_none(
    settings, admin_client, tenant, owner, memories
):
    from memory_core.models import Tenant

    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    body = {
        "action": "request_tenant_deletion",
        "_selected_action": [str(tenant.pk)],
        "confirmed": "yes",
    }
    page = admin_client.post("/admin/memory_core/tenant/", body, follow=True)
    assert "manage.py delete_tenant" in page.content.decode()
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is None
    untouched(owner, len(memories))

    call_command("delete_tenant", tenant.slug, "--yes")
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is not None
    assert not Memory.objects.filter(tenant=tenant).exclude(status="deleted").exists()


def test_the_portal_says_a_single_deletion_took_too_long_in_its_own_words(settings, client, owner):
    from tests.portal.conftest import make_login

    memory = MemoryFactory(subject=owner)
    client.force_login(make_login("single", tenant=owner.tenant, role="end_user", subject=owner))
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    url = reverse("portal:memory-delete", args=[memory.pk])
    body = client.post(url, {"confirm": "on"}, follow=True).content.decode()
    assert "took longer than a page may wait" in body and "manage.py" not in body
    untouched(owner, 1)


def test_a_whole_subject_above_the_threshold_is_refused_before_any_work(settings, owner, memories):
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = len(memories) - 1
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    with pytest.raises(OverBudget) as refused:
        deletion_request(principal=system, subject_id=owner.id)
    assert refused.value.code == "deletion_too_large"
    assert refused.value.details["queue_above"] == len(memories) - 1
    assert "manage.py delete_subject" in refused.value.message
    untouched(owner, len(memories))
    # A key of it is not a whole subject; the command has no limit.
    deletion_request(principal=system, subject_id=owner.id, memory_key=memories[0].memory_key)
    operation = deletion_request(principal=system, subject_id=owner.id, time_limited=False)
    assert len(operation.memory_ids) == len(memories) - 1


def test_a_subject_above_the_queue_threshold_is_queued_with_no_request_budget_too(
    settings, api_client
):
    """``MEMLEDGER_DELETION_QUEUE_ABOVE``: a whole subject's or a key's deletion over HTTP of
    more memories is queued at once; ``MEMLEDGER_DELETION_REQUEST_BUDGET=0``: no time limit.
    With the budget at 0 the threshold was skipped and a subject of any size was deleted in
    the web request (stop 55's audit of the docs)."""
    from memory_core.models import Subject
    from tests.factories import write_body

    for index in range(3):
        body = write_body(memory_key=f"k.{index}", content=f"User prefers option {index}.")
        assert api_client.post("/api/v1/memories", body, format="json").status_code == 201
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 0.0
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2

    response = api_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "queued", response.json()
    subject = Subject.objects.get(external_id="user-1")
    assert subject.deletion_queued_at is not None
    assert Memory.objects.filter(subject=subject, status="active").count() == 3


def test_the_command_deletes_one_memory_and_its_history_without_a_budget(
    settings, owner, memories, capsys
):
    """Stop 62's audit of the commands: a memory whose deletion is too long for a request
    (422 ``deletion_too_large``) could only be deleted by an operator with its key's every
    memory (``--key``) or the whole subject, as the answer advised. ``--memory`` deletes the
    memory and the older versions it supersedes, asking first, with no time limit."""
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    first = memories[0]
    Memory.objects.filter(pk=first.pk).update(status="superseded")
    newer = MemoryFactory(
        subject=owner, memory_key=first.memory_key, supersedes=first, version=2, content="v2"
    )
    beside = MemoryFactory(subject=owner, memory_key=first.memory_key, scope_kind="global")
    slug, user = owner.tenant.slug, owner.external_id
    with pytest.raises(CommandError, match="--yes"):
        call_command("delete_subject", slug, user, "--memory", str(newer.pk))
    assert json.loads(capsys.readouterr().out)["would_delete"] == 2

    call_command("delete_subject", slug, user, "--memory", str(newer.pk), "--yes", "--run")
    report = json.loads(capsys.readouterr().out)
    assert (report["memory_id"], report["memories"], report["status"]) == (
        str(newer.pk),
        2,
        "completed",
    )
    operation = DeletionOperation.objects.get(pk=report["operation_id"])
    assert (operation.target, operation.requested_by_id) == ("memory", "delete_subject")
    assert sorted(operation.memory_ids) == sorted([first.pk, newer.pk])
    gone = Memory.objects.filter(status="deleted").values_list("pk", flat=True)
    assert set(gone) == {first.pk, newer.pk}
    assert Memory.objects.get(pk=beside.pk).status == "active"  # the key's other memory


def test_the_command_refuses_a_memory_it_cannot_find_or_name(owner, memories):
    slug, user = owner.tenant.slug, owner.external_id
    with pytest.raises(CommandError, match="must be a memory's id"):
        call_command("delete_subject", slug, user, "--memory", "not-a-uuid", "--yes")
    with pytest.raises(CommandError, match="No memory"):
        call_command("delete_subject", slug, user, "--memory", str(uuid.uuid4()), "--yes")
    other = MemoryFactory(tenant=owner.tenant)  # another subject's
    with pytest.raises(CommandError, match="No memory"):
        call_command("delete_subject", slug, user, "--memory", str(other.pk), "--yes")
    with pytest.raises(CommandError, match="not both"):
        call_command(
            "delete_subject", slug, user, "--memory", str(memories[0].pk), "--key", "k", "--yes"
        )
    untouched(owner, len(memories))
    assert Memory.objects.get(pk=other.pk).status == "active"
