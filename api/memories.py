"""Memory endpoints: write through admission, batch, list, detail, supersede, revoke.

Views parse (input serializer), call one memory_core service or selector, render (output
serializer). Tenant and agent come from the API key only. Admission answers 201 (accepted),
202 (pending_approval: a reviewer must approve) or 422 (rejected, with rule codes).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.deletions import AcceptedSerializer, accepted
from api.exceptions import BODY_INVALID, error_details
from api.idempotency import (
    IDEMPOTENCY_KEY,
    KEY_IN_FLIGHT,
    KEY_REUSED,
    REJECTED_OR_KEY_REUSED,
    IdempotentWriteMixin,
)
from api.memories_serializers import (
    VISIBLE_MEMORY_IDS,
    AcceptedWriteSerializer,
    BatchResultSerializer,
    MemoryBatchSerializer,
    MemoryCorrectionSerializer,
    MemoryDetailSerializer,
    MemoryListQuerySerializer,
    MemorySerializer,
    MemoryWriteSerializer,
    PendingWriteSerializer,
    RejectedWriteSerializer,
    RevokeSerializer,
)
from api.pagination import MemoryListPagination
from api.parsing import QueryStringChecked, parse, parse_query
from api.responses import (
    AGENT,
    AGENT_BODY,
    AGENT_INSERTS,
    ALREADY_DELETED,
    BAD_REQUEST,
    CONFLICT,
    DELETION_FORBIDDEN,
    DELETION_TOO_LARGE,
    FORBIDDEN,
    NOT_FOUND,
    REASON_REFUSED,
    SUBJECT_NOT_GRANTED,
)
from api.throttling import SpendsNoWriteQuota
from memory_core.admission import correction_fields, parse_batch, parse_candidate
from memory_core.admission.candidate import ITEMS_INVALID, MAX_BATCH
from memory_core.deletion.services import deletion_request
from memory_core.exceptions import ValidationFailed
from memory_core.selectors.memories import (
    memory_detail,
    memory_list,
    memory_visible_references,
)
from memory_core.services.writes import (
    memory_correct,
    memory_revoke,
    memory_write,
    memory_write_batch,
)

WRITE_RESPONSES = {
    201: AcceptedWriteSerializer,
    202: PendingWriteSerializer,
    409: KEY_IN_FLIGHT,
    422: REJECTED_OR_KEY_REUSED,
    **AGENT_INSERTS,
}


def parse_write(serializer_class, data, domain_parser) -> None:
    """Check a write's body with ``serializer_class``, and when it does not fit, answer every
    mistake at once: the serializer's errors and those its domain parser
    (``memory_core.admission.candidate``) finds in the fields the serializer passed (a scope
    of no known kind, a user scope naming another subject, a value nested too deep), which
    were a second round's answer once the first was fixed. A body the serializer passes is
    parsed again by the write service, as before."""
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return
    errors = error_details(serializer.errors)
    try:
        domain_parser(data)
    except ValidationFailed as exc:
        for name, found in exc.details.items():
            errors.setdefault(name, found)  # the serializer's words for a field it refused
    # A batch's items' mistakes say so, whichever check found them: one endpoint answered
    # two messages for one kind of mistake (stop 52's audit of batches).
    items = any(name.startswith("items.") for name in errors)
    raise ValidationFailed(ITEMS_INVALID if items else BODY_INVALID, details=errors)


def _batch_items(data) -> None:
    """The domain parser of a batch's body: its items (the serializer refuses the rest)."""
    if isinstance(data, dict) and "items" in data:
        parse_batch(data["items"])


def references_context(request, *, memories=(), events=(), shown=()) -> dict:
    """Return the serializer context of an answer that renders ``memories`` and ``events``:
    which other memories it may name (``supersedes``, an event's ``successor`` or
    ``winner``), those the key may see, found in one query for the whole answer. ``shown``:
    rows read through ``visible_to`` (``memory_visible_references``)."""
    return {
        "request": request,
        VISIBLE_MEMORY_IDS: memory_visible_references(
            principal=request.user, memories=memories, events=events, shown=shown
        ),
    }


# A write's decision and how it is answered.
WRITE_ANSWERS = {
    "accepted": (AcceptedWriteSerializer, status.HTTP_201_CREATED),
    "pending_approval": (PendingWriteSerializer, status.HTTP_202_ACCEPTED),
    "rejected": (RejectedWriteSerializer, status.HTTP_422_UNPROCESSABLE_ENTITY),
}


def write_response(request, result) -> Response:
    """Render a WriteResult: 201 accepted, 202 pending_approval, 422 rejected."""
    serializer, http_status = WRITE_ANSWERS[result.decision]
    context = references_context(request, memories=[result.memory])
    return Response(serializer(result, context=context).data, status=http_status)


def write_status(results) -> int:
    """The status ``write_response`` answers a single write's result with."""
    return WRITE_ANSWERS[results[0].decision][1]


class MemoryListCreateView(QueryStringChecked, IdempotentWriteMixin, ListAPIView):
    """``GET`` lists the memories the key may see; ``POST`` writes one through admission."""

    query_methods = frozenset({"GET", "HEAD"})  # the list's filters and pages

    idempotency_endpoint = "memories"

    serializer_class = MemorySerializer
    pagination_class = MemoryListPagination

    def get_queryset(self):
        # The pagination reads the parsed query too (offset or cursor pages).
        self.query = parse_query(MemoryListQuerySerializer, self.request.query_params)
        return memory_list(
            principal=self.request.user,
            subject=self.query.get("subject", ""),
            memory_type=self.query.get("type", ""),
            status=self.query.get("status", ""),
            key=self.query.get("key", ""),
        )

    def list(self, request, *args, **kwargs):
        # ListAPIView.list, with the page's references resolved at once (one query).
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        context = references_context(request, memories=page, shown=page)
        return self.get_paginated_response(MemorySerializer(page, many=True, context=context).data)

    @extend_schema(
        parameters=[MemoryListQuerySerializer],
        responses={
            200: MemorySerializer(many=True),
            **AGENT,
            400: BAD_REQUEST,
            403: SUBJECT_NOT_GRANTED,
        },
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=MemoryWriteSerializer, parameters=[IDEMPOTENCY_KEY], responses=WRITE_RESPONSES
    )
    def post(self, request):
        return super().post(request)

    def perform_write(self, request):
        parse_write(MemoryWriteSerializer, request.data, parse_candidate)
        return [memory_write(principal=request.user, data=request.data)]

    def render(self, results):
        return write_response(self.request, results[0])

    status_of = staticmethod(write_status)


class MemoryBatchView(QueryStringChecked, IdempotentWriteMixin, APIView):
    """``POST`` up to 100 writes; each gets its own decision; one embedding batch."""

    idempotency_endpoint = "memories-batch"
    recorded_statuses = frozenset({status.HTTP_200_OK})

    def items_cost(self, request) -> int:
        """Return what the batch spends of the write quota: one write per item (a body that is
        not a batch spends one), so a batch buys no more writes than single requests do."""
        items = request.data.get("items") if isinstance(request.data, dict) else None
        return min(len(items), MAX_BATCH) if isinstance(items, list) and items else 1

    @extend_schema(
        request=MemoryBatchSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: BatchResultSerializer,
            409: KEY_IN_FLIGHT,
            422: KEY_REUSED,
            **AGENT_INSERTS,
        },
    )
    def post(self, request):
        return super().post(request)

    def perform_write(self, request):
        parse_write(MemoryBatchSerializer, request.data, _batch_items)
        return memory_write_batch(principal=request.user, items=request.data["items"])

    def render(self, results):
        counts = {"accepted": 0, "pending_approval": 0, "rejected": 0}
        for result in results:
            counts[result.decision] += 1
        context = references_context(self.request, memories=[r.memory for r in results])
        return Response(BatchResultSerializer({**counts, "results": results}, context=context).data)

    def status_of(self, results) -> int:
        return status.HTTP_200_OK


class MemoryDetailView(QueryStringChecked, SpendsNoWriteQuota, APIView):
    """``GET`` one memory with provenance, chain and events; ``DELETE`` requests deletion."""

    @extend_schema(responses={200: MemoryDetailSerializer, **AGENT, 404: NOT_FOUND})
    def get(self, request, memory_id):
        detail = memory_detail(principal=request.user, memory_id=memory_id)
        shown = [detail.memory, *detail.chain]  # both read through visible_to
        context = references_context(request, memories=shown, events=detail.events, shown=shown)
        return Response(MemoryDetailSerializer(detail, context=context).data)

    @extend_schema(
        request=None,
        responses={
            202: AcceptedSerializer,
            **AGENT,
            403: DELETION_FORBIDDEN,
            404: NOT_FOUND,
            409: ALREADY_DELETED,
            422: DELETION_TOO_LARGE,
        },
    )
    def delete(self, request, memory_id):
        return accepted(deletion_request(principal=request.user, memory_id=memory_id))


class MemorySupersedeView(QueryStringChecked, IdempotentWriteMixin, APIView):
    """``POST`` a new version of the memory through admission (a correction)."""

    idempotency_endpoint = "memory-supersede"

    @extend_schema(
        request=MemoryCorrectionSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={**WRITE_RESPONSES, 403: FORBIDDEN, 404: NOT_FOUND, 409: CONFLICT},
    )
    def post(self, request, memory_id):
        return super().post(request, memory_id=memory_id)

    def perform_write(self, request, memory_id):
        parse_write(MemoryCorrectionSerializer, request.data, correction_fields)
        return [memory_correct(principal=request.user, memory_id=memory_id, data=request.data)]

    def render(self, results):
        return write_response(self.request, results[0])

    status_of = staticmethod(write_status)


class MemoryRevokeView(QueryStringChecked, SpendsNoWriteQuota, APIView):
    """``POST`` revokes the memory: kept as evidence, never used again."""

    @extend_schema(
        request=RevokeSerializer,
        responses={
            200: MemorySerializer,
            403: FORBIDDEN,
            404: NOT_FOUND,
            409: CONFLICT,
            422: REASON_REFUSED,
            **AGENT_BODY,
        },
    )
    def post(self, request, memory_id):
        body = parse(RevokeSerializer, request.data)
        memory = memory_revoke(
            principal=request.user, memory_id=memory_id, reason=body.get("reason", "")
        )
        context = references_context(request, memories=[memory])
        return Response(MemorySerializer(memory, context=context).data)
