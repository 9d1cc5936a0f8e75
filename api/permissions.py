"""Deny by default: every API view needs an authenticated agent."""

from rest_framework.permissions import BasePermission

from memory_core.principals import AgentPrincipal


class IsAgent(BasePermission):
    """Allow only requests authenticated by an agent API key."""

    def has_permission(self, request, view) -> bool:
        return isinstance(request.user, AgentPrincipal)
