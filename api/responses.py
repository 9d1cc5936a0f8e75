"""The error answers the OpenAPI schema lists, one description each (docs/api.md, "Every
error"); every one has ``ErrorBodySerializer``'s shape."""

from drf_spectacular.utils import OpenApiResponse

from api.memories_serializers import ErrorBodySerializer


def error(description: str) -> OpenApiResponse:
    """Return an error answer of the schema: the stable error body, with ``description``."""
    return OpenApiResponse(ErrorBodySerializer, description=description)


BAD_REQUEST = error("Malformed body or query (invalid_input, field errors), or malformed_json.")
UNAUTHENTICATED = error(
    "Missing API key (not_authenticated), an Authorization header that holds no API key "
    "(not_an_api_key), or an unknown, revoked or expired key (authentication_failed)."
)
TOO_LARGE = error("Body too large (request_too_large).")
LENGTH_REQUIRED = error(
    "A body sent without a Content-Length, Transfer-Encoding: chunked say (length_required)."
)
NOT_JSON = error(
    "A body that is not application/json, has no Content-Type, or names a charset other than "
    "UTF-8, UTF-16, UTF-32, Latin-1 or ASCII (unsupported_media_type)."
)
RATE_LIMITED = error("Rate limit or write quota (rate_limited); Retry-After.")
UNAVAILABLE = error(
    "The memory store is unavailable (memory_unavailable); other work held a lock the "
    "request needs past MEMLEDGER_REQUEST_LOCK_TIMEOUT (busy); for a write, the embedding "
    "model failed (embedding_unavailable); for a write, a correction, a revoke, a task's "
    "close or a deletion request, the subject's memories are being deleted "
    "(subject_being_deleted). Nothing was stored; Retry-After."
)
NOT_FOUND = error("No such id, or outside the caller's scope (same answer).")
FORBIDDEN = error("The agent's write grant does not cover this memory type.")
DELETION_FORBIDDEN = error(
    "The agent's write grant does not cover this memory type (forbidden), or its grant does "
    "not reach every older version the memory supersedes (history_not_fully_granted): "
    "nothing was deleted."
)
SUBJECT_NOT_GRANTED = error(
    "An agent without any_subject named a subject its subject token does not name "
    "(subject_not_granted)."
)
CONFLICT = error("The memory is no longer the active head (or active).")
ALREADY_DELETED = error(
    "The memory is already deleted by a deletion the caller may not see, asked by someone "
    "else (already_deleted): nothing more to delete; the memory's events show its deletion."
)
DELETION_TOO_LARGE = error(
    "A memory's deletion did not finish within the time a request may spend on it "
    "(deletion_too_large, MEMLEDGER_DELETION_REQUEST_BUDGET): nothing was deleted; retry, or an "
    "operator runs manage.py delete_subject. A key's or a whole subject's deletion "
    "(POST /api/v1/deletions) is queued instead (202, status queued)."
)
REASON_REFUSED = error(
    "The reason holds what the injection guard refuses (reason_refused, details.rule_codes); "
    "nothing was revoked."
)
SUBJECT_REFUSED = error(
    "A new subject's id that a write about it would be refused for (subject_refused, "
    "details.rule_codes): no subject was made and no token issued."
)
GONE = error(
    "The tenant was deleted while the request was in flight (tenant_deleted): nothing of "
    "the request was stored."
)

NOT_ACCEPTABLE = error(
    "An Accept header that leaves out application/json, or refuses it with q=0 (not_acceptable)."
)
CHARSET_REFUSED = error(
    "A Content-Type naming a charset other than UTF-8, UTF-16, UTF-32, Latin-1 or ASCII, "
    "base64 say, whatever the method (unsupported_media_type)."
)
KEY_RATE_LIMITED = error(
    "A request carrying an agent's API key, past the key's rate limit (rate_limited); Retry-After."
)
QUERY_REFUSED = error(
    "A query string, which this endpoint does not read: each parameter is unknown_field "
    "(invalid_input)."
)

# Every agent endpoint: a key is needed, the rate limit and the database apply, and a query
# string is refused where none is read (api.parsing.QueryStringChecked; a list's own 400 and
# a body's, BAD_REQUEST, replace it), and an Accept header that takes no JSON is 406 (every
# answer is JSON: api.negotiation; the schema left it out until stop 57's audit), and a charset
# of no text is 415 on any method (api.middleware; left out of the GETs' until stop 61's).
AGENT = {
    400: QUERY_REFUSED,
    401: UNAUTHENTICATED,
    406: NOT_ACCEPTABLE,
    415: CHARSET_REFUSED,
    429: RATE_LIMITED,
    503: UNAVAILABLE,
}
# What any endpoint that reads a JSON body may refuse of it.
BODY = {411: LENGTH_REQUIRED, 413: TOO_LARGE, 415: NOT_JSON}
# An agent endpoint that takes a JSON body.
AGENT_BODY = {**AGENT, 400: BAD_REQUEST, **BODY}
# An agent endpoint that inserts rows of its tenant (memories, subjects, traces): the database
# refuses them once the tenant is deleted (migration 0011).
AGENT_INSERTS = {**AGENT_BODY, 410: GONE}
# The reviewer API: a portal session, and the database applies; an agent's key sent to it is
# charged to its rate limit (stop 58; the schema left the 429 out until stop 61's audit).
# Before BODY where both apply: a body's 415 says more.
REVIEWER = {406: NOT_ACCEPTABLE, 415: CHARSET_REFUSED, 429: KEY_RATE_LIMITED, 503: UNAVAILABLE}
