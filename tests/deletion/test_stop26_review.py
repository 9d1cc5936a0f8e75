"""Review of the queued key deletions (stop 26): the operator's command and the admin's
subject form against a queued mark."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memory_core.deletion.services import deletion_request_or_queue
from memory_core.exceptions import DomainError
from memory_core.locks import subjects_shared_locked
from memory_core.models import DeletionOperation, Memory, Subject
from memory_core.principals import AgentPrincipal
from memory_core.rls import tenant_scope
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import AgentFactory, MemoryFactory
from tests.threads import in_thread

KEY = "style.answers"


@pytest.mark.django_db
def test_delete_subject_with_a_key_while_the_whole_subject_is_queued_makes_the_queued_one(
    settings, tenant, owner, owner_principal
):
    """The queued whole-subject request covers the operator's key: it is made and reported.
    Before, the command made it, then asked for the key, already scrubbed by it: 404
    ``not_found`` ("No memory with this key"), and the whole transaction rolled back, the
    queued request with it, though the dry run counted the key's memories."""
    on_key = [MemoryFactory(subject=owner, memory_key=KEY) for _ in range(3)]
    other = MemoryFactory(subject=owner, memory_key="style.language")
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    queued = deletion_request_or_queue(principal=owner_principal, subject_id=owner.pk)
    assert queued.status == "queued"

    out = io.StringIO()
    call_command(
        "delete_subject", tenant.slug, owner.external_id, "--key", KEY, "--yes", stdout=out
    )
    report = json.loads(out.getvalue())
    assert report["operation_id"] == str(queued.pk)
    made = DeletionOperation.objects.get(pk=queued.pk)
    assert (made.target, made.requested_by_type) == ("subject", "user")
    statuses = Memory.objects.filter(pk__in=[m.pk for m in [*on_key, other]])
    assert set(statuses.values_list("status", flat=True)) == {"deleted"}
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None


@pytest.mark.django_db
def test_the_admin_subject_form_does_not_rewrite_a_queued_deletions_mark(
    settings, client, tenant, owner
):
    """The worker deletes what the mark says, for whom it says: the admin shows the mark,
    never edits it. Before, ``deletion_queued_key`` and ``deletion_queued_by_agent`` were
    form fields: saving the subject retargeted an agent's queued key deletion (another key,
    or "" for every memory of the subject) and its requester."""
    agent = AgentFactory(tenant=tenant)
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    queued = deletion_request_or_queue(
        principal=AgentPrincipal.from_agent(agent), subject_id=owner.pk, memory_key=KEY
    )
    assert (queued.status, queued.target) == ("queued", "memory_key")
    someone_else = AgentFactory(tenant=tenant)

    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    assert client.get(f"/admin/memory_core/subject/{owner.pk}/change/").status_code == 200
    data = {
        "tenant": str(tenant.pk), "external_id": owner.external_id, "display_name": "Renamed",
        "created_at_0": "2026-12-01", "created_at_1": "10:00:00",
        "deletion_queued_by_agent": str(someone_else.pk), "deletion_queued_key": "",
    }  # fmt: skip
    response = client.post(f"/admin/memory_core/subject/{owner.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    subject = Subject.objects.get(pk=owner.pk)
    assert subject.display_name == "Renamed"
    assert (subject.deletion_queued_key, subject.deletion_queued_by_agent_id) == (KEY, agent.pk)


@pytest.mark.django_db(transaction=True)
def test_a_write_in_flight_out_of_the_callers_reach_is_seen_before_a_key_is_queued(
    settings, tenant, owner
):
    """A key's deletion is queued only for a caller whose grant reaches every memory on the
    key, since the worker deletes them all for it. The check now runs under the subject's
    deletion lock, so a write of the subject in flight (holding its shared lock) commits
    first and is checked. Before, the check ran while another agent's private memory on the
    key was being written: it was not seen, the key was queued (202), and the worker would
    have deleted that agent's memory for a caller that may not even read it."""
    asker, other = AgentFactory(tenant=tenant), AgentFactory(tenant=tenant)
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the key holds three: queued

    def ask():
        with tenant_scope(tenant.pk):
            return deletion_request_or_queue(
                principal=AgentPrincipal.from_agent(asker), subject_id=owner.pk, memory_key=KEY
            )

    def write_private_memory_on_the_key():  # as a write does: the subject's lock shared
        subjects_shared_locked(Subject.objects.filter(pk=owner.pk))
        MemoryFactory(subject=owner, memory_key=KEY, agent=other)

    with held_in_another_transaction(tenant.pk, write_private_memory_on_the_key):
        asking = in_thread(ask)
        asking.join(1.0)  # the write commits as the block ends
    with pytest.raises(DomainError) as refused:
        asking.outcome(30)
    assert refused.value.code == "key_not_fully_granted"
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None


@pytest.mark.django_db
def test_a_keys_deletion_while_another_deletion_of_the_subject_is_queued_is_503(
    settings, tenant, owner
):
    """Retry once the worker has made the queued one, as for every other request about the
    subject. Before, a key small enough to delete at once answered 404 not_found: the queued
    mark fences the subject's memories from agents, so the key looked empty."""
    agent = AgentFactory(tenant=tenant)
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    MemoryFactory(subject=owner, memory_key="style.language")
    principal = AgentPrincipal.from_agent(agent)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the key's three: queued
    queued = deletion_request_or_queue(principal=principal, subject_id=owner.pk, memory_key=KEY)
    assert queued.status == "queued"
    with pytest.raises(DomainError) as refused:  # one memory: it would run at once
        deletion_request_or_queue(
            principal=principal, subject_id=owner.pk, memory_key="style.language"
        )
    assert refused.value.code == "subject_being_deleted"
    stranger = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, read_types=["fact"]))
    with pytest.raises(DomainError) as refused:  # the grant first: nothing told of the queue
        deletion_request_or_queue(
            principal=stranger, subject_id=owner.pk, memory_key="style.language"
        )
    assert refused.value.code != "subject_being_deleted"
