"""What stop 53's audit of the admin found (each test failed on the code before): a lone
surrogate in any admin text field but a password was a 500; renaming an agent to another's
name was a 500 (the tenant read-only, Django checked no unique name with it); and the policy's
add page prefilled with a document Django's JSONField could not read was a 500."""

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test.client import BOUNDARY, encode_multipart

from memory_core.models import Agent, PolicyVersion, Subject, Tenant
from memory_core.services.api_keys import api_key_create
from tests.factories import AgentFactory, SubjectFactory

pytestmark = pytest.mark.django_db

# A client sending its form in this charset turns the text ``\ud800`` into a lone surrogate
# (as tests/hardening/test_admin_stop52.py and tests/portal/test_login_throttle.py send it).
UNICODE_ESCAPE = f"multipart/form-data; boundary={BOUNDARY}; charset=unicode_escape"
LONE = "\\ud800"  # read with unicode_escape: U+D800 alone
WHEN = {"created_at_0": "2026-12-01", "created_at_1": "10:00:00"}


def _posted(client, url, data):
    client.raise_request_exception = False
    return client.generic(
        "POST", url, encode_multipart(BOUNDARY, data), content_type=UNICODE_ESCAPE
    )


def _forms(tenant):
    """(url, the form's data with a lone surrogate in one text field) for every admin form
    that takes text other than a password."""
    subject = SubjectFactory(tenant=tenant)
    agent = AgentFactory(tenant=tenant)
    key, _ = api_key_create(agent=agent, name="ci")
    user = get_user_model().objects.create_user("someone", password="pw-12345")
    return {
        "tenant add (name)": (
            "/admin/memory_core/tenant/add/",
            {"slug": "acme-new", "name": f"Acme {LONE}", **WHEN},
        ),
        "subject add (external id)": (
            "/admin/memory_core/subject/add/",
            {"tenant": str(tenant.pk), "external_id": f"bob{LONE}", "display_name": "", **WHEN},
        ),
        "subject change (display name)": (
            f"/admin/memory_core/subject/{subject.pk}/change/",
            {"display_name": f"Alice {LONE}", **WHEN},
        ),
        "agent add (name)": (
            "/admin/memory_core/agent/add/",
            {
                "tenant": str(tenant.pk),
                "name": f"bot{LONE}",
                "write_types": "",
                "read_types": "",
                "max_sensitivity": "personal",
                **WHEN,
                "api_keys-TOTAL_FORMS": "0",
                "api_keys-INITIAL_FORMS": "0",
            },  # fmt: skip
        ),
        "API key change (label)": (
            f"/admin/memory_core/apikey/{key.pk}/change/",
            {"name": f"ci{LONE}"},
        ),
        "policy version add (note)": (
            "/admin/memory_core/policyversion/add/",
            {
                "tenant": str(tenant.pk),
                "document": '{"budget": {"max_items": 5}}',
                "note": f"note{LONE}",
            },
        ),
        "user change (first name)": (
            f"/admin/auth/user/{user.pk}/change/",
            {
                "username": "someone",
                "first_name": f"A{LONE}",
                "last_name": "",
                "email": "",
                "is_active": "on",
                "date_joined_0": "2026-12-01",
                "date_joined_1": "10:00:00",
            },  # fmt: skip
        ),
        "group add (name)": ("/admin/auth/group/add/", {"name": f"ops{LONE}"}),
    }


@pytest.mark.parametrize(
    "form",
    [
        "tenant add (name)",
        "subject add (external id)",
        "subject change (display name)",
        "agent add (name)",
        "API key change (label)",
        "policy version add (note)",
        "user change (first name)",
        "group add (name)",
    ],
)
def test_a_lone_surrogate_in_an_admin_text_field_is_a_form_error_not_a_500(
    admin_client, tenant, form
):
    """A form posted with ``charset=unicode_escape`` turns ``\\ud800`` into a lone surrogate.
    docs/security.md ("Logins", stop 52) counts "a lone surrogate in ... the admin's password
    change or a user's password set in the admin was a 500" among the bugs fixed, and
    ``memory_core.text.refuse_lone_surrogates`` says why: "PostgreSQL could not be sent ...
    nor an answer encode (the form shown again): a 500 each". But the fix was put on the
    password forms only (``PasswordsRefuseLoneSurrogates``, ``config.login``): every other
    text field of the admin (a tenant's name, a subject's external id and display name, an
    agent's name, a key's label, a policy's note, a user's names, a group's name) lets it
    through to psycopg (UnicodeEncodeError on INSERT/UPDATE) or into the page shown again:
    a 500. Expected: the form again with the field's error (200), nothing saved."""
    url, data = _forms(tenant)[form]
    before = {model: model.objects.count() for model in (Tenant, Subject, Agent, PolicyVersion)}
    answer = _posted(admin_client, url, data)
    assert answer.status_code == 200, f"{form}: {answer.status_code}"
    assert "not Unicode text" in answer.content.decode()
    assert before == {
        model: model.objects.count() for model in (Tenant, Subject, Agent, PolicyVersion)
    }


def test_renaming_an_agent_to_another_agents_name_is_a_form_error_not_a_500(admin_client, tenant):
    """Two agents of a tenant cannot share a name (``agent_unique_name``), and the add form
    says so. On the change form the tenant is read only (``AgentAdmin.get_readonly_fields``,
    memory_core/admin.py: "The form does not move an agent to another tenant",
    docs/operations.md "Agents and their keys"), so Django leaves the tenant out of the
    form and skips every unique check that involves it (``_get_validation_exclusions``): a
    rename to a name the tenant already has passes the form and reaches
    ``obj.save(update_fields=["name"])`` in ``_save_governed``, which catches only
    ValidationFailed: IntegrityError, a 500 (the whole page's request rolled back). Expected:
    the form again with "Agent with this Tenant and Name already exists" (200)."""
    renamed = AgentFactory(tenant=tenant, name="alpha")
    AgentFactory(tenant=tenant, name="beta")
    admin_client.raise_request_exception = False
    data = {
        "name": "beta", "write_types": "incident", "read_types": "incident",
        "max_sensitivity": "personal", "any_subject": "on", **WHEN,
        "api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0",
    }  # fmt: skip
    answer = admin_client.post(f"/admin/memory_core/agent/{renamed.pk}/change/", data)
    assert answer.status_code == 200, answer.status_code
    assert "already exists" in answer.content.decode()
    assert Agent.objects.get(pk=renamed.pk).name == "alpha"


@pytest.mark.parametrize(
    "document",
    [
        '"\\ud800"',  # a JSON string escaping a lone surrogate
        '{"\\ud800": 1}',
        "[" * 50_000,  # nested past Python's recursion limit
        "1" + "0" * 5_000,  # an integer over Python's 4,300 digits
    ],
    ids=["lone-surrogate-string", "lone-surrogate-key", "deeply-nested", "long-integer"],
)
def test_the_policy_add_page_prefilled_with_a_document_it_cannot_read_is_no_500(
    admin_client, tenant, document
):
    """docs/operations.md ("Deletion reaches derived state"): "Every list there refuses ...
    an add page's initial value its field cannot read, where each was a 500"
    (``GuardedAdminMixin.get_changeform_initial_data``). The guard reads the value with the
    model field's default form field (``field.formfield()``: Django's ``forms.JSONField``,
    not the admin's ``PolicyDocumentField``) and catches ValidationError only. So
    ``/admin/memory_core/policyversion/add/?document=...`` with a document nested too deeply
    raises RecursionError, one holding an integer of more than 4,300 digits ValueError (the
    two ``PolicyDocumentField.to_python`` turns into form errors on a POST), and one escaping
    a lone surrogate (``"\\ud800"``, plain ASCII in the URL) is read into a Python string
    holding U+D800, which the page cannot encode (``PolicyDocumentField.bound_data`` guards
    this on a POST only): each a 500. Expected: the add page without that initial value."""
    admin_client.raise_request_exception = False
    answer = admin_client.get(f"/admin/memory_core/policyversion/add/?document={quote(document)}")
    assert answer.status_code == 200, answer.status_code
