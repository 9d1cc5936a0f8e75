"""``POST /api/v1/subject-tokens``: the product backend gets a subject token for an agent.

The backend has authenticated the user an agent is about to serve; with the key of an agent
granted ``issues_subject_tokens`` it asks for a token naming that user, and hands it to the
serving agent, which sends it as ``X-Memledger-Subject-Token`` (memory_core/subject_tokens.py).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api.fields import IdField
from api.memories_serializers import StrictSerializer
from api.parsing import QueryStringChecked
from api.responses import AGENT_INSERTS, NOT_FOUND, SUBJECT_REFUSED, error
from memory_core.admission.candidate import HARD_MAX_ID_CHARS
from memory_core.models import Agent
from memory_core.subject_tokens import subject_token_grant

NOT_AN_ISSUER = error(
    "The calling agent's grant lacks issues_subject_tokens (subject_tokens_not_granted)."
)


class SubjectTokenInput(StrictSerializer):
    # Read as an id (trimmed, NFC, a bidirectional control refused), as names are stored.
    agent = IdField(
        max_length=Agent._meta.get_field("name").max_length,
        help_text="The name of the agent that will act for the subject.",
    )
    subject = IdField(
        max_length=HARD_MAX_ID_CHARS, help_text="The subject's external id (the user served)."
    )


class SubjectTokenOutput(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as X-Memledger-Subject-Token.")
    agent = serializers.CharField()
    subject = serializers.CharField()
    expires_at = serializers.DateTimeField()


class SubjectTokenView(QueryStringChecked, APIView):
    """Issue a short-lived token letting one agent of the tenant act for one subject."""

    reads_only = True  # no memory is written: no write quota is spent

    @extend_schema(
        request=SubjectTokenInput,
        # A token for a new subject inserts the subject: 410 once the tenant is deleted.
        responses={
            201: SubjectTokenOutput,
            **AGENT_INSERTS,
            403: NOT_AN_ISSUER,
            404: NOT_FOUND,
            422: SUBJECT_REFUSED,
        },
    )
    def post(self, request):
        body = SubjectTokenInput(data=request.data)
        body.is_valid(raise_exception=True)
        issued = subject_token_grant(
            principal=request.user,
            agent_name=body.validated_data["agent"],
            user_id=body.validated_data["subject"],
        )
        return Response(SubjectTokenOutput(issued).data, status=201)
