"""The admin's searches read their term in NFC, as content, ids and keys are stored."""

import unicodedata

import pytest
from django.contrib.auth import get_user_model

from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", ["memory", "subject"])
def test_a_search_typed_in_decomposed_unicode_finds_what_it_names(admin_client, tenant, model):
    """Stop 61's review: "José" typed with a combining accent (text pasted from a macOS file
    name) found nothing in the admin's memory or subject list; the portal's search alike
    (the stop's audit)."""
    subject = SubjectFactory(tenant=tenant, external_id="josé-1")
    memory = MemoryFactory(subject=subject, content="José prefers green tea.")
    shown = str(memory.pk if model == "memory" else subject.pk)
    answer = admin_client.get(
        f"/admin/memory_core/{model}/", {"q": unicodedata.normalize("NFD", "José")}
    )
    assert answer.status_code == 200
    assert shown in answer.content.decode()


def test_the_user_lists_search_in_decomposed_unicode_finds_the_login(admin_client):
    """Stop 61's second review: the logins' list (Django's user admin, with memledger's
    guards) read its term as sent when the memory and subject lists were fixed."""
    user = get_user_model().objects.create_user("josé.reviewer", password="pw-unused-123")
    answer = admin_client.get("/admin/auth/user/", {"q": unicodedata.normalize("NFD", "José")})
    assert f"/admin/auth/user/{user.pk}/change/" in answer.content.decode()
