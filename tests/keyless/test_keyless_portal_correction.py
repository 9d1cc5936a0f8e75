"""The portal's correction form: a person's correction of an administrator's keyless memory is
kept beside that memory, in a conflict of its own (docs/api.md: "a memory without a key
stands beside no other chain") (stop 54's audit of keyless conflicts)."""

import pytest
from django.urls import reverse

from memory_core.models import Memory, ReviewItem
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
