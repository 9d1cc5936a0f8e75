"""The admin's lists and forms hold what the services hold (stop 52's audit of the admin)."""

import pytest
from django.test.client import BOUNDARY, encode_multipart

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import tenant_deletion_request
from memory_core.models import Memory
from tests.factories import MemoryFactory, SubjectFactory, insert_memories

pytestmark = pytest.mark.django_db


def test_a_deleted_tenants_subject_cannot_be_given_a_name_again_in_the_admin(admin_client, tenant):
    """A tenant's deletion clears its subjects' names (the ``identities`` step, verified:
    "no subject of the tenant with a name", docs/operations.md) and the admin offers a deleted
    tenant for no new row (``LiveTenantMixin``). But the change form of one of its subjects
    still takes a ``display_name``: the person's name is back in a tenant whose deletion
    verified it gone (stop 52's audit). The field is read only there now."""
    person = SubjectFactory(tenant=tenant, display_name="Alice Example")
    MemoryFactory(subject=person)
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    person.refresh_from_db()
    assert person.display_name == ""

    admin_client.post(
        f"/admin/memory_core/subject/{person.pk}/change/",
        {"display_name": "Alice Example", "created_at_0": "2026-12-01", "created_at_1": "10:00"},
    )
    person.refresh_from_db()
    assert person.display_name == "", "a deleted tenant's subject was named again"


@pytest.mark.parametrize(
    "method,url,data",
    [
        (
            "post",
            "/admin/auth/group/",
            {"action": "delete_selected", "_selected_action": ["1.5"], "index": "0"},
        ),
        ("get", "/admin/auth/group/?name=a%00", None),
        ("get", "/admin/auth/group/?name__regex=%5B", None),
    ],
)
def test_the_group_list_refuses_what_the_other_lists_refuse_without_a_500(
    admin_client, method, url, data
):
    """docs/operations.md: "Every list there refuses a query string the database could not
    take (a NUL in a filter, ...) as an incorrect filter, an action on an id that is none,
    ... where each was a 500". memledger's lists and its user list do (``GuardedAdminMixin``),
    but the groups list, Django's own ``GroupAdmin`` left registered as it was, does not: a
    NUL in a filter (DataError), an invalid regular expression (DataError) and "Delete
    selected" on ``_selected_action=1.5`` (ValueError in ``filter(pk__in=...)``) are 500s.
    (stop 52's audit). Now the list again (``?e=1``), or a message."""
    admin_client.raise_request_exception = False
    response = getattr(admin_client, method)(url, data) if data else admin_client.get(url)
    assert response.status_code < 500


def test_the_admins_deletion_action_shares_the_request_budget_across_its_selection(
    admin_client, tenant, settings
):
    """``MEMLEDGER_DELETION_REQUEST_BUDGET`` bounds "a deletion request made over HTTP (… the
    admin's actions …)" (docs/operations.md). The action gave every selected row a budget of
    its own: 200 memories under a 0.3 s budget took ~5 s, and "Select all" over a long list
    outlived gunicorn's timeout (stop 52's audit). The rows left once the request's time is
    spent are named, and stay."""
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 0.3
    subject = SubjectFactory(tenant=tenant)
    insert_memories(subject, 200)
    ids = [str(pk) for pk in Memory.objects.filter(subject=subject).values_list("pk", flat=True)]
    answer = admin_client.post(
        "/admin/memory_core/memory/",
        {"action": "request_deletion", "_selected_action": ids, "index": "0"},
        follow=True,
    )
    said = [str(m.message) for m in answer.context["messages"]]
    left = Memory.objects.filter(subject=subject).exclude(status="deleted").count()
    requested = sum("deletion operation" in line for line in said)
    assert 0 < left < 200
    named = [line for line in said if "of the selected memories were not requested" in line]
    assert len(named) == 1, said[-3:]
    not_requested = int(named[0].split(" of the selected")[0])
    refused = sum("deletion_too_large" in line or "did not finish" in line for line in said)
    assert requested + left == 200
    assert not_requested + refused == left  # the one cut short, if any, said so too


UNICODE_ESCAPE = f"multipart/form-data; boundary={BOUNDARY}; charset=unicode_escape"
NEW = "N3w-long-pass!"


def _posted(client, url, data):
    client.raise_request_exception = False
    body = encode_multipart(BOUNDARY, data)
    return client.generic("POST", url, body, content_type=UNICODE_ESCAPE)


@pytest.mark.parametrize("fields", [["old_password"], ["new_password1", "new_password2"]])
def test_the_admins_password_change_refuses_a_lone_surrogate_on_the_form(admin_client, fields):
    """A lone surrogate reached the hasher, a 500, as the login's password did (stop 52's
    review of the login's fix)."""
    data = {"old_password": "password", "new_password1": NEW, "new_password2": NEW}
    for field in fields:
        data[field] += "\\ud800"
    answer = _posted(admin_client, "/admin/password_change/", data)
    assert answer.status_code == 200  # the form again, with its error
    assert "not Unicode text" in answer.content.decode()


def test_a_users_password_set_or_a_user_added_refuses_a_lone_surrogate(admin_client):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("someone", password="pw-12345")
    bad = NEW + "\\ud800"
    for url, data in (
        (f"/admin/auth/user/{user.pk}/password/", {"password1": bad, "password2": bad}),
        ("/admin/auth/user/add/", {"username": "another", "password1": bad, "password2": bad}),
    ):
        answer = _posted(admin_client, url, {"usable_password": "true", **data})
        assert answer.status_code == 200, (url, answer.status_code)
    assert not get_user_model().objects.filter(username="another").exists()
