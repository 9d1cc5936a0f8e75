"""Migration 0032: rows stored with ``user:<subject UUID>`` (before writes settled the
spelling) are rewritten to ``user:<external id>``, so a write on the key finds one chain."""

import importlib

import pytest

from memory_core.models import Memory, ReviewItem, ScopeKind
from memory_core.principals import SystemPrincipal
from memory_core.services.writes import memory_write
from tests.factories import MemoryFactory, SubjectFactory, write_body
from tests.rls_support import run_as_a_migration

pytestmark = pytest.mark.django_db

REWRITE = importlib.import_module("memory_core.migrations.0032_user_scope_by_external_id").REWRITE


def _rewrite() -> None:
    run_as_a_migration(REWRITE)


def test_user_scopes_spelt_by_uuid_are_rewritten_and_a_write_then_supersedes_them(tenant):
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    other = SubjectFactory(tenant=tenant, external_id="user-2")
    by_uuid = MemoryFactory(
        subject=subject, memory_key="style.answers", scope_kind=ScopeKind.USER,
        scope_ref=str(subject.id), content="User prefers concise answers.",
    )  # fmt: skip
    deleted = MemoryFactory(
        subject=subject,
        scope_kind=ScopeKind.USER,
        scope_ref=str(subject.id),
        status="deleted",
        content="",
    )
    # Another subject's UUID (refused since stop 35) is not this subject's id: left alone.
    foreign = MemoryFactory(subject=subject, scope_kind=ScopeKind.USER, scope_ref=str(other.id))
    item = ReviewItem.objects.create(
        tenant=tenant, subject=subject, kind="conflict", memory_key="style.answers",
        scope_kind=ScopeKind.USER, scope_ref=str(subject.id), candidate_ids=[by_uuid.id],
    )  # fmt: skip

    _rewrite()

    rows = dict(Memory.objects.values_list("pk", "scope_ref"))
    assert rows[by_uuid.pk] == "user-1"
    assert rows[deleted.pk] == str(subject.id) and rows[foreign.pk] == str(other.id)
    item.refresh_from_db()
    assert item.scope_ref == "user-1"
    result = memory_write(
        principal=SystemPrincipal(tenant_id=tenant.id),
        data=write_body(
            memory_key="style.answers", scope="user:user-1", content="User prefers long answers."
        ),
    )
    assert result.memory.supersedes_id == by_uuid.id
    assert Memory.objects.get(pk=by_uuid.pk).status == "superseded"


def test_an_open_conflict_whose_place_by_id_has_one_already_keeps_its_spelling(tenant):
    """One open conflict per place: a key whose two spellings each had an open conflict made
    the rewrite of the second fail the unique constraint, and the migration with it."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    items = [
        ReviewItem.objects.create(
            tenant=tenant,
            subject=subject,
            kind="conflict",
            memory_key="k",
            scope_kind=ScopeKind.USER,
            scope_ref=ref,
            candidate_ids=[],
        )  # fmt: skip
        for ref in ("user-1", str(subject.id))
    ]

    _rewrite()

    assert [ReviewItem.objects.get(pk=i.pk).scope_ref for i in items] == [
        "user-1",
        str(subject.id),
    ]
