"""Deletion endpoints: request a deletion (202 with an operation id) and follow it."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.fields import IdField, UUIDStringField
from api.memories_serializers import QuerySerializer, StrictSerializer
from api.parsing import UNKNOWN_PARAMETER, QueryStringChecked, parse_query
from api.responses import AGENT, AGENT_BODY, ALREADY_DELETED, BAD_REQUEST, NOT_FOUND, error
from api.throttling import SpendsNoWriteQuota
from memory_core.deletion.selectors import (
    deletion_get,
    deletion_list,
    queued_deletions,
    step_evidence,
)
from memory_core.deletion.services import deletion_request, deletion_request_or_queue


class DeletionInputSerializer(StrictSerializer):
    """``{memory_id}``, ``{subject, memory_key}`` or ``{subject}`` (all of a subject's memories).

    Strict: a misspelt field (``memorykey``) is a 400 ``unknown_field``, never dropped, or
    ``{subject, memorykey}`` would delete the whole subject.
    """

    memory_id = UUIDStringField(required=False)
    subject = IdField(required=False, max_length=200)
    memory_key = IdField(required=False, max_length=200)

    def validate(self, attrs):
        if "memory_id" in attrs:
            if set(attrs) - {"memory_id"}:
                raise serializers.ValidationError(
                    "Give either memory_id alone, or subject with an optional memory_key."
                )
        elif "subject" not in attrs:
            raise serializers.ValidationError(
                "Give a memory_id, a subject with a memory_key, or a subject."
            )
        return attrs


class DeletionListQuerySerializer(QuerySerializer):
    """The list's query string: it takes no parameter, so each one is ``unknown_field``
    (``?limit=5`` and ``?subject=`` were ignored, and the answer read as a page or a filter
    it was not), with the message of every endpoint that takes none (it said "Unknown
    parameter.", as the lists that take others do)."""

    unknown_message = UNKNOWN_PARAMETER


class DeletionStepSerializer(serializers.Serializer):
    store = serializers.CharField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    verified_at = serializers.DateTimeField(allow_null=True)
    evidence = serializers.SerializerMethodField()

    def get_evidence(self, step) -> dict:
        # A shared store's figures stay the admin's (``step_evidence``).
        return step_evidence(step)


class DeletionOutputSerializer(serializers.Serializer):
    operation_id = serializers.UUIDField(source="id")
    status = serializers.CharField()
    target = serializers.CharField()
    requested_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    dead_lettered_at = serializers.DateTimeField(allow_null=True)
    memory_count = serializers.SerializerMethodField()
    steps = DeletionStepSerializer(many=True, source="steps.all")

    def get_memory_count(self, operation) -> int:
        # A list's operations come without their ids, counted (deletion_list).
        count = getattr(operation, "memory_count", None)
        return len(operation.memory_ids) if count is None else count


class DeletionListSerializer(serializers.Serializer):
    results = DeletionOutputSerializer(many=True)


class AcceptedSerializer(serializers.Serializer):
    operation_id = serializers.UUIDField()
    status = serializers.CharField()


def accepted(operation) -> Response:
    """Return the 202 answer for a deletion request."""
    return Response(
        {"operation_id": str(operation.id), "status": operation.status},
        status=status.HTTP_202_ACCEPTED,
        headers={"Location": f"/api/v1/deletions/{operation.id}"},
    )


class DeletionListCreateView(QueryStringChecked, SpendsNoWriteQuota, APIView):
    """Request the deletion of a memory, a subject's memory_key, or a whole subject; list them."""

    query_methods = frozenset({"GET", "HEAD"})  # the list parses its own (it takes none)

    @extend_schema(
        operation_id="deletions_list",
        responses={200: DeletionListSerializer, **AGENT, 400: BAD_REQUEST},
    )
    def get(self, request):
        parse_query(DeletionListQuerySerializer, request.query_params)
        # The queued ones first: each is still to be made.
        operations = queued_deletions(principal=request.user)[:100]
        operations += deletion_list(principal=request.user)[: 100 - len(operations)]
        return Response({"results": DeletionOutputSerializer(operations, many=True).data})

    @extend_schema(
        operation_id="deletions_create",
        request=DeletionInputSerializer,
        responses={
            202: AcceptedSerializer,
            **AGENT_BODY,
            403: error(
                "The agent's write grant does not cover the memory (forbidden), or not every "
                "older version it supersedes (history_not_fully_granted), or not every "
                "memory of the subject (subject_not_fully_granted), or, for a key's deletion "
                "too large for a request, not every memory on the key (key_not_fully_granted)."
            ),
            404: error("No such memory, subject or memory_key in the caller's scope."),
            409: ALREADY_DELETED,
            422: error(
                "A memory's deletion did not finish within the time a request may spend on it "
                "(deletion_too_large, MEMLEDGER_DELETION_REQUEST_BUDGET): nothing was deleted. "
                "A whole subject's or a key's is queued for a worker instead (202, status "
                "queued)."
            ),
        },
    )
    def post(self, request):
        data = DeletionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if "memory_id" in values:
            operation = deletion_request(principal=request.user, memory_id=values["memory_id"])
        else:  # a whole subject or a key: queued for a worker when too large for a request
            operation = deletion_request_or_queue(
                principal=request.user,
                subject_external_id=values["subject"],
                memory_key=values.get("memory_key", ""),
            )
        return accepted(operation)


class DeletionDetailView(QueryStringChecked, APIView):
    """Return a deletion operation's status and every step's verification evidence."""

    @extend_schema(
        operation_id="deletions_retrieve",
        responses={200: DeletionOutputSerializer, **AGENT, 404: NOT_FOUND},
    )
    def get(self, request, operation_id):
        operation = deletion_get(principal=request.user, operation_id=operation_id)
        return Response(DeletionOutputSerializer(operation).data)
