"""Agent authentication: ``Authorization: Bearer <api key>``."""

import re

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from api.throttling import rate_limit_charge_refused
from memory_core.exceptions import DomainError
from memory_core.principals import AgentPrincipal
from memory_core.rls import request_tenant_set
from memory_core.services.api_keys import api_key_resolve, api_key_shaped, api_key_used
from memory_core.subject_tokens import HEADER as SUBJECT_TOKEN_HEADER
from memory_core.subject_tokens import subject_token_verify

# An authentication scheme's name (RFC 9110's token), short enough to be named in an answer.
_SCHEME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}")
KEY_FORM = "mlk_<12 hex digits>_<43 letters, digits, - or _>"


class NotAnApiKey(exceptions.AuthenticationFailed):
    """An Authorization header that holds no API key of this service (another scheme, or a
    bearer token of another shape): 401 ``not_an_api_key``, not the answer of a key that is
    unknown or revoked, which sent integrators looking for a revocation that never was."""

    default_code = "not_an_api_key"


def not_an_api_key(scheme: str, raw_key: str, *, bare: bool = False) -> NotAnApiKey:
    """Return the refusal of a header that holds no API key, saying what was sent instead
    (never the credential itself). ``bare``: the header is one word, no space in it, which
    is a credential sent without its scheme as often as a scheme without its credential:
    it is never named (a password sent so was quoted back as "the hunter2 scheme")."""
    if bare and scheme.lower() != ApiKeyAuthentication.keyword.lower():
        return NotAnApiKey(
            "This is not an API key: the Authorization header holds one word, with no scheme "
            "before it (a key sent without its scheme, say). Send Authorization: Bearer "
            "<api key>."
        )
    if scheme.lower() != ApiKeyAuthentication.keyword.lower():
        named = f"the {scheme} scheme" if _SCHEME.fullmatch(scheme) else "another scheme"
        return NotAnApiKey(
            f"This is not an API key: the Authorization header uses {named}. Send "
            "Authorization: Bearer <api key>."
        )
    if not raw_key:
        return NotAnApiKey(
            "This is not an API key: the Authorization header names the Bearer scheme and no "
            "key. Send Authorization: Bearer <api key>."
        )
    return NotAnApiKey(
        f"This is not an API key: memledger's keys read {KEY_FORM} (manage.py "
        "create_agent_key); a token of another service, or a key cut short or altered when "
        "copied, is not one."
    )


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """Resolve a bearer API key to an AgentPrincipal; the key fixes tenant and agent."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, space, raw_key = header.partition(" ")
        raw_key = raw_key.strip()
        # Case-insensitive, as every HTTP authentication scheme (RFC 9110, 11.1): "bearer".
        if scheme.lower() != self.keyword.lower() or not api_key_shaped(raw_key):
            raise not_an_api_key(scheme, raw_key, bare=not space)
        key = api_key_resolve(raw_key)
        if key is None:
            raise exceptions.AuthenticationFailed(
                "Unknown, revoked or expired API key, or its agent was deactivated or its "
                "tenant deleted."
            )
        api_key_used(key)
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
                rate_limit_charge_refused(request, key.id)
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
