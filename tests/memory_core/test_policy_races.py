"""Policy versions numbered at once for one tenant: two platform admins publishing, a double
submit of the admin's form, two first agent keys of a new tenant (``policy_ensure``); a
version published while the retention sweep deletes under the one before.

Each publisher locked the tenant's newest version and numbered its own from it. The second,
let in once the first committed, was handed the same row again (re-checked, not re-sorted),
numbered its version as the first had, and failed on ``policy_unique_version``: an
IntegrityError, a 500 in the admin. Two first uses of a tenant both made a version 1.
"""

import copy
import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from memory_core.deletion.retention import retention_apply
from memory_core.models import DeletionOperation, Memory, MemoryClass, MemoryType, PolicyVersion
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.rls import platform_scope, tenant_scope
from memory_core.services.policy import policy_ensure, policy_publish
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import MemoryFactory, SubjectFactory, TenantFactory
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def _run_while_held(tenant_id, hold, request):
    """Return the thread of ``request()``, ended, run as a request (for the tenant, in one
    transaction) while ``hold()``'s transaction holds its locks, let go once the request
    waits for a lock (or has ended: then it did not wait)."""

    def as_request():
        with tenant_scope(tenant_id), transaction.atomic():
            return request()

    with held_in_another_transaction(tenant_id, hold):
        thread = in_thread(as_request)
        deadline = time.monotonic() + 30
        while thread.is_alive() and not someone_waits_for_a_lock():
            assert time.monotonic() < deadline, "the request neither waited nor ended"
            time.sleep(0.02)
    thread.wait(30)
    return thread


def _versions(tenant):
    with tenant_scope(tenant.id):
        return list(
            PolicyVersion.objects.filter(tenant=tenant)
            .order_by("version")
            .values_list("version", "is_active", "note")
        )


def test_two_versions_published_at_once_are_numbered_one_after_the_other(tenant):
    document = copy.deepcopy(DEFAULT_POLICY)
    thread = _run_while_held(
        tenant.id,
        lambda: policy_publish(tenant=tenant, document=document, note="first admin"),
        lambda: policy_publish(tenant=tenant, document=document, note="second admin"),
    )
    assert thread.error is None, repr(thread.error)
    assert thread.result.version == 3
    assert _versions(tenant) == [
        (1, False, "defaults"),
        (2, False, "first admin"),
        (3, True, "second admin"),
    ]


def test_two_first_uses_of_a_tenant_at_once_make_one_version_1():
    tenant = TenantFactory()  # no policy yet
    first = {}

    def hold():
        first["version"] = policy_ensure(tenant=tenant)

    thread = _run_while_held(tenant.id, hold, lambda: policy_ensure(tenant=tenant))
    assert thread.error is None, repr(thread.error)
    assert thread.result.pk == first["version"].pk
    assert _versions(tenant) == [(1, True, "defaults")]


def test_a_version_published_while_the_sweep_waits_decides_what_it_deletes(tenant):
    """The sweep reads each tenant's active document first, then opens an operation per
    subject once its rows are locked. A version published in between (here one that keeps
    episodes a year) was named by an operation of the version before, which deleted the
    episode v2 keeps (stop 51's audit of policies). Now the sweep leaves the rows to the next
    sweep, which reads v2."""
    owner = SubjectFactory(tenant=tenant)
    created = timezone.now() - timedelta(days=91)  # past the default 90 days
    old = MemoryFactory(
        subject=owner,
        memory_type=MemoryType.EPISODE,
        memory_class=MemoryClass.EPISODIC,
        created_at=created,
        valid_from=created,
    )

    def sweep():
        with platform_scope("retention sweep"):
            return retention_apply()

    def lock_the_row():  # e.g. a user's correction in flight
        Memory.objects.select_for_update().filter(pk=old.pk).first()

    with held_in_another_transaction(tenant.id, lock_the_row):
        sweeper = in_thread(sweep)
        deadline = time.monotonic() + 30
        while not someone_waits_for_a_lock() and sweeper.is_alive():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        longer = copy.deepcopy(DEFAULT_POLICY)
        longer["retention"]["episodic_days"] = 365
        with tenant_scope(tenant.id):
            published = policy_publish(tenant=tenant, document=longer, note="episodes a year")
    sweeper.outcome(30)

    with tenant_scope(tenant.id):
        operations = list(
            DeletionOperation.objects.filter(tenant=tenant).values_list(
                "reason_code", "policy_version"
            )
        )
    assert published.version == 2
    assert operations == [], operations
    with tenant_scope(tenant.id):
        assert Memory.objects.get(pk=old.pk).status == "active"
    with platform_scope("retention sweep"):
        retention_apply()  # the next sweep, under v2, keeps it
    with tenant_scope(tenant.id):
        assert not DeletionOperation.objects.filter(tenant=tenant).exists()
