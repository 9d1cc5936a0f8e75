"""config.wsgi: the application gunicorn serves, called as gunicorn calls it."""

import io
import json
from wsgiref.util import setup_testing_defaults

import pytest

from config.wsgi import application

BAD_CHARSET = "application/json; charset*=bogus''utf-8"


def call(path: str, *, method: str = "POST", content_type: str, body: bytes = b"{}"):
    """Return (status, headers, body) of the WSGI application's answer."""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "HTTP_HOST": "localhost",
    }
    setup_testing_defaults(environ)
    answered = {}

    def start_response(status, headers, exc_info=None):
        answered["status"], answered["headers"] = status, dict(headers)

    content = b"".join(application(environ, start_response))
    return int(answered["status"].split()[0]), answered["headers"], content


@pytest.mark.parametrize("path", ["/api/v1/memories", "/api/v1/whoami", "/api/v1/retrieve"])
def test_a_content_type_django_cannot_read_is_the_json_400_under_the_api(path):
    """Django raised ValueError while it built the request (an RFC 2231 charset it does not
    know), before any middleware: the server answered a bare 500. Nothing reads the body, nor
    the database (no django_db mark)."""
    status, headers, content = call(path, content_type=BAD_CHARSET)
    assert status == 400
    assert headers["Content-Type"] == "application/json"
    assert headers["X-Request-ID"]
    error = json.loads(content)["error"]
    assert error["code"] == "bad_request"
    assert "Content-Type" in error["message"] and "bogus" in error["message"]


def test_a_content_type_django_cannot_read_is_a_400_outside_the_api_too():
    status, _, _ = call("/accounts/login/", content_type=BAD_CHARSET)
    assert status == 400


@pytest.mark.django_db(transaction=True)  # the handler's own transaction (ATOMIC_REQUESTS)
def test_a_readable_content_type_still_reaches_the_endpoint():
    status, headers, content = call(
        "/api/v1/whoami", method="GET", content_type="application/json; charset=utf-8"
    )
    assert status == 401  # no API key: the endpoint's own answer
    assert json.loads(content)["error"]["code"] == "not_authenticated"
