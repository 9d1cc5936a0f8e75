"""Bodies above ``MEMLEDGER_MAX_BODY_BYTES`` get 413 ``request_too_large``, never a 500.

DRF reads a JSON body straight from the stream, past Django's DATA_UPLOAD_MAX_MEMORY_SIZE
check, so the limit is enforced here on Content-Length before anything reads the body; a
RequestDataTooBig raised anyway (a form body read by Django) gets the same answer.

A body sent without a Content-Length (``Transfer-Encoding: chunked``, as a streaming client
sends it) gets 411 ``length_required``: Django reads a body of the length declared, so it read
this one as empty, and the answer said every field the body held was ``required``.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse

from api.exceptions import error_body


def too_large() -> JsonResponse:
    limit = settings.MEMLEDGER_MAX_BODY_BYTES
    message = f"The request body is larger than {limit} bytes."
    return JsonResponse(error_body("request_too_large", message, {"max_bytes": limit}), status=413)


# The methods whose body an endpoint reads (a GET's or a DELETE's is never read).
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def length_required() -> JsonResponse:
    message = (
        "The request body was sent without a Content-Length (Transfer-Encoding: chunked, "
        "say), and the API reads only a body of declared length: send it with Content-Length."
    )
    return JsonResponse(error_body("length_required", message), status=411)


class BodySizeLimitMiddleware:
    """Refuse API requests whose declared body is larger than the limit, or whose body has
    no declared length."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            if (
                request.method in BODY_METHODS
                and not request.META.get("CONTENT_LENGTH")
                and request.META.get("HTTP_TRANSFER_ENCODING")
            ):
                return length_required()
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.MEMLEDGER_MAX_BODY_BYTES:
                return too_large()
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, RequestDataTooBig):
            return too_large()
        return None
