"""The array lookups and literals: a list of ids is one parameter, and only UUIDs get in."""

import uuid

import pytest

from memory_core.models import Memory, MemoryEvent
from memory_core.models.lookups import uuid_array
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_uuid_array_is_a_literal_of_parsed_uuids_and_refuses_anything_else():
    first, second = uuid.uuid4(), uuid.uuid4()
    assert uuid_array([first, str(second).upper()]) == f"{{{first},{second}}}"
    assert uuid_array([]) == "{}"
    # What uuid.UUID accepts in other spellings goes in as its canonical text.
    assert uuid_array([f"{{{first}}}", f"urn:uuid:{first}"]) == f"{{{first},{first}}}"
    for bad in ("x", f"{first},{second}", f'{first}"', "'); DROP TABLE x; --"):
        with pytest.raises(ValueError):
            uuid_array([first, bad])


def test_in_array_finds_the_rows_by_primary_key_foreign_key_and_with_a_null(subject):
    memories = [MemoryFactory(subject=subject) for _ in range(3)]
    wanted = [memories[0].id, str(memories[2].id)]
    by_pk = Memory.objects.filter(pk__in_array=wanted).values_list("pk", flat=True)
    assert set(by_pk) == {memories[0].id, memories[2].id}
    by_fk = Memory.objects.filter(subject__in_array=[subject.id]).count()
    assert by_fk == 3
    # A None is sent as a NULL element (the list, not the literal): it matches nothing.
    assert Memory.objects.filter(pk__in_array=[None, memories[1].id]).count() == 1
    assert not Memory.objects.filter(pk__in_array=[]).exists()


def test_overlap_array_on_a_uuid_array_field(subject):
    memory = MemoryFactory(subject=subject)
    MemoryEvent.objects.create(
        tenant_id=subject.tenant_id, memory_id=memory.id, action="created", actor_type="agent"
    )
    from memory_core.models import ReviewItem

    item = ReviewItem.objects.create(
        tenant_id=subject.tenant_id, subject=subject, kind="conflict",
        candidate_ids=[memory.id, uuid.uuid4()],
    )  # fmt: skip
    found = ReviewItem.objects.filter(candidate_ids__overlap_array=[memory.id, uuid.uuid4()])
    assert list(found.values_list("pk", flat=True)) == [item.pk]
    assert not ReviewItem.objects.filter(candidate_ids__overlap_array=[uuid.uuid4()]).exists()
