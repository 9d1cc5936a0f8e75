"""Stop 64's audit of backups: a portal login's access taken away after a backup came back
with its restore. A membership removed, a login deactivated and a password changed were not
journaled, so the replay could not take them away again (a departed reviewer's review queue
back, a leaked password working again; left open at stop 63). Each is now journaled as it
commits (``services.logins``), and ``replay_deletions`` removes the membership, deactivates
the login, or makes a restored older password unusable, ending the login's sessions.

The restore is simulated as the other replay tests of ``tests/deletion`` do: the rows are put
back as the backup held them (``test_replay.py`` restores a real dump).
"""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from memory_core.deletion.ledger import (
    ledger_scan,
    login_deactivation_entry,
    password_change_entry,
    password_digest,
    username_digest,
)
from memory_core.deletion.replay import replay_deletions
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import tenant_deletion_request
from memory_core.models import LoginAccessLine, PortalMembership
from memory_core.rls import platform_scope
from memory_core.services import logins
from tests.deletion.journal import journal_lines, replay_since
from tests.factories import SubjectFactory

pytestmark = pytest.mark.django_db


def _reviewer(tenant, name="rev") -> PortalMembership:
    user = get_user_model().objects.create_user(name, password="old-pw-12345")
    return PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")


def _restored(membership: PortalMembership) -> None:
    """Put ``membership`` back as the backup held it (its row, its id)."""
    PortalMembership.objects.create(
        pk=membership.pk,
        user_id=membership.user_id,
        tenant_id=membership.tenant_id,
        role=membership.role,
        subject_id=membership.subject_id,
    )


def _session_of(user) -> str:
    """A session of ``user`` in the database (a login in a browser); return its key."""
    client = Client()
    client.force_login(user)
    return client.session.session_key


def test_a_membership_removed_after_the_backup_is_removed_again_by_the_replay(
    tenant, journal, django_capture_on_commit_callbacks
):
    """A departed reviewer's membership, removed after the backup, was back after a restore,
    and their review queue with it."""
    membership = _reviewer(tenant)
    end_user = PortalMembership.objects.create(
        user=get_user_model().objects.create_user("alice"),
        tenant=tenant,
        role="end_user",
        subject=SubjectFactory(tenant=tenant),
    )
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        logins.portal_membership_remove(membership=membership)
        logins.portal_membership_remove(membership=end_user)
    assert not PortalMembership.objects.exists()
    first, second = journal_lines(journal)
    assert set(first) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "removed_membership_id", "user_id", "username_sha256", "role", "tombstones",
        "written_at",
    }  # fmt: skip
    assert (first["target"], first["removed_membership_id"]) == (
        "portal_membership_removed",
        str(membership.pk),
    )
    assert (first["user_id"], first["username_sha256"], first["role"]) == (
        str(membership.user_id),
        username_digest("rev"),
        "reviewer",
    )
    assert (first["tenant_id"], first["subject_id"]) == (str(tenant.pk), None)
    assert second["subject_id"] == str(end_user.subject_id)
    assert not LoginAccessLine.objects.filter(journaled_at=None).exists()
    _restored(membership)
    _restored(end_user)

    result, _ = replay_since(backup_time)

    assert result["memberships_removed"] == 2
    assert not PortalMembership.objects.exists()
    assert replay_since(backup_time)[0]["memberships_removed"] == 0  # again: nothing more


def test_the_replay_leaves_a_membership_added_again_after_the_removal(
    tenant, journal, django_capture_on_commit_callbacks
):
    """Only the row the line names: the login given its membership again afterwards (a
    backup taken since holds the new row) keeps it."""
    membership = _reviewer(tenant)
    since = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        logins.portal_membership_remove(membership=membership)
    again = PortalMembership.objects.create(
        user_id=membership.user_id, tenant=tenant, role="reviewer"
    )

    result, _ = replay_since(since)

    assert result["memberships_removed"] == 0
    assert PortalMembership.objects.get(user_id=membership.user_id).pk == again.pk


def test_a_login_deactivated_after_the_backup_is_deactivated_again_and_its_sessions_end(
    tenant, journal, django_capture_on_commit_callbacks
):
    membership = _reviewer(tenant)
    user = membership.user
    other = get_user_model().objects.create_user("other")
    kept = _session_of(other)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        logins.login_deactivate(user=user)
    [line] = journal_lines(journal)
    assert (line["target"], line["deactivated_user_id"], line["username_sha256"]) == (
        "login_deactivated",
        str(user.pk),
        username_digest("rev"),
    )
    assert line["flags"] == ["is_active"]
    assert line["tenant_id"] == str(tenant.pk)
    get_user_model().objects.filter(pk=user.pk).update(is_active=True)  # as the backup had it
    ended = _session_of(user)  # a session the backup holds

    result, _ = replay_since(backup_time)

    assert (result["logins_deactivated"], result["login_sessions_ended"]) == (1, 1)
    assert not get_user_model().objects.get(pk=user.pk).is_active
    assert not Session.objects.filter(pk=ended).exists()
    assert Session.objects.filter(pk=kept).exists()


def test_a_password_changed_after_the_backup_is_made_unusable_when_the_restore_brings_the_old_one(
    tenant, journal, django_capture_on_commit_callbacks
):
    """The line holds no password and no hash, only the digest of the new hash: the replay
    knows the restored hash is another and makes it unusable, for an administrator to set a
    new password."""
    user = get_user_model().objects.create_superuser("root", password="old-pw-12345")
    old_hash = user.password
    backup_time = timezone.now()
    user.set_password("new-pw-67890")
    with django_capture_on_commit_callbacks(execute=True):
        logins.login_password_save(user=user)
    new_hash = get_user_model().objects.get(pk=user.pk).password
    [line] = journal_lines(journal)
    assert (line["target"], line["password_user_id"]) == ("login_password_changed", str(user.pk))
    assert line["password_hash_sha256"] == password_digest(new_hash)
    assert line["tenant_id"] == "00000000-0000-0000-0000-000000000000"  # staff: no tenant
    text = journal.read_text()
    assert new_hash not in text and "new-pw-67890" not in text and old_hash not in text
    get_user_model().objects.filter(pk=user.pk).update(password=old_hash)  # the backup's
    ended = _session_of(get_user_model().objects.get(pk=user.pk))

    result, err = replay_since(backup_time)

    assert result["passwords_made_unusable"] == [str(user.pk)]
    assert result["login_sessions_ended"] == 1
    restored = get_user_model().objects.get(pk=user.pk)
    assert not restored.has_usable_password()
    assert not restored.check_password("old-pw-12345")
    assert not Session.objects.filter(pk=ended).exists()
    assert f"set a new password in the admin: {user.pk}" in err


def test_the_replay_leaves_a_password_set_again_after_the_line(
    tenant, journal, django_capture_on_commit_callbacks
):
    """The newest line of each login is compared: a backup taken after a later change holds
    that change's hash, and the login keeps it (and the one whose line names its hash too)."""
    user = get_user_model().objects.create_user("rev", password="old-pw-12345")
    same = get_user_model().objects.create_user("same", password="old-pw-12345")
    since = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        for password in ("second-pw-1", "third-pw-22"):
            user.set_password(password)
            logins.login_password_save(user=user)
        same.set_password("same-pw-333")
        logins.login_password_save(user=same)
    assert len(journal_lines(journal)) == 3
    session = _session_of(user)

    result, _ = replay_since(since)

    assert (result["passwords_made_unusable"], result["login_sessions_ended"]) == ([], 0)
    assert get_user_model().objects.get(pk=user.pk).check_password("third-pw-22")
    assert get_user_model().objects.get(pk=same.pk).check_password("same-pw-333")
    assert Session.objects.filter(pk=session).exists()


def test_a_change_rolled_back_owes_no_line(tenant, journal, django_capture_on_commit_callbacks):
    from django.db import transaction

    membership = _reviewer(tenant)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            logins.portal_membership_remove(membership=membership)
            logins.login_deactivate(user=membership.user)
            raise RuntimeError("the caller's transaction fails")
    assert callbacks == [] and journal_lines(journal) == []
    assert not LoginAccessLine.objects.exists()
    assert PortalMembership.objects.filter(pk=membership.pk).exists()


def test_a_failed_append_is_logged_and_made_by_the_sweep(
    tenant, journal, settings, django_capture_on_commit_callbacks, caplog
):
    """As an agent's deactivation: logged, never raised (the access is taken away), and
    appended by the deletion sweep once the journal can be written, once; an owed line older
    than the oldest backup kept is dropped (every backup holds the change)."""
    from memory_core.tasks import deletion_sweep

    membership = _reviewer(tenant)
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    with django_capture_on_commit_callbacks(execute=True):
        logins.login_delete(user=membership.user)
    assert not get_user_model().objects.filter(pk=membership.user_id).exists()
    assert "the journal append of its deactivation failed" in caplog.text
    assert "the journal append of its membership's removal failed" in caplog.text
    assert LoginAccessLine.objects.filter(journaled_at=None).count() == 2
    old = LoginAccessLine.objects.create(
        pk="3c1d5e7f-0000-4000-8000-000000000001",
        entry={"target": "login_deactivated"},
        created_at=timezone.now() - timedelta(days=40),
    )

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    assert sorted(line["target"] for line in journal_lines(journal)) == [
        "login_deactivated",
        "portal_membership_removed",
    ]
    assert not LoginAccessLine.objects.filter(journaled_at=None).exists()
    assert not LoginAccessLine.objects.filter(pk=old.pk).exists()


@pytest.mark.parametrize(
    "wrong",
    [
        {"target": "portal_membership_removed", "removed_membership_id": "not-an-id"},
        {"target": "portal_membership_removed", "user_id": 7},
        {"target": "portal_membership_removed", "role": "admin"},
        {"target": "login_deactivated", "deactivated_user_id": "99999999999999999999"},
        {"target": "login_password_changed", "password_hash_sha256": "md5$salt$hash"},
        {"target": "login_password_changed", "username_sha256": "rev"},
        {"target": "login_deactivated", "flags": ["is_admin"]},
        {"target": "login_deactivated", "flags": []},
    ],
)
def test_the_reader_skips_a_login_line_it_could_not_apply(journal, tenant, wrong):
    base = {
        "operation_id": "3c1d5e7f-0000-4000-8000-000000000002",
        "tenant_id": str(tenant.pk),
        "subject_id": None,
        "requested_at": "2026-12-01T10:00:00+00:00",
        "reason_code": "x",
        "tombstones": [],
        "removed_membership_id": "1",
        "user_id": "2",
        "role": "reviewer",
        "deactivated_user_id": "2",
        "flags": ["is_active"],
        "password_user_id": "2",
        "username_sha256": "0" * 64,
        "password_hash_sha256": "0" * 64,
    }
    journal.write_text(json.dumps({**base, "target": wrong["target"]}) + "\n")
    assert len(ledger_scan(since=timezone.now() - timedelta(days=3650)).entries) == 1
    journal.write_text(json.dumps({**base, **wrong}) + "\n")
    scan = ledger_scan(since=timezone.now() - timedelta(days=3650))
    assert (scan.entries, scan.unreadable) == ([], [1])


def _admin_client(username="root") -> Client:
    admin = get_user_model().objects.create_superuser(username, password="root-pw-12345")
    client = Client()
    client.force_login(admin)
    return client


def test_the_admin_journals_a_membership_deleted_changed_or_deleted_with_its_login(
    tenant, other_tenant, journal, django_capture_on_commit_callbacks
):
    """Its delete page, its list's "Delete selected", a change (the old access removed), and
    a login deleted with its membership (its deactivation too)."""
    client = _admin_client()
    one, two, three, four = (_reviewer(tenant, f"rev{n}") for n in range(4))
    base = "/admin/memory_core/portalmembership/"
    with django_capture_on_commit_callbacks(execute=True):
        deleted = client.post(f"{base}{one.pk}/delete/", {"post": "yes"})
        selected = client.post(
            base, {"action": "delete_selected", "_selected_action": [two.pk], "post": "yes"}
        )
        moved = client.post(
            f"{base}{three.pk}/change/",
            {"user": three.user_id, "role": "reviewer", "tenant": other_tenant.pk, "subject": ""},
        )
        gone = client.post(f"/admin/auth/user/{four.user_id}/delete/", {"post": "yes"})
    assert [r.status_code for r in (deleted, selected, moved, gone)] == [302] * 4
    lines = journal_lines(journal)
    removed = [line["removed_membership_id"] for line in lines if "removed_membership_id" in line]
    assert sorted(removed) == sorted(str(m.pk) for m in (one, two, three, four))
    assert [line["deactivated_user_id"] for line in lines if "deactivated_user_id" in line] == [
        str(four.user_id)
    ]
    assert PortalMembership.objects.get(user_id=three.user_id).tenant_id == other_tenant.pk


def test_the_admin_journals_a_login_deactivated_and_a_password_set(
    tenant, journal, django_capture_on_commit_callbacks
):
    """The user form's "Active" unchecked (its other fields saved with it; checked again:
    not journaled), a login's password set from the user list, and the admin's own
    "Change password"."""
    client = _admin_client()
    user = _reviewer(tenant).user
    change = f"/admin/auth/user/{user.pk}/change/"
    form = {
        "username": "rev",
        "first_name": "Rev",
        "last_name": "",
        "email": "",
        "date_joined_0": "2026-12-01",
        "date_joined_1": "10:00:00",
        "initial-date_joined_0": "2026-12-01",
        "initial-date_joined_1": "10:00:00",
    }
    password = {"password1": "new-pw-67890", "password2": "new-pw-67890", "usable_password": "true"}
    own = {
        "old_password": "root-pw-12345",
        "new_password1": "root-pw-67890",
        "new_password2": "root-pw-67890",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(change, form).status_code == 302  # "Active" unchecked
        assert client.post(change, {**form, "is_active": "on"}).status_code == 302
        assert client.post(f"/admin/auth/user/{user.pk}/password/", password).status_code == 302
        assert client.post("/admin/password_change/", own).status_code == 302
    user.refresh_from_db()
    assert user.is_active and user.first_name == "Rev"
    root = get_user_model().objects.get(username="root")
    assert [(line["target"], line["username_sha256"]) for line in journal_lines(journal)] == [
        ("login_deactivated", username_digest("rev")),
        ("login_password_changed", username_digest("rev")),
        ("login_password_changed", username_digest("root")),
    ]
    digests = [line.get("password_hash_sha256") for line in journal_lines(journal)]
    assert digests[1:] == [password_digest(user.password), password_digest(root.password)]


EMAIL = "departed.reviewer@example.com"


def test_a_tenants_deletion_leaves_no_owed_line_naming_its_logins(
    tenant, journal, django_capture_on_commit_callbacks
):
    """Stop 64's review of backups: the identities step removes a deleted tenant's logins and
    names them by id in the admin's history (a login's username, often an email, was kept
    there), and clears the user-id digests a replay recorded ("a guessable id (an email) is
    found from it"). The ``LoginAccessLine`` rows of the tenant's logins kept each username
    in clear (the lines of a membership removed and of a login deactivated) for the backup
    retention's 36 days after the tenant was gone; the replay never read it. A line names a
    login by its username's digest now, and the step drops the lines naming the tenant (a
    login deactivated once its membership was gone keeps its user, and its line names no
    tenant)."""
    user = get_user_model().objects.create_user(EMAIL, password="old-pw-12345")
    membership = PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    with django_capture_on_commit_callbacks(execute=True):
        logins.portal_membership_remove(membership=membership)
        logins.login_deactivate(user=user)
    assert LoginAccessLine.objects.count() == 2

    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    with platform_scope("audit"):
        left = [json.dumps(line.entry) for line in LoginAccessLine.objects.all()]
    assert not [text for text in left if EMAIL in text or str(tenant.id) in text]
    assert EMAIL not in journal.read_text()


def test_a_tenants_deletion_appends_an_owed_login_line_before_it_drops_it(
    tenant, journal, settings, django_capture_on_commit_callbacks
):
    """Stop 64's review of backups: a line whose append failed is appended by the identities
    step before it drops the row, not lost with it (a staff login keeps its user)."""
    root = get_user_model().objects.create_superuser("staff-rev", password="old-pw-12345")
    PortalMembership.objects.create(user=root, tenant=tenant, role="reviewer")
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    with django_capture_on_commit_callbacks(execute=True):
        root.set_password("new-pw-67890")
        logins.login_password_save(user=root)
    assert LoginAccessLine.objects.filter(journaled_at=None).count() == 1
    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back, the sweep not yet run

    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    assert not LoginAccessLine.objects.exists()
    assert [
        line["password_user_id"] for line in journal_lines(journal) if "password_user_id" in line
    ] == [str(root.pk)]


def test_the_replay_deactivates_only_the_login_its_line_names(tenant):
    """Stop 64's review of backups: a login is named by its row id, which a restore hands out
    again (the sequence comes back with the backup): a login made after the restore can hold
    the id of one made and deactivated after the backup. ``_login_deactivate`` matched the id
    alone (``_membership_remove`` matches the login, tenant, role and subject too), so a
    replay run again (the damaged database's, or after a failure) deactivated the newcomer
    and ended their sessions. The line's username digest is matched too."""
    newcomer = get_user_model().objects.create_user("carol", password="carol-pw-123")
    line = login_deactivation_entry(
        user_id=newcomer.pk, username="bob", tenant_id=tenant.id, deactivated_at=timezone.now()
    )

    with platform_scope("audit"):
        replay_deletions(entries=[line])

    assert get_user_model().objects.get(pk=newcomer.pk).is_active


def test_the_replay_makes_unusable_only_the_password_of_the_login_its_line_names(tenant):
    """Stop 64's review of backups: the same for a password's line, which named the login by
    its id alone."""
    bob = get_user_model()(username="bob")
    bob.set_password("bob-pw-4567")
    newcomer = get_user_model().objects.create_user("carol", password="carol-pw-123")
    line = password_change_entry(
        user_id=newcomer.pk,
        username="bob",
        tenant_id=tenant.id,
        password_hash=bob.password,
        changed_at=timezone.now(),
    )

    with platform_scope("audit"):
        replay_deletions(entries=[line])

    assert get_user_model().objects.get(pk=newcomer.pk).check_password("carol-pw-123")


def test_the_admin_journals_a_login_losing_its_staff_status(
    journal, django_capture_on_commit_callbacks
):
    """Stop 64's review of backups: access taken away in the admin's user form was journaled
    only for "Active": a login whose "Staff status" or "Superuser status" was cleared (an
    administrator who left the team) got the admin back with a restore, and no line, log or
    document said so. The deactivation's line names the flags cleared, and the replay
    clears them again."""
    client = _admin_client()
    leaver = get_user_model().objects.create_superuser("leaver", password="leaver-pw-123")
    since = timezone.now()
    form = {
        "username": "leaver",
        "first_name": "",
        "last_name": "",
        "email": "",
        "is_active": "on",
        "date_joined_0": "2026-12-01",
        "date_joined_1": "10:00:00",
        "initial-date_joined_0": "2026-12-01",
        "initial-date_joined_1": "10:00:00",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/auth/user/{leaver.pk}/change/", form)
    assert response.status_code == 302
    leaver.refresh_from_db()
    assert leaver.is_active and not leaver.is_staff and not leaver.is_superuser
    [line] = journal_lines(journal)
    assert (line["target"], line["deactivated_user_id"], line["flags"]) == (
        "login_deactivated",
        str(leaver.pk),
        ["is_staff", "is_superuser"],
    )
    get_user_model().objects.filter(pk=leaver.pk).update(is_staff=True, is_superuser=True)
    ended = _session_of(leaver)  # the backup's

    result, _ = replay_since(since)

    assert (result["logins_deactivated"], result["login_sessions_ended"]) == (1, 1)
    leaver.refresh_from_db()
    assert leaver.is_active and not leaver.is_staff and not leaver.is_superuser
    assert not Session.objects.filter(pk=ended).exists()
