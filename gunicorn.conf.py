"""gunicorn's settings for memledger: read from the working directory by ``gunicorn
config.wsgi`` (run it from the project's root, or pass ``-c path/to/gunicorn.conf.py``).

gunicorn refuses some requests before Django sees them: a request line longer than
``limit_request_line`` (4094 bytes: 414), more than ``limit_request_fields`` headers or one
longer than ``limit_request_field_size`` (431), a request line or header that is not HTTP (a
NUL byte in a header, say: 400). It answered them with an HTML page. Agents parse JSON, and
every other error of the API has one shape (docs/api.md), so these answer it too:
``{"error": {"code", "message", "details"}}``, with gunicorn's own reason in ``details``.

gunicorn writes these answers with ``gunicorn.util.write_error``, which its workers call
through the module; it is replaced here, in the master, before the workers fork. The file
imports nothing of the project's, so the master stays as light as before.
"""

import json

from gunicorn import util

# The access log (written when gunicorn is given ``--access-logfile``) names each request by
# its method and path, never its query string (``%(U)s``, not ``%(r)s``): a query holds the
# memory list's ``subject`` (a person's external id) and ``key``, the portal's search words,
# and a log is a store no deletion reaches (config/log_filters.py). With the answer's
# X-Request-ID, the id the application's log lines carry.
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms %({x-request-id}o)s'

# (stable error code, the human sentence) by the status gunicorn answers.
GUNICORN_ERRORS = {
    400: (
        "malformed_request",
        "The request is not valid HTTP: check its request line and headers.",
    ),
    403: ("forbidden", "The server refused the request before reading it."),
    414: (
        "request_line_too_long",
        "The request line (method, path and query) is longer than the server accepts: send "
        "long inputs in a JSON body.",
    ),
    417: ("expectation_failed", "The server does not support the Expect header sent."),
    431: (
        "headers_too_large",
        "The request has more header fields, or a longer one, than the server accepts.",
    ),
    500: ("internal_error", "The server failed to handle the request; it has been logged."),
    501: ("not_implemented", "The request uses a transfer coding the server does not support."),
}


def json_error_response(status: int, reason: str, detail: str) -> bytes:
    """The whole HTTP answer to a request gunicorn refused: the API's error shape in JSON."""
    code, message = GUNICORN_ERRORS.get(status, ("bad_request", "The server refused the request."))
    body = json.dumps(
        {
            "error": {
                "code": code,
                "message": message,
                "details": {"server": detail} if detail else {},
            }
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def write_json_error(sock, status_int, reason, mesg):
    util.write_nonblock(sock, json_error_response(status_int, reason, mesg))


util.write_error = write_json_error
