"""Agent authentication: ``Authorization: Bearer <api key>``."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from memory_core.exceptions import DomainError
from memory_core.principals import AgentPrincipal
from memory_core.rls import request_tenant_set
from memory_core.services.api_keys import api_key_resolve
from memory_core.subject_tokens import HEADER as SUBJECT_TOKEN_HEADER
from memory_core.subject_tokens import subject_token_verify


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """Resolve a bearer API key to an AgentPrincipal; the key fixes tenant and agent."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw_key = header.partition(" ")
        # Case-insensitive, as every HTTP authentication scheme (RFC 9110, 11.1): "bearer".
        if scheme.lower() != self.keyword.lower() or not raw_key.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <api key>'.")
        key = api_key_resolve(raw_key.strip())
        if key is None:
            raise exceptions.AuthenticationFailed(
                "Unknown, revoked or expired API key, or its agent was deactivated or its "
                "tenant deleted."
            )
        # From here on the request's transaction acts for this tenant only (row-level
        # security); the key's own tables are readable before a tenant is known.
        request_tenant_set(key.agent.tenant_id)
        bound_user_id = None
        token = request.META.get(SUBJECT_TOKEN_HEADER)
        if token:
            try:
                bound_user_id = subject_token_verify(
                    token, tenant_id=key.agent.tenant_id, agent_id=key.agent_id
                )
            except DomainError as exc:
                raise exceptions.AuthenticationFailed(exc.message) from exc
        principal = AgentPrincipal.from_agent(
            key.agent, api_key_id=key.id, bound_user_id=bound_user_id
        )
        return principal, key

    def authenticate_header(self, request) -> str:
        return self.keyword


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An agent API key."}
