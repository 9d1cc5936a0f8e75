"""The reviewer API: the queue of a tenant's review items, approve or reject with a reason.

Reviewers are portal users (Django session login) with a PortalMembership of role reviewer;
API keys are refused here. Session authentication enforces CSRF on POST.
"""

from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication
from rest_framework.generics import ListAPIView
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import ApiKeyAuthentication
from api.memories_serializers import (
    ErrorBodySerializer,
    ReviewDecisionSerializer,
    ReviewItemSerializer,
    ReviewListQuerySerializer,
)
from api.pagination import MemoryPagination
from api.parsing import QueryStringChecked, parse, parse_query
from api.responses import BODY, CONFLICT, NOT_FOUND, QUERY_REFUSED, REVIEWER
from api.throttling import rate_limit_charge_refused
from memory_core.exceptions import Conflict
from memory_core.rls import request_tenant_set
from memory_core.selectors.reviews import review_get, review_list, reviewer_principal_for
from memory_core.services.reviews import review_approve, review_reject

DENIED = OpenApiResponse(
    ErrorBodySerializer, description="Not a reviewer's session, or no CSRF token on POST."
)


class IsReviewer(BasePermission):
    """Allow logged-in portal reviewers; attach their ReviewerPrincipal to the request."""

    message = "Log in to the portal as a reviewer of this tenant to use the reviewer API."

    def has_permission(self, request, view) -> bool:
        principal = reviewer_principal_for(request.user)
        request.reviewer = principal
        if principal is not None:
            # The request's transaction acts for the reviewer's tenant only (RLS).
            request_tenant_set(principal.tenant_id)
        return principal is not None


def _note_agent(request) -> None:
    """Name the agent whose API key a refused request carries, if it holds one: an agent's
    request refused with 403 is recorded as one (``AccessDenialMiddleware``, the health
    page's cross-scope denials). The session-only views never read the key, and an agent
    probing the reviewer queue went uncounted (stop 55's audit of the reviewer API).

    The request is charged to the key's rate limit, as every request of an API key is
    (docs/api.md, 429), and past it answered 429 instead of the 403: DRF refuses on
    permission before its throttles run, so each probe was a key lookup, a write of its
    last use and an ``AccessDenial`` row, never limited (stop 58's audit of authentication).
    """
    try:
        found = ApiKeyAuthentication().authenticate(request)
    except exceptions.AuthenticationFailed:
        return  # no API key, or one of nobody: no agent to record
    if found is not None:
        principal, key = found
        rate_limit_charge_refused(request, key.id)
        request._request.user = principal


class ReviewerView:
    authentication_classes = [SessionAuthentication]
    permission_classes = [IsReviewer]

    def permission_denied(self, request, message=None, code=None):
        """Refuse with 403 ``forbidden``, logged in or not.

        DRF would say ``not_authenticated`` to a request without a session, with a 403
        because a session has no ``WWW-Authenticate`` challenge: the API pairs that code with
        401 (a missing API key), so every refusal here is ``forbidden`` (docs/api.md).
        """
        if getattr(request, "reviewer", None) is None:
            _note_agent(request)
        raise exceptions.PermissionDenied(message or IsReviewer.message)

    def finalize_response(self, request, response, *args, **kwargs):
        """Every answer with ``never_cache``'s headers, as the portal's pages: a reviewer's
        session (a cookie, which keeps no shared cache off as an Authorization header does)
        is answered pending sensitive writes, words included, which a browser's cache or a
        proxy's kept after logout (stop 50's audit)."""
        response = super().finalize_response(request, response, *args, **kwargs)
        add_never_cache_headers(response)
        return response


class ReviewItemListView(QueryStringChecked, ReviewerView, ListAPIView):
    """The reviewer's queue (default: open items), oldest first."""

    query_methods = frozenset({"GET", "HEAD"})  # its filters and pages

    serializer_class = ReviewItemSerializer
    pagination_class = MemoryPagination

    def get_queryset(self):
        # The pagination reads the parsed limit and offset too.
        self.query = parse_query(ReviewListQuerySerializer, self.request.query_params)
        return review_list(
            principal=self.request.reviewer,
            state=self.query.get("state", "open"),
            kind=self.query.get("kind", ""),
        )

    @extend_schema(
        parameters=[ReviewListQuerySerializer],
        responses={
            200: ReviewItemSerializer(many=True),
            400: ErrorBodySerializer,
            403: DENIED,
            **REVIEWER,
        },
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class ReviewItemDetailView(QueryStringChecked, ReviewerView, APIView):
    @extend_schema(
        responses={
            200: ReviewItemSerializer,
            400: QUERY_REFUSED,
            403: DENIED,
            404: NOT_FOUND,
            **REVIEWER,
        }
    )
    def get(self, request, item_id):
        return Response(
            ReviewItemSerializer(review_get(principal=request.reviewer, item_id=item_id)).data
        )


class _ReviewDecisionView(QueryStringChecked, ReviewerView, APIView):
    service = None

    @extend_schema(
        request=ReviewDecisionSerializer,
        responses={
            200: ReviewItemSerializer,
            400: ErrorBodySerializer,
            403: DENIED,
            404: NOT_FOUND,
            409: CONFLICT,
            **REVIEWER,
            **BODY,
        },
    )
    def post(self, request, item_id):
        body = parse(ReviewDecisionSerializer, request.data)
        try:
            item = type(self).service(
                principal=request.reviewer, item_id=item_id, reason=body["reason"]
            )
        except Conflict as exc:
            if exc.code == "not_a_sensitive_write":
                # The domain names the action; where a reviewer takes it is the portal's page.
                page = reverse("portal:review:conflicts")
                raise Conflict(
                    f"{exc.message} Choose it on {page}, the portal's conflicts page.",
                    code=exc.code,
                ) from exc
            raise
        return Response(
            ReviewItemSerializer(review_get(principal=request.reviewer, item_id=item.id)).data
        )


class ReviewApproveView(_ReviewDecisionView):
    """Approve a pending sensitive write: it becomes active."""

    service = staticmethod(review_approve)


class ReviewRejectView(_ReviewDecisionView):
    """Reject a pending sensitive write: it stays rejected, never used."""

    service = staticmethod(review_reject)
