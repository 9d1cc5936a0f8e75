"""config.wsgi: the application gunicorn serves, called as gunicorn calls it."""

import encodings
import io
import json
import uuid
from wsgiref.util import setup_testing_defaults

import pytest
from django.db import connections

from config.wsgi import application

BAD_CHARSET = "application/json; charset*=bogus''utf-8"


@pytest.fixture(autouse=True)
def _no_connection_left_open(request):
    """The application's ``request_started`` checks a connection an earlier test of the
    worker left open (``close_old_connections``), a read of the database, which these tests,
    without the django_db mark, may not make: which test file ran before them in the worker
    decided whether they passed (seen at stop 50, when a new test file moved them)."""
    if request.node.get_closest_marker("django_db") is None:
        connections.close_all()


def call(
    path: str,
    *,
    method: str = "POST",
    content_type: str,
    body: bytes = b"{}",
    query: str = "",
    headers: dict | None = None,
):
    """Return (status, headers, body) of the WSGI application's answer."""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "HTTP_HOST": "localhost",
        **(headers or {}),
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


# A charset Django can look up becomes the request's encoding, and Django decoded the query
# string with it while it built the request: a codec that is no text encoding raised
# LookupError there, before any middleware, and the server answered a bare 500.
NOT_TEXT = ["base64", "rot13", "bz2_codec"]
# Stop 64's audit of the API: a text encoding the API does not read
# (api.parsers.READABLE_CHARSETS) was the request's encoding too, and punycode and idna decode
# in quadratic time, a portal form's fields as an API body.
NOT_READ = ["punycode", "idna", "unicode_escape"]


@pytest.mark.parametrize("charset", [*NOT_TEXT, *NOT_READ])
@pytest.mark.parametrize(
    ("method", "path", "query"),
    [
        ("GET", "/api/v1/memories", "limit=5"),
        ("GET", "/api/v1/whoami", ""),
        ("POST", "/api/v1/memories", "limit=5"),
        ("POST", "/api/v1/retrieve", ""),
    ],
)
def test_a_charset_the_api_does_not_read_is_its_415_whatever_the_method(
    charset, method, path, query
):
    """The answer the JSON parser gives a body in that charset (tests/api/test_parsers.py),
    before the key is even read, with a query string or without."""
    status, headers, content = call(
        path,
        method=method,
        query=query,
        content_type=f"application/json; charset={charset}",
    )
    assert status == 415, content
    assert headers["Content-Type"] == "application/json"
    error = json.loads(content)["error"]
    assert error["code"] == "unsupported_media_type"
    assert f'the charset "{charset}"' in error["message"] and "UTF-8" in error["message"]


@pytest.mark.parametrize("charset", [*NOT_TEXT, *NOT_READ])
def test_a_charset_the_api_does_not_read_is_a_400_outside_the_api(charset):
    status, _, _ = call(
        "/accounts/login/",
        method="GET",
        query="next=/portal/",
        content_type=f"text/plain; charset={charset}",
    )
    assert status == 400


@pytest.mark.django_db(transaction=True)  # the handler's own transaction (ATOMIC_REQUESTS)
@pytest.mark.parametrize(
    ("query", "charset", "named"),
    [
        ("caf%C3%A9=1", "latin-1", "café"),  # read as latin-1, it was "cafÃ©"
        ("caf%C3%A9=1", "utf-16", "café"),
    ],
)
def test_the_query_string_is_read_as_utf8_whatever_the_charset(api_key, query, charset, named):
    status, _, content = call(
        "/api/v1/whoami",
        method="GET",
        query=query,
        content_type=f"application/json; charset={charset}",
        headers={"HTTP_AUTHORIZATION": f"Bearer {api_key}"},
    )
    assert status == 400, content
    assert list(json.loads(content)["error"]["details"]) == [named]


def test_a_made_up_charset_leaves_nothing_behind_in_the_worker():
    """Stop 64's fix of the API audit found Python's codec search keeping every name it is
    asked for, one it does not know too, for the life of the process: Django looked each
    request's charset up, so a charset made up for each request, before any key or rate
    limit, grew a worker without end. A charset is read off the alias table now, and one
    the server does not read is refused before Django looks it up."""

    made_up = [f"x-made-up-{n}" for n in range(5)]
    for charset in made_up:
        status, _, _ = call(
            "/accounts/login/", method="GET", content_type=f"text/plain; charset={charset}"
        )
        assert status == 400
    assert not {encodings.normalize_encoding(charset) for charset in made_up} & set(
        encodings._cache
    )


@pytest.mark.parametrize("charset", ["UTF8", "u8", "us-ascii", "ISO_8859-1", "latin1", "UTF-16LE"])
def test_a_readable_charset_is_known_by_its_aliases(charset):
    from api.parsers import is_readable_charset

    assert is_readable_charset(charset)


def _kept(names):
    """The names of ``names`` Python's codec search now holds (as codecs.lookup normalizes)."""
    return {encodings.normalize_encoding(name.lower()) for name in names} & set(encodings._cache)


@pytest.mark.parametrize("path", ["/accounts/login/", "/api/v1/memories"])
def test_a_made_up_rfc2231_charset_in_the_content_type_leaves_nothing_behind(path):
    """Stop 64's review of the API's charsets: the request called Django's
    ``parse_header_parameters`` first, which runs ``codecs.lookup`` on the charset of every
    RFC 2231 parameter (``x*=<charset>''<value>``), any parameter, before the readable check:
    a made-up name per request was kept for good, as ``charset=`` was before. Such a
    parameter is refused as Django refuses an unknown one (400), before it is looked up."""
    made_up = [f"made-up-{uuid.uuid4().hex}" for _ in range(5)]
    for name in made_up:
        status, _, _ = call(path, method="GET", content_type=f"application/json; x*={name}''%41")
        assert status == 400
    assert not _kept(made_up)


@pytest.mark.django_db(transaction=True)  # the handler's own transaction (ATOMIC_REQUESTS)
def test_a_made_up_rfc2231_charset_in_the_accept_header_leaves_nothing_behind():
    """Stop 64's review of the API's charsets: DRF's negotiation (``_MediaType``,
    api/negotiation.py) reads every ``Accept`` range with ``parse_header_parameters`` too,
    before the key is read: the same lookup, for any caller of any API endpoint. Such a range
    is read as its media type alone."""
    made_up = [f"made-up-{uuid.uuid4().hex}" for _ in range(5)]
    for name in made_up:
        status, _, _ = call(
            "/api/v1/whoami",
            method="GET",
            content_type="",
            headers={"HTTP_ACCEPT": f"application/json; x*={name}''%41"},
        )
        assert status == 401
    assert not _kept(made_up)


def _multipart(fields: dict[str, str], *, boundary: str = "b0undary") -> tuple[str, bytes]:
    """Return (Content-Type, body) of a multipart form of ``fields``."""
    parts = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    )
    return f"multipart/form-data; boundary={boundary}", parts + f"--{boundary}--\r\n".encode()


# An anonymous caller's cookie of its own making passes the CSRF check's first step (a cookie
# is there), after which the check read the form's token from request.POST: the parts.
CSRF_SECRET = "a" * 32
CSRF_COOKIE = {"HTTP_COOKIE": f"csrftoken={CSRF_SECRET}"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "path",
    ["/accounts/login/", "/accounts/logout/", "/admin/login/", "/portal/", "/api/v1/memories"],
)
def test_a_made_up_rfc2231_charset_in_a_form_parts_header_leaves_nothing_behind(path):
    """Stop 64's review of the API's charsets: the portal's forms. A multipart body's part
    headers were read with ``parse_header_parameters`` as Django parsed ``request.POST`` (the
    CSRF check reads it, before the login view): the same lookup of a made-up name, for an
    anonymous caller with a cookie of its own making, several names a request. Nothing here
    takes a multipart body, so a multipart POST is refused before it is parsed."""
    made_up = [f"made-up-{uuid.uuid4().hex}" for _ in range(5)]
    boundary = "b0undary"
    parts = b"".join(
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"f{n}\"; x*={name}''%41"
        f"\r\n\r\nv\r\n".encode()
        for n, name in enumerate(made_up)
    )
    status, _, _ = call(
        path,
        content_type=f"multipart/form-data; boundary={boundary}",
        body=parts + f"--{boundary}--\r\n".encode(),
        headers=CSRF_COOKIE,
    )
    assert status == 415
    assert not _kept(made_up)


def test_a_multipart_form_is_refused_with_a_415_that_says_what_to_send():
    """No database: refused before the session, the CSRF check or the view reads anything."""
    content_type, body = _multipart({"username": "alice", "password": "pw"})
    status, headers, content = call(
        "/accounts/login/", content_type=content_type, body=body, headers=CSRF_COOKIE
    )
    assert status == 415
    assert headers["Content-Type"].startswith("text/html")
    assert b"application/x-www-form-urlencoded" in content


def test_a_multipart_body_is_the_apis_415_before_the_key_is_read():
    """The JSON parser's answer to a multipart body, given before the key is read (it was
    401 without one) and before Django could parse it."""
    content_type, body = _multipart({"subject": "u"})
    status, headers, content = call("/api/v1/memories", content_type=content_type, body=body)
    assert status == 415
    assert headers["Content-Type"] == "application/json"
    error = json.loads(content)["error"]
    assert error["code"] == "unsupported_media_type"
    assert error["message"] == (
        "The body must be JSON, sent with Content-Type: application/json (this one was "
        '"multipart/form-data").'
    )


@pytest.mark.django_db(transaction=True)  # the handler's own transaction (ATOMIC_REQUESTS)
def test_a_portal_login_posted_as_a_browser_posts_it_still_logs_in():
    """The portal's forms post application/x-www-form-urlencoded (no template asks for
    multipart): a login so posted, with its CSRF token, logs in. A GET that names the
    multipart type, which Django parses no body of, is not refused either."""
    from django.contrib.auth import get_user_model
    from django.utils.http import urlencode

    get_user_model().objects.create_user("alice", password="a-Long-pass-phrase-1")
    form = {"username": "alice", "password": "a-Long-pass-phrase-1"}
    status, headers, _ = call(
        "/accounts/login/",
        content_type="application/x-www-form-urlencoded",
        body=urlencode({**form, "csrfmiddlewaretoken": CSRF_SECRET}).encode(),
        headers=CSRF_COOKIE,
    )
    assert status == 302
    assert headers["Location"] == "/portal/"
    status, _, _ = call(
        "/accounts/login/",
        method="GET",
        content_type="multipart/form-data; boundary=b0undary",
        body=b"",
    )
    assert status == 200


def test_nothing_the_server_serves_takes_a_multipart_body():
    """Why a multipart POST may be refused outright: no form of the portal's or the admin's
    is multipart (Django's admin asks for it only for a model with a file field), and the
    API parses JSON alone. A file upload would need this refusal (config/wsgi.py) lifted."""
    from pathlib import Path

    from django.apps import apps
    from django.conf import settings
    from django.db import models

    assert settings.REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] == ["api.parsers.SafeJSONParser"]
    file_fields = [
        f"{model.__name__}.{field.name}"
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if isinstance(field, models.FileField)
    ]
    assert file_fields == []
    root = Path(settings.BASE_DIR)  # the project's templates and its apps' (memory_core's)
    templates = [*root.glob("templates/**/*.html"), *root.glob("*/templates/**/*.html")]
    assert templates
    assert [str(path) for path in templates if "multipart" in path.read_text()] == []
