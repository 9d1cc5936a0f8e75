"""``subject_token_create`` "refuses the ids ... the API refuses" (stop 55's review): the API
(``IdField``, a DRF CharField: ``null_characters_not_allowed``) and the command
(``check_texts``) refuse a subject id holding a NUL or a lone surrogate; in-process such an
id reaches the database driver, which raises its own ValueError / UnicodeEncodeError instead
of the function's refusal (a ``DomainError``).

Stop 55's review of ``subject_token_create``: a NUL or a lone surrogate reached the database
driver, and a tenant id that is no UUID Django's ValidationError (the tests failed before).
"""

import pytest

from memory_core.exceptions import DomainError
from memory_core.models import Subject
from memory_core.subject_tokens import subject_token_create
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("user_id", ["user\x00-42", "user-\ud800"])
def test_a_token_created_in_process_refuses_an_id_the_api_refuses(tenant, user_id):
    agent = AgentFactory(tenant=tenant, any_subject=False)
    before = Subject.objects.filter(tenant=tenant).count()
    with pytest.raises(DomainError):
        subject_token_create(tenant_id=tenant.id, agent_id=agent.id, user_id=user_id)
    assert Subject.objects.filter(tenant=tenant).count() == before


@pytest.mark.parametrize("user_id", ["user\x00-42", "user-\ud800"])
def test_the_api_refuses_those_ids_with_a_400(tenant, user_id):
    """What the in-process way should match (a control: passes now)."""
    from rest_framework.test import APIClient

    from memory_core.services.api_keys import api_key_create

    agent = AgentFactory(tenant=tenant, any_subject=False)
    backend = AgentFactory(tenant=tenant, name="backend", issues_subject_tokens=True)
    _, raw = api_key_create(agent=backend)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    subject = user_id.encode("unicode_escape").decode().replace("\\x00", "\\u0000")
    body = '{"agent": "' + agent.name + '", "subject": "' + subject + '"}'
    response = client.post("/api/v1/subject-tokens", body, content_type="application/json")
    assert response.status_code == 400, response.content


def test_a_token_created_in_process_for_a_tenant_id_that_is_no_uuid_is_not_found(tenant):
    """The docstring: "``NotFound`` for an agent that is not the tenant's". The review fixed an
    agent id that is no UUID (Django's ValidationError from the query); a tenant named by its
    slug, as the command takes it (``--tenant acme``), still ends in that ValidationError."""
    from memory_core.exceptions import NotFound

    agent = AgentFactory(tenant=tenant, any_subject=False)
    with pytest.raises(NotFound):
        subject_token_create(tenant_id=tenant.slug, agent_id=agent.id, user_id="user-new")
    assert not Subject.objects.filter(tenant=tenant, external_id="user-new").exists()
