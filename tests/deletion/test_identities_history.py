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
from django.db import connection

from memory_core.deletion.runner import deletion_reset, deletion_run, operation_context
from memory_core.deletion.selectors import step_evidence
from memory_core.deletion.services import tenant_deletion_request
from memory_core.deletion.stores import REGISTRY, verify_all
from memory_core.models import PortalMembership

pytestmark = pytest.mark.django_db

USERNAME = "dana.login@example.com"


def _identities_verified(operation) -> tuple[bool, dict]:
    """The identities step's verification now, on a fresh context (as a residue probe runs it)."""
    return verify_all(operation_context(operation))["identities"]


@pytest.fixture
def logged(tenant, owner):
    """A tenant whose login, membership and subject the admin had logged (a change message
    naming the login, as the admin writes one for a membership added inline)."""
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
    return entries


@pytest.fixture
def deleted(tenant, logged):
    """The tenant of ``logged`` deleted."""
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    return operation, logged


def test_the_purge_names_every_entry_by_id_and_clears_its_change_message(deleted):
    operation, entries = deleted

    scrubbed = json.dumps([{"added": {"name": "portal membership", "object": ""}}, {"changed": {}}])
    for entry in entries.values():
        entry.refresh_from_db()
        assert (entry.object_repr, entry.change_message) == (entry.object_id, scrubbed)
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


# --- a failed run keeps the record (stop 69's review) ------------------------------------

ENTRIES = REGISTRY["identities"].ADMIN_LOG_ENTRIES


def _of_logins(entries) -> list[int]:
    return sorted([entries["login"].pk, entries["membership"].pk])


def _recorded(operation) -> list[int]:
    step = operation.steps.get(store="identities")
    return sorted(step.evidence["purged"].get(ENTRIES, []))


def _put_back_and_probe(operation, entries) -> None:
    """A username put back into a login's entry fails the verification (a probe's), and the
    next run's purge names the entry by id again."""
    LogEntry.objects.filter(pk=entries["login"].pk).update(object_repr=USERNAME)
    ok, evidence = _identities_verified(operation)
    assert (ok, evidence["admin_log_naming_logins"]) == (False, 1)
    assert deletion_run(operation_id=operation.id) == "completed"
    entries["login"].refresh_from_db()
    assert entries["login"].object_repr == entries["login"].object_id
    assert _recorded(operation) == _of_logins(entries)


def test_a_step_that_raised_after_its_purge_committed_keeps_the_entries_it_recorded(
    tenant, logged, settings
):
    # The purge commits (the login's rows are gone) and the step fails with a Python error:
    # its evidence was written ``purged: {}``, and no later purge could find the entries.
    settings.MEMLEDGER_DELETION_FAULTS = "identities=fail:1"
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "partial"
    step = operation.steps.get(store="identities")
    assert (step.status, "injected failure" in step.last_error) == ("failed", True)
    assert not PortalMembership.objects.filter(tenant=tenant).exists()
    assert step.evidence["purged"] == {ENTRIES: _of_logins(logged)}

    settings.MEMLEDGER_DELETION_FAULTS = ""
    _put_back_and_probe(operation, logged)


def test_a_phase_rolled_back_keeps_the_entries_an_earlier_purge_recorded(deleted, monkeypatch):
    operation, entries = deleted
    # Run again (a replay resets the steps), and the phase rolls back: a later step of the
    # identities step's phase fails with a database error.
    deletion_reset(operation=operation)

    def division_by_zero(ctx):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1/0")

    monkeypatch.setattr(REGISTRY["queued_reprocessing"], "purge", division_by_zero)
    assert deletion_run(operation_id=operation.id) == "partial"
    step = operation.steps.get(store="identities")
    assert (step.status, "division by zero" in step.last_error) == ("failed", True)
    assert _recorded(operation) == _of_logins(entries)

    monkeypatch.undo()
    _put_back_and_probe(operation, entries)


def test_clients_are_not_answered_the_recorded_entries(deleted):
    operation, entries = deleted
    step = operation.steps.get(store="identities")
    assert sorted(step.evidence["purged"][ENTRIES]) == _of_logins(entries)  # the admin's

    answered = step_evidence(step)
    assert ENTRIES not in answered["purged"]
    assert answered["purged"]["admin_log_entries_named_by_id"] == 3
    assert answered["admin_log_naming_logins"] == 0


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ([{"added": {}}], "Added."),
        (
            [{"changed": {"fields": ["External id", "Display name"]}}],
            "Changed External id and Display name.",
        ),
        (
            [{"added": {"name": "portal membership", "object": USERNAME}}],
            "Added portal membership “”.",
        ),
        (
            [{"changed": {"name": "portal membership", "object": USERNAME, "fields": ["Role"]}}],
            "Changed Role for portal membership “”.",
        ),
        (
            [{"deleted": {"name": "portal membership", "object": USERNAME}}],
            "Deleted portal membership “”.",
        ),
        ("Changed the login of dana.login@example.com by hand", ""),
        ([{"added": {"name": "user", "object": USERNAME, "note": USERNAME}}], ""),
    ],
    ids=["added", "changed", "inline_added", "inline_changed", "inline_deleted", "text", "other"],
)
def test_the_history_of_a_deleted_tenants_subject_still_says_what_each_entry_did(
    tenant, owner, message, shown
):
    # The subject's row stays, and the admin shows its history: each entry's action is its
    # change message. Cleared whole, every entry showed a date, an author and no action.
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw")
    text = message if isinstance(message, str) else json.dumps(message)
    LogEntry.objects.log_actions(admin.pk, [owner], CHANGE, text, single_object=True)
    entry = LogEntry.objects.latest("pk")
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    entry.refresh_from_db()
    assert entry.get_change_message() == shown
    assert USERNAME not in entry.change_message
    assert (entry.object_repr, _identities_verified(operation)[0]) == (entry.object_id, True)
