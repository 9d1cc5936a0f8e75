"""The ``Idempotency-Key`` header on memory writes: the view side of
``memory_core.services.idempotency`` (the contract is described there and in docs/api.md).

``IdempotentWriteMixin`` gives a write view its ``post``: without the header it writes and
renders as before; with it, ``services.idempotency.idempotent_write`` claims the key in a
savepoint of the request's transaction and writes (or replays), so anything that fails after
the claim (a 400 from the body, a 404, a 409, a 503) rolls the claim back with the write and
the key stays free for the retry.
"""

import copy
from dataclasses import replace

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer
from rest_framework import status

from api.memories_serializers import ErrorBodySerializer, RejectedWriteSerializer
from api.responses import error
from api.throttling import write_quota_charge, write_quota_refund
from memory_core.exceptions import IdempotencyKeyReused, ValidationFailed
from memory_core.selectors.memories import memory_visible_values
from memory_core.services.idempotency import (
    idempotency_answered,
    idempotency_fingerprint,
    idempotency_key_parse,
    idempotent_write,
)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"

IDEMPOTENCY_KEY = OpenApiParameter(
    name=HEADER,
    type=str,
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "1 to 255 printable ASCII characters naming this request, chosen by the agent "
        "(a UUID, say). A retry with the same key and the same request within 24 hours "
        "(MEMLEDGER_IDEMPOTENCY_TTL_HOURS) gets "
        "the first answer again (header Idempotent-Replayed: true; the memory as it is now, "
        "or null when the key may no longer see it) "
        "and writes nothing; the same key with another request is 422 "
        "idempotency_key_reused. Keys are the agent's own."
    ),
)
KEY_REUSED = error(
    "The Idempotency-Key was already used for another request (idempotency_key_reused)."
)
KEY_IN_FLIGHT = error(
    "A request with this Idempotency-Key is still in flight (idempotency_key_in_flight)."
)
# A write's 422: the admission policy's rejection, or a key used for another request.
REJECTED_OR_KEY_REUSED = PolymorphicProxySerializer(
    component_name="RejectedWriteOrError",
    serializers=[RejectedWriteSerializer, ErrorBodySerializer],
    resource_type_field_name=None,
)


class IdempotentWriteMixin:
    """A write endpoint that honours ``Idempotency-Key``.

    The view says what the key is recorded under (``idempotency_endpoint``), what it writes
    (``perform_write``, returning WriteResults), how results are rendered (``render``) and
    with which status (``status_of``), and which statuses are decisions worth answering again
    (``recorded_statuses``).
    """

    idempotency_endpoint = ""
    recorded_statuses = frozenset(
        {status.HTTP_201_CREATED, status.HTTP_202_ACCEPTED, status.HTTP_422_UNPROCESSABLE_ENTITY}
    )

    def perform_write(self, request, **kwargs) -> list:
        raise NotImplementedError

    def render(self, results):
        raise NotImplementedError

    def status_of(self, results) -> int:
        """The status ``render`` answers ``results`` with (without rendering them)."""
        raise NotImplementedError

    def items_cost(self, request) -> int:
        """Return the writes the request spends of the quota when it is not a replay."""
        return 1

    def write_cost(self, request) -> int:
        """The write quota's cost (api/throttling.py): nothing for a bad key (answered 400
        before anything is written), nor for a key a committed request holds (replayed, or
        refused as reused: either way nothing is written; should the key expire before the
        claim, the write is charged then: ``_write``)."""
        try:
            key = idempotency_key_parse(request.headers.get(HEADER))
        except ValidationFailed:
            return 0
        if key is not None and idempotency_answered(principal=request.user, key=key):
            request.write_quota_deferred = True
            return 0
        return self.items_cost(request)

    def _write(self, request, **kwargs) -> list:
        """Write under a claimed key. A request the write quota let through for nothing (its
        key answered as the throttle counted) is charged now: the key expired before the claim
        took it over, so it writes (stored uncharged until stop 59's audit of rate limits).
        Past the quota it is refused 429, and the claim rolls back with it."""
        if getattr(request, "write_quota_deferred", False):
            write_quota_charge(request, self.items_cost(request))
        return self.perform_write(request, **kwargs)

    def _fingerprint(self, request, *, path: str | None = None) -> str:
        return idempotency_fingerprint(
            method=request.method,
            path=_canonical_path(request) if path is None else path,
            body=request.data,
            bound_subject=getattr(request.user, "bound_user_id", None),
        )

    def _fingerprints_before(self, request) -> tuple[str, ...]:
        """The request's fingerprint as releases before stop 62 made it, of the path as
        sent, when that is not the route's: their records' retries are the same request for
        the key's whole life (``MEMLEDGER_IDEMPOTENCY_TTL_HOURS``), and were refused as
        another after the upgrade (stop 62's review). Not needed once every record made
        before it has expired."""
        if request.path == _canonical_path(request):
            return ()
        return (self._fingerprint(request, path=request.path),)

    def post(self, request, **kwargs):
        key = idempotency_key_parse(request.headers.get(HEADER))
        if key is None:
            return self.render(self.shown(request, self.perform_write(request, **kwargs)))
        try:
            outcome = idempotent_write(
                principal=request.user,
                key=key,
                endpoint=self.idempotency_endpoint,
                fingerprint=self._fingerprint(request),
                also=self._fingerprints_before(request),
                write=lambda: self._write(request, **kwargs),
                recorded_status=self._recorded_status,
            )
        except IdempotencyKeyReused:
            # Refused without writing; charged when the key's first request was still in
            # flight as the throttle counted (write_cost could not yet tell it was taken).
            write_quota_refund(request)
            raise
        # A replay's memories are read as the caller may see them (``idempotency_results``).
        results = outcome.results if outcome.replayed else self.shown(request, outcome.results)
        response = self.render(results)
        if outcome.replayed:
            write_quota_refund(request)  # counted while the first request was still in flight
            response.status_code = outcome.status_code
            response[REPLAYED_HEADER] = "true"
        return response

    @staticmethod
    def shown(request, results) -> list:
        """``results`` as the caller's later reads answer them: the memories it may not read
        left out (``memory: null``), as their replay leaves them out and the detail answers
        404 (a grant may write a type it does not read, and the first answer showed the whole
        memory, id and content, that its replay a moment later did not: stop 56's audit of
        the write API), and each other one's ``value`` as stored (a number written
        ``1e+20`` is the integer jsonb keeps, as the replay and the detail answer it: stop
        57's audit of the write API)."""
        written = [result.memory.pk for result in results if result.memory is not None]
        stored = memory_visible_values(principal=request.user, ids=written)
        return [
            result
            if result.memory is None
            else replace(result, memory=_as_stored(result.memory, stored))
            for result in results
        ]

    def _recorded_status(self, results) -> int | None:
        """The status a decision is answered with again, or None when it records nothing."""
        status_code = self.status_of(results)
        return status_code if status_code in self.recorded_statuses else None


def _as_stored(memory, stored: dict):
    """A copy of ``memory`` with its stored ``value``, or None when the caller may not read it."""
    if memory.pk not in stored:
        return None
    shown = copy.copy(memory)
    shown.value = stored[memory.pk]
    return shown


def _canonical_path(request) -> str:
    """Return the request's path as its URL pattern writes it: a memory id in the path is
    read in either letter case (``converters.AnyCaseUUIDConverter``), and hashed as sent, a
    retry naming the same memory in upper case was refused ``idempotency_key_reused`` as
    another request (stop 62's audit of writes)."""
    match = request.resolver_match
    if match is None or not match.view_name:
        return request.path
    return reverse(match.view_name, args=match.args, kwargs=match.kwargs)
