"""Policy versions numbered at once for one tenant: two platform admins publishing, a double
submit of the admin's form, two first agent keys of a new tenant (``policy_ensure``).

Each publisher locked the tenant's newest version and numbered its own from it. The second,
let in once the first committed, was handed the same row again (re-checked, not re-sorted),
numbered its version as the first had, and failed on ``policy_unique_version``: an
IntegrityError, a 500 in the admin. Two first uses of a tenant both made a version 1.
"""

import copy
import time

import pytest
from django.db import transaction

from memory_core.models import PolicyVersion
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.rls import tenant_scope
from memory_core.services.policy import policy_ensure, policy_publish
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import TenantFactory
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
