"""Each invariant of the memory record is refused by the database itself, not only by code."""

import uuid
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory_core.models import Memory, PolicyVersion, Status
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def assert_refused(constraint: str | tuple[str, ...], make):
    """Run ``make`` and its deferred checks; assert the database names ``constraint``."""
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        make()
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    names = (constraint,) if isinstance(constraint, str) else constraint
    assert any(name in str(caught.value) for name in names), str(caught.value)


def update(memory, **fields):
    Memory.objects.filter(pk=memory.pk).update(**fields)


@pytest.mark.parametrize(
    ("field", "value", "constraint"),
    [
        ("memory_type", "business_state", ("memory_type_valid", "memory_class_matches_type")),
        ("memory_class", "policy", ("memory_class_valid", "memory_class_matches_type")),
        ("authority", "god_mode", "memory_authority_valid"),
        ("source_type", "rumour", "memory_source_type_valid"),
        ("consent", "implied", "memory_consent_valid"),
        ("sensitivity", "secret", "memory_sensitivity_valid"),
        # In no list of the admitted CHECK either: either may be the one PostgreSQL names.
        ("status", "archived", ("memory_status_valid", "memory_admitted_matches_status")),
        ("scope_kind", "galaxy", "memory_scope_kind_valid"),
        ("confidence", 1.5, "memory_confidence_range"),
        ("confidence", -0.1, "memory_confidence_range"),
        ("version", 0, "memory_version_positive"),
        ("environment", "Staging", "memory_environment_valid"),  # stored lower-cased only
        ("environment", "on staging", "memory_environment_valid"),
        ("environment", "-staging", "memory_environment_valid"),
        ("environment", "staging\n", "memory_environment_valid"),
    ],
)
def test_enum_and_range_violations_are_refused(subject, field, value, constraint):
    memory = MemoryFactory(subject=subject)
    assert_refused(constraint, lambda: update(memory, **{field: value}))


def test_scope_ref_must_match_kind(subject):
    memory = MemoryFactory(subject=subject)
    assert_refused("memory_scope_ref_matches_kind", lambda: update(memory, scope_kind="repo"))
    assert_refused("memory_scope_ref_matches_kind", lambda: update(memory, scope_ref="lunest"))


def test_class_must_match_type(subject):
    memory = MemoryFactory(subject=subject)
    assert_refused("memory_class_matches_type", lambda: update(memory, memory_class="working"))


def test_validity_interval_must_be_ordered(subject):
    memory = MemoryFactory(subject=subject)
    past = memory.valid_from - timedelta(days=1)
    assert_refused("memory_validity_interval", lambda: update(memory, valid_until=past))


def test_tombstone_cannot_keep_content(subject):
    memory = MemoryFactory(subject=subject)
    assert_refused("memory_tombstone_has_no_content", lambda: update(memory, status=Status.DELETED))
    update(memory, status=Status.DELETED, content="")
    assert Memory.objects.get(pk=memory.pk).status == Status.DELETED


def test_admitted_matches_the_status(subject):
    """A waiting or rejected write was never in use, a memory in use (or superseded) was; a
    revoked, expired or deleted row may have been either (``Memory.admitted``)."""
    memory = MemoryFactory(subject=subject)
    assert memory.admitted
    assert_refused("memory_admitted_matches_status", lambda: update(memory, admitted=False))
    assert_refused(
        "memory_admitted_matches_status", lambda: update(memory, status=Status.PENDING_APPROVAL)
    )
    waiting = MemoryFactory(subject=subject, status=Status.PENDING_APPROVAL)
    assert not waiting.admitted
    assert_refused("memory_admitted_matches_status", lambda: update(waiting, status=Status.ACTIVE))
    assert_refused("memory_admitted_matches_status", lambda: update(waiting, admitted=True))
    for status in (Status.REVOKED, Status.EXPIRED):
        update(waiting, status=status)
        update(memory, status=status)
    assert dict(Memory.objects.values_list("admitted", "status")) == {
        False: Status.EXPIRED,
        True: Status.EXPIRED,
    }


def test_a_row_inserted_waiting_is_stored_never_in_use(subject):
    """As a process of the release before migration 0035 inserts it (the column's default):
    the trigger stores it as this release does, rather than the CHECK refusing the write."""
    waiting = MemoryFactory(subject=subject, status=Status.PENDING_APPROVAL, admitted=True)
    rejected = MemoryFactory(subject=subject, status=Status.REJECTED, admitted=True)
    stored = dict(Memory.objects.values_list("pk", "admitted"))
    assert (stored[waiting.pk], stored[rejected.pk]) == (False, False)


def _successor(previous, **fields):
    defaults = {
        "subject": previous.subject,
        "memory_key": previous.memory_key,
        "supersedes": previous,
        "version": previous.version + 1,
    }
    return MemoryFactory.build(**(defaults | fields))


def test_a_chain_cannot_fork(subject):
    root = MemoryFactory(subject=subject, status=Status.SUPERSEDED)
    MemoryFactory(subject=subject, supersedes=root, version=2)
    assert_refused("memory_one_successor", lambda: _successor(root).save())


def test_a_superseded_row_is_never_active(subject):
    root = MemoryFactory(subject=subject)
    assert_refused("memory_superseded_not_active", lambda: _successor(root).save())
    update(root, status=Status.SUPERSEDED)
    head = _successor(root)
    head.save()
    assert_refused("memory_superseded_not_active", lambda: update(root, status=Status.ACTIVE))


def test_versions_increase_along_a_chain(subject):
    root = MemoryFactory(subject=subject, status=Status.SUPERSEDED, version=3)
    assert_refused("memory_chain_version_increases", lambda: _successor(root, version=3).save())


def test_a_chain_stays_within_one_subject(subject):
    root = MemoryFactory(subject=subject, status=Status.SUPERSEDED)
    stranger = SubjectFactory(tenant=subject.tenant)
    assert_refused(
        "memory_chain_same_owner",
        lambda: _successor(root, subject=stranger, tenant=stranger.tenant).save(),
    )


def test_a_memory_cannot_supersede_itself(subject):
    memory = MemoryFactory(subject=subject)
    assert_refused("memory_not_self_superseding", lambda: update(memory, supersedes=memory.pk))


def _settle():
    """Run the deferred checks queued so far, as a commit would: a check queued by the setup
    re-reads its row at commit and would otherwise also judge the update under test."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def _tombstone(memory, **fields):
    """The scrub a deletion makes (``deletion.stores.SCRUBBED``), with ``fields`` besides."""
    update(memory, status=Status.DELETED, content="", value=None, embedding=None, **fields)


def test_tombstoning_a_whole_chain_passes_the_chain_checks(subject):
    """The update the chain trigger skips (migration 0020) leaves a valid chain."""
    root = MemoryFactory(subject=subject, status=Status.SUPERSEDED)
    head = _successor(root)
    head.save()
    _settle()
    with transaction.atomic():
        _tombstone(root)
        _tombstone(head)
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert set(Memory.objects.filter(subject=subject).values_list("status", flat=True)) == {
        Status.DELETED
    }


def test_tombstoning_a_pending_successor_alone_is_still_checked(subject):
    """A pending proposal does not count as a successor, a deleted row does: deleting the
    proposal without its active predecessor would take the predecessor's one successor slot
    (``memory_one_successor``) for good, so the trigger must still run for it."""
    root = MemoryFactory(subject=subject)
    proposal = _successor(root, status=Status.PENDING_APPROVAL)
    proposal.save()
    _settle()
    assert_refused("memory_superseded_not_active", lambda: _tombstone(proposal))
    update(proposal, status=Status.REJECTED)
    _settle()
    assert_refused("memory_superseded_not_active", lambda: _tombstone(proposal))


def test_tombstoning_that_moves_a_row_in_its_chain_is_still_checked(subject):
    root = MemoryFactory(subject=subject, status=Status.SUPERSEDED, version=3)
    head = _successor(root, version=4)
    head.save()
    stranger = MemoryFactory(subject=SubjectFactory(tenant=subject.tenant))
    _settle()
    assert_refused("memory_chain_version_increases", lambda: _tombstone(head, version=2))
    assert_refused("memory_chain_same_owner", lambda: _tombstone(head, supersedes=stranger.pk))
    assert_refused(
        "memory_chain_same_owner",
        lambda: _tombstone(head, subject=SubjectFactory(tenant=subject.tenant)),
    )


def test_pending_proposals_do_not_count_as_successors(subject):
    """A correction awaiting approval leaves the current head active."""
    root = MemoryFactory(subject=subject)
    proposal = _successor(root, status=Status.PENDING_APPROVAL)
    proposal.save()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert Memory.objects.get(pk=root.pk).status == Status.ACTIVE


def test_two_independent_active_memories_on_one_key_are_allowed(subject):
    """That is a conflict for retrieval or a reviewer to resolve, not a storage error."""
    MemoryFactory(subject=subject, memory_key="deploy.region", content="eu-west-1")
    MemoryFactory(subject=subject, memory_key="deploy.region", content="us-east-1")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert Memory.objects.filter(memory_key="deploy.region", status=Status.ACTIVE).count() == 2


def test_one_active_policy_per_tenant(tenant):
    active = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    assert_refused(
        "policy_one_active_per_tenant",
        lambda: PolicyVersion.objects.create(
            tenant=tenant, version=active.version + 1, document={}, is_active=True
        ),
    )


def test_active_queryset_respects_validity(subject):
    now = timezone.now()
    live = MemoryFactory(subject=subject)
    MemoryFactory(
        subject=subject, valid_from=now - timedelta(days=3), valid_until=now - timedelta(days=1)
    )
    MemoryFactory(subject=subject, status=Status.REVOKED)
    assert list(Memory.objects.active().values_list("id", flat=True)) == [live.id]
    assert uuid.UUID(str(live.id))


@pytest.mark.django_db
def test_an_agent_with_private_memories_cannot_be_deleted(tenant):
    # SET_NULL made its private memories every agent's; deactivate it instead. Deleting the
    # whole tenant still cascades (RESTRICT lets the memories go by the tenant's cascade).
    from django.db.models import RestrictedError

    from memory_core.models import Agent
    from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

    owner = AgentFactory(tenant=tenant)
    private = MemoryFactory(subject=SubjectFactory(tenant=tenant), agent=owner)
    with pytest.raises(RestrictedError):
        owner.delete()
    private.refresh_from_db()
    assert private.agent_id == owner.id
    tenant.delete()
    assert not Memory.objects.filter(pk=private.pk).exists()
    assert not Agent.objects.filter(pk=owner.pk).exists()
