"""The portal's correction form: a person's correction of an administrator's keyless memory is
kept beside that memory, in a conflict of its own (docs/api.md: "a memory without a key
stands beside no other chain") (stop 54's audit of keyless conflicts)."""

import pytest
from django.urls import reverse

from memory_core.models import Memory, ReviewItem
from memory_core.principals import SystemPrincipal
from memory_core.services.conflicts import conflict_resolve
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def admin_incident(subject, content):
    return MemoryFactory(
        subject=subject,
        incident=True,
        authority="explicit_admin",
        source_type="admin",
        content=content,
    )


def test_correcting_a_second_keyless_memory_with_the_same_words_is_saved(
    alice_client, alice_subject
):
    first = admin_incident(alice_subject, "The Atlas deploy on Monday failed: disk full.")
    second = admin_incident(alice_subject, "The Orbit deploy on Friday failed: bad config.")
    words = "It did not fail: I cancelled it myself."
    answer = alice_client.post(
        reverse("portal:memory-correct", args=[first.pk]), {"content": words}, follow=True
    )
    assert answer.status_code == 200
    kept_first = Memory.objects.get(subject=alice_subject, authority="explicit_user")
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1

    # Another incident, corrected with the same words: a correction of *that* memory.
    answer = alice_client.post(
        reverse("portal:memory-correct", args=[second.pk]), {"content": words}, follow=True
    )
    said = [str(m) for m in answer.context["messages"]]
    corrections = Memory.objects.filter(subject=alice_subject, authority="explicit_user")
    # The portal answered "already kept beside" with the first incident's correction
    # (selectors.portal.correction_kept_beside matches memory_key = '', i.e. any keyless
    # memory of the subject), and the second correction was never saved.
    assert corrections.count() == 2, said
    items = ReviewItem.objects.filter(kind="conflict", state="open")
    assert sorted(sorted(str(i) for i in item.candidate_ids) for item in items) == sorted(
        [
            sorted([str(first.pk), str(kept_first.pk)]),
            sorted([str(second.pk), str(corrections.exclude(pk=kept_first.pk).get().pk)]),
        ]
    )


WORDS = "It did not fail: I cancelled it myself."


def _admin_incident(subject):
    return MemoryFactory(
        subject=subject,
        incident=True,
        authority="explicit_admin",
        source_type="admin",
        content="The Atlas deploy on Monday failed: disk full.",
    )


@pytest.mark.parametrize("outcome", ["ask_user", "keep_both_scoped"])
def test_a_keyless_correction_sent_again_after_resolution_is_kept_once(
    alice_client, alice_subject, outcome
):
    """Sent again after a reviewer resolved its conflict (``ask_user``: nothing changes, or
    ``keep_both_scoped``), the correction was saved a second time: the match read open
    conflicts only (stop 54's review of the fix above)."""
    head = _admin_incident(alice_subject)
    url = reverse("portal:memory-correct", args=[head.pk])
    assert alice_client.post(url, {"content": WORDS}, follow=True).status_code == 200
    assert Memory.objects.filter(subject=alice_subject, authority="explicit_user").count() == 1
    item = ReviewItem.objects.get(kind="conflict", state="open", memory_key="")
    conflict_resolve(
        principal=SystemPrincipal(tenant_id=alice_subject.tenant_id),
        item_id=item.pk,
        outcome=outcome,
        reason="ask the person",
    )

    # The same correction sent again (the form once more, Back then Save).
    answer = alice_client.post(url, {"content": WORDS}, follow=True)
    said = [str(m) for m in answer.context["messages"]]
    corrections = Memory.objects.filter(
        subject=alice_subject, authority="explicit_user", status="active"
    )
    assert corrections.count() == 1, said
