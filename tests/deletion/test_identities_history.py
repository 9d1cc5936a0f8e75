"""The identities step and the Django admin's history it renames (stop 69).

The step names each history entry about the tenant's subjects, logins (memberships) and
their users by its id. Its verification checked the subjects' entries only: a login's row is
gone once deleted, and with it what said which entries were the tenant's, so a username put
back into one of them (by hand, a restore of the table) passed. The purge now records the
entries of the logins it renamed, and the verification checks those; the change message (the
admin's JSON, whose ``object`` is a related row's text: a membership's names the username) is
cleared with the text.
"""

import json

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model

from memory_core.deletion.runner import deletion_run, operation_context
from memory_core.deletion.services import tenant_deletion_request
from memory_core.deletion.stores import REGISTRY, verify_all
from memory_core.models import PortalMembership

pytestmark = pytest.mark.django_db

USERNAME = "dana.login@example.com"


def _identities_verified(operation) -> tuple[bool, dict]:
    """The identities step's verification now, on a fresh context (as a residue probe runs it)."""
    return verify_all(operation_context(operation))["identities"]


@pytest.fixture
def deleted(tenant, owner):
    """A tenant deleted whose login, membership and subject the admin had logged (a change
    message naming the login, as the admin writes one for a membership added inline)."""
    users = get_user_model().objects
    admin = users.create_superuser("root", "root@example.invalid", "pw-12345")
    login = users.create_user(USERNAME)
    membership = PortalMembership.objects.create(
        user=login, tenant=tenant, role="end_user", subject=owner
    )
    owner.external_id = "dana@example.com"
    owner.save()
    message = json.dumps(
        [{"added": {"name": "portal membership", "object": str(membership)}}, {"changed": {}}]
    )
    entries = {}
    for name, row in (("login", login), ("membership", membership), ("subject", owner)):
        LogEntry.objects.log_actions(admin.pk, [row], CHANGE, message, single_object=True)
        entries[name] = LogEntry.objects.latest("pk")
    assert USERNAME in entries["membership"].object_repr
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    return operation, entries


def test_the_purge_names_every_entry_by_id_and_clears_its_change_message(deleted):
    operation, entries = deleted

    for entry in entries.values():
        entry.refresh_from_db()
        assert (entry.object_repr, entry.change_message) == (entry.object_id, "")
    step = operation.steps.get(store="identities")
    assert sorted(step.evidence["purged"]["admin_log_entries_of_logins"]) == sorted(
        [entries["login"].pk, entries["membership"].pk]
    )
    assert step.evidence["admin_log_naming_logins"] == 0


@pytest.mark.parametrize("entry", ["login", "membership", "subject"])
@pytest.mark.parametrize(
    "put_back",
    [
        {"object_repr": USERNAME},
        {"change_message": json.dumps([{"added": {"name": "user", "object": USERNAME}}])},
    ],
    ids=["object_repr", "change_message"],
)
def test_a_username_put_back_into_the_history_fails_verification_until_purged(
    deleted, entry, put_back
):
    operation, entries = deleted
    assert _identities_verified(operation)[0]

    LogEntry.objects.filter(pk=entries[entry].pk).update(**put_back)

    ok, evidence = _identities_verified(operation)
    assert not ok
    key = "admin_log_naming_subjects" if entry == "subject" else "admin_log_naming_logins"
    assert evidence[key] == 1

    # The purge run again (a later run, a replay): the rows are gone, the entries it
    # recorded are named by id again.
    ctx = operation_context(operation)
    purged = REGISTRY["identities"].purge(ctx)
    assert purged["admin_log_entries_named_by_id"] == 1
    assert REGISTRY["identities"].verify(ctx)[0]
    assert _identities_verified(operation)[0]
    text = LogEntry.objects.filter(pk=entries[entry].pk).values_list(
        "object_repr", "change_message"
    )
    assert USERNAME not in str(list(text))
