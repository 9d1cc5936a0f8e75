"""load_demo prints the demo's password of a login only while it still logs in: not of a
deactivated login, and not the admin's once changed (the review of stop 53's change, which
decided by the password alone and printed the admin's as the demo made it)."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from memory_core.models import PortalMembership

pytestmark = pytest.mark.django_db


def test_load_demo_does_not_print_a_deactivated_demo_login_as_one_that_logs_in():
    """docs/security.md (stop 53, "load_demo leaves the demo logins as an administrator left
    them"): it "prints each login as it is (its membership's tenant and subject, and the
    demo's password only while it still logs in ...)"; docs/operations.md: "a demo login
    that exists is left as an administrator left it".

    An administrator deactivates bob (the admin's "Active" box, ``is_active=False``): bob can
    no longer log in with the demo's password, yet ``_print_login`` (load_demo.py, the
    ``shown = password if membership.user.check_password(password) else ...`` line) checks
    the password only, and the next ``make run`` prints "End user login: bob /
    memledger-bob" as a login to use."""
    call_command("load_demo", stdout=StringIO())
    get_user_model().objects.filter(username="bob").update(is_active=False)

    out = StringIO()
    call_command("load_demo", stdout=out)
    printed = out.getvalue()

    assert not Client().login(username="bob", password="memledger-bob")  # it does not log in
    assert "bob / memledger-bob" not in printed, printed


def test_load_demo_does_not_print_the_admins_demo_password_once_it_was_changed():
    """docs/security.md (stop 53): load_demo "prints each login as it is (... the demo's
    password only while it still logs in: the end-to-end review found the demo's own
    printed after an administrator's change)"; docs/operations.md: "a demo login that exists
    is left as an administrator left it (its password, ...)".

    The end-user and reviewer logins go through ``_print_login`` now, but the demo's admin
    login is still printed unconditionally (load_demo.py, ``self.stdout.write(f"Admin
    login:    {ADMIN[0]} / {ADMIN[1]}")``): after the admin's password was changed, every
    ``make run`` prints "Admin login:    admin / memledger-admin", which no longer logs in."""
    call_command("load_demo", stdout=StringIO())
    admin = get_user_model().objects.get(username="admin")
    admin.set_password("changed-by-the-operator-42")
    admin.save()

    out = StringIO()
    call_command("load_demo", stdout=out)
    printed = out.getvalue()

    assert not Client().login(username="admin", password="memledger-admin")
    assert "admin / memledger-admin" not in printed, printed


def test_load_demo_starts_after_an_administrator_renamed_a_demo_end_user_login():
    """Stop 61's audit of logins: ``alice`` renamed ``alice.smith`` in the admin holds
    user-42's only membership; the next ``make run`` made a new ``alice`` for the same
    subject and ended in an IntegrityError, loading nothing. The renamed login is left as
    it is, and the rest loads."""
    call_command("load_demo", stdout=StringIO())
    get_user_model().objects.filter(username="alice").update(username="alice.smith")
    out = StringIO()
    call_command("load_demo", stdout=out)
    membership = PortalMembership.objects.get(subject__external_id="user-42")
    assert membership.user.username == "alice.smith"
    assert not get_user_model().objects.filter(username="alice").exists()
    assert "Demo agent API key" in out.getvalue()


@pytest.mark.parametrize(
    ("username", "renamed"), [("reviewer", "reviewer.jane"), ("admin", "ops.admin")]
)
def test_load_demo_makes_no_second_login_after_the_reviewer_or_the_admin_was_renamed(
    username, renamed
):
    """Stop 61's review: the demo reviewer or admin renamed in the admin is left as it is;
    every start made a second one under the demo's name with the published password."""
    call_command("load_demo", stdout=StringIO())
    get_user_model().objects.filter(username=username).update(username=renamed)
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert not get_user_model().objects.filter(username=username).exists()
    assert not Client().login(username=username, password=f"memledger-{username}")
    if username == "admin":
        assert "none made by the demo: superusers exist (ops.admin)" in out.getvalue()
    else:
        reviewers = PortalMembership.objects.filter(role=PortalMembership.Role.REVIEWER)
        assert [m.user.username for m in reviewers] == [renamed]


def test_load_demo_makes_and_names_no_admin_while_an_operators_superuser_exists():
    """Stop 61's second review: with the operator's own superuser made before the first
    start, no demo admin is made, and the output named one ("admin / (renamed or removed)")
    that never existed."""
    get_user_model().objects.create_superuser("ops", "ops@example.invalid", "ops-own-pw-12345")
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert not get_user_model().objects.filter(username="admin").exists()
    assert "Admin login:    none made by the demo: superusers exist (ops)" in out.getvalue()


def _demote_the_demo_admin() -> None:
    """Load the demo, then take its ``admin`` out of the superusers as an administrator does
    in the admin ("Superuser status" and "Staff status" unticked), keeping the login."""
    call_command("load_demo", stdout=StringIO())
    get_user_model().objects.filter(username="admin").update(is_superuser=False, is_staff=False)


def test_load_demo_starts_after_the_demo_admin_was_demoted_and_no_superuser_is_left():
    """Stop 62's audit of commands found load_demo (run by ``make run`` at every start)
    ending in an IntegrityError traceback once the login ``admin`` was no longer a superuser
    and no other superuser existed: ``handle`` asked only whether a superuser existed, then
    made ``admin`` again, a username that was taken. Now the demoted login is left as the
    administrator left it, as every other demo login is, the rest loads, and the output says
    there is no superuser and how to make one."""
    _demote_the_demo_admin()

    out = StringIO()
    call_command("load_demo", stdout=out)
    printed = out.getvalue()

    users = get_user_model()
    assert not users.objects.filter(is_superuser=True).exists()
    admin = users.objects.get(username="admin")
    assert not admin.is_superuser and not admin.is_staff
    assert "Admin login:    none: login admin is no longer a superuser" in printed, printed
    assert "manage.py createsuperuser" in printed
    assert "Demo agent API key" in printed


def test_load_demo_does_not_print_a_demoted_login_as_the_admin_login():
    """Stop 62's audit of commands found load_demo printing "Admin login:    admin /
    memledger-admin" once the demo's ``admin`` was demoted from superuser and an operator's
    own superuser held its place: ``_print_admin`` checked only that a login named ``admin``
    existed, so every ``make run`` advertised the published password of a login that could no
    longer use the admin. Now the line names the superusers, as when ``admin`` is gone."""
    _demote_the_demo_admin()
    get_user_model().objects.create_superuser("ops", "ops@example.invalid", "an-operators-pw-9")

    out = StringIO()
    call_command("load_demo", stdout=out)
    printed = out.getvalue()

    admin = get_user_model().objects.get(username="admin")
    assert not admin.is_superuser and not admin.is_staff  # left as the administrator left it
    assert "admin / memledger-admin" not in printed, printed
    assert "Admin login:    none made by the demo: superusers exist (ops)" in printed
