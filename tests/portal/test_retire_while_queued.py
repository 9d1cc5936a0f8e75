"""Revoking a memory, or withdrawing its consent, while a deletion of it is queued for a worker.

The portal says that while everything is queued for deletion none of the memories can be
changed; a correction was refused then (503 ``subject_being_deleted``), but a revocation or a
consent withdrawal went through and wrote the user's reason into a new event. Both are now
refused as a correction is, for a whole subject's queued deletion and for the memory's own
key's; a memory on another key is still theirs to change.
"""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from memory_core.exceptions import SubjectBeingDeleted
from memory_core.models import Memory, MemoryEvent, Subject
from memory_core.principals import SubjectPrincipal
from memory_core.services.writes import consent_withdraw, memory_revoke
from portal.access import BEING_DELETED
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def queue_deletion(subject, key: str = "") -> None:
    Subject.objects.filter(pk=subject.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=1, deletion_queued_key=key
    )


@pytest.fixture
def workflow_memory(alice_subject):
    return MemoryFactory(
        subject=alice_subject, content="Alice's invoices go to accounts.", consent="workflow"
    )


def test_the_portal_refuses_to_revoke_while_everything_is_queued(alice_client, alice_memory):
    queue_deletion(alice_memory.subject)
    url = reverse("portal:memory-revoke", args=[alice_memory.pk])

    response = alice_client.post(url, {"reason": "no longer true"}, follow=True)

    alice_memory.refresh_from_db()
    assert alice_memory.status == "active"
    assert BEING_DELETED in response.content.decode()
    assert not MemoryEvent.objects.filter(memory_id=alice_memory.pk, action="revoked").exists()


def test_the_portal_refuses_to_withdraw_consent_while_everything_is_queued(
    alice_client, workflow_memory
):
    queue_deletion(workflow_memory.subject)
    url = reverse("portal:memory-withdraw", args=[workflow_memory.pk])

    response = alice_client.post(url, follow=True)

    workflow_memory.refresh_from_db()
    assert workflow_memory.status == "active"
    assert BEING_DELETED in response.content.decode()


def test_a_queued_keys_memory_is_not_revoked_and_another_keys_is(alice, alice_memory):
    other = MemoryFactory(subject=alice_memory.subject, memory_key="style.quotes")
    queue_deletion(alice_memory.subject, key=alice_memory.memory_key)
    user = SubjectPrincipal(
        tenant_id=alice_memory.tenant_id, subject_id=alice_memory.subject_id, user_id=alice.pk
    )

    with pytest.raises(SubjectBeingDeleted):
        memory_revoke(principal=user, memory_id=alice_memory.pk, reason="no")
    with pytest.raises(SubjectBeingDeleted):
        consent_withdraw(principal=user, memory_id=alice_memory.pk)
    assert memory_revoke(principal=user, memory_id=other.pk).status == "revoked"
    assert Memory.objects.get(pk=alice_memory.pk).status == "active"


@pytest.mark.parametrize("action", ["portal:memory-revoke", "portal:memory-withdraw"])
def test_a_refused_reason_is_kept_in_the_form_and_the_form_is_not_offered_meanwhile(
    alice_client, workflow_memory, action
):
    """A form opened before the deletion was queued, sent after: the refusal redirected to
    the memory, the typed reason thrown away, and the form was offered meanwhile though the
    memory's page offers no action (stop 58's audit of the portal)."""
    url = reverse(action, args=[workflow_memory.pk])
    reason = "I moved to a new team and this no longer holds for me."
    queue_deletion(workflow_memory.subject)

    response = alice_client.post(url, {"reason": reason})

    assert response.status_code == 200
    page = response.content.decode()
    assert reason in page and BEING_DELETED in page
    # The refusal takes the focus, as a refused correction's does (stop 58's review: nothing
    # on the page had it).
    assert re.search(r'<div[^>]*id="id_action_refused"[^>]*\bautofocus\b', page)
    assert Memory.objects.get(pk=workflow_memory.pk).status == "active"
    offered = alice_client.get(url)
    assert offered.status_code == 302
    assert offered["Location"] == reverse("portal:memory", args=[workflow_memory.pk])


@pytest.mark.parametrize("key", ["", "style.indent"])
def test_the_correction_form_is_not_offered_while_a_deletion_of_the_memory_is_queued(
    alice_client, alice_memory, key
):
    """Stop 64's audit of the portal: the memory's page offers no Correct while a deletion
    that takes it (everything, or its key) is queued, and the revoke and withdraw pages
    opened meanwhile send the person back (stop 58), but the correction page, opened from a
    bookmark, the history or a tab left open, still showed "Currently remembered" and "Save
    correction", and every save was refused. It sends the person back to the memory, saying
    why; a save sent anyway is still refused."""
    queue_deletion(alice_memory.subject, key=key)
    url = reverse("portal:memory-correct", args=[alice_memory.pk])

    response = alice_client.get(url)

    assert b"Save correction" not in response.content
    assert response.status_code == 302
    assert response["Location"] == reverse("portal:memory", args=[alice_memory.pk])
    assert BEING_DELETED in alice_client.get(response["Location"]).content.decode()
    sent = alice_client.post(url, {"content": "Alice prefers four spaces.", "reason": ""})
    assert BEING_DELETED in sent.content.decode()
    assert not Memory.objects.filter(content="Alice prefers four spaces.").exists()
