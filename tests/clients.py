"""API clients of the tests: an agent's, authenticated by a fresh key of its own."""

from rest_framework.test import APIClient

from memory_core.services.api_keys import api_key_create


def client_for(agent, subject_token: str | None = None) -> APIClient:
    """Return an API client authenticated as ``agent`` by a new key (and, with
    ``subject_token``, acting for that token's subject)."""
    _, raw = api_key_create(agent=agent)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    if subject_token:
        headers["HTTP_X_MEMLEDGER_SUBJECT_TOKEN"] = subject_token
    client = APIClient()
    client.credentials(**headers)
    return client
