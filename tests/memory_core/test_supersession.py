"""A correction adds a version; the old one stays, superseded, in one unbroken chain."""

import pytest
from django.db import connection

from memory_core.exceptions import Conflict
from memory_core.models import Memory, MemoryEvent, MemoryType, Status
from memory_core.selectors.memories import memory_visible_chain
from memory_core.services.memories import MemoryDraft, memory_store_many, memory_supersede

pytestmark = pytest.mark.django_db


def draft(subject, content):
    return MemoryDraft(
        subject=subject,
        memory_type=MemoryType.PROJECT_CONSTRAINT,
        memory_key="project.backend_language",
        scope_kind="project",
        scope_ref="lunest",
        content=content,
        authority="explicit_user",
        source_type="user_input",
    )


def test_chain_of_three_versions(subject, system_principal):
    [first] = memory_store_many(
        drafts=[draft(subject, "Default backend language is Python.")], principal=system_principal
    )
    second = memory_supersede(
        previous=first, draft=draft(subject, "The service moved to Go."), principal=system_principal
    )
    third = memory_supersede(
        previous=second,
        draft=draft(subject, "The service uses Go 1.23."),
        principal=system_principal,
    )
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    chain = memory_visible_chain(principal=system_principal, memory=second)
    assert [m.id for m in chain] == [first.id, second.id, third.id]
    assert [m.version for m in chain] == [1, 2, 3]
    assert [m.status for m in chain] == [Status.SUPERSEDED, Status.SUPERSEDED, Status.ACTIVE]
    heads = Memory.objects.filter(memory_key="project.backend_language", status=Status.ACTIVE)
    assert list(heads) == [third]
    # The old text is kept as evidence, never overwritten.
    assert Memory.objects.get(pk=first.pk).content == "Default backend language is Python."
    actions = list(MemoryEvent.objects.filter(memory_id=second.id).values_list("action", flat=True))
    assert actions == ["corrected", "superseded"]


def test_only_the_head_can_be_superseded(subject, system_principal):
    [first] = memory_store_many(drafts=[draft(subject, "Python.")], principal=system_principal)
    memory_supersede(previous=first, draft=draft(subject, "Go."), principal=system_principal)
    with pytest.raises(Conflict) as caught:
        memory_supersede(previous=first, draft=draft(subject, "Rust."), principal=system_principal)
    assert caught.value.code == "not_chain_head"
