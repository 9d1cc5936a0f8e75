"""Stop 67's review of the multipart refusal (``config.wsgi.MemledgerWSGIRequest.multipart_form``,
``api.middleware.UnreadableContentTypeMiddleware``): every spelling of the media type Django
parses as a multipart form is refused, and no other method's body reaches Django's form
parser. The tests beside, ``test_wsgi.py``, hold the refusal itself."""

import uuid

import pytest

from tests.config.test_wsgi import CSRF_COOKIE, _kept, call

PATHS = ["/accounts/login/", "/admin/login/", "/portal/", "/api/v1/memories"]


def _parts_naming(made_up: list[str], boundary: str = "b0undary") -> bytes:
    """A multipart body each of whose parts names a made-up charset (RFC 2231 ``filename*``)."""
    parts = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="f{n}"; '
        f"filename*={name}''x.txt\r\n\r\nv\r\n".encode()
        for n, name in enumerate(made_up)
    )
    return parts + f"--{boundary}--\r\n".encode()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("method", "content_type"),
    [
        ("POST", "Multipart/Form-Data; boundary=b0undary"),
        ("POST", 'MULTIPART/FORM-DATA;boundary="b0undary"'),
        ("POST", "  multipart/form-data; boundary=b0undary"),
        ("POST", "multipart/form-data\t ;\tboundary=b0undary"),
        ("POST", "multipart/form-data; boundary=b0undary; charset=utf-8"),
        ("post", "multipart/form-data; boundary=b0undary"),  # Django upper-cases the method
    ],
)
def test_every_spelling_django_parses_as_a_multipart_form_is_refused(path, method, content_type):
    """Django lower-cases and trims the media type it compares (``parse_header_parameters``),
    and the flag reads the very value it compares: each spelling is a 415 before any part's
    header is read (no database: refused before the session or the view)."""
    made_up = [f"made-up-{uuid.uuid4().hex}" for _ in range(3)]
    status, _, _ = call(
        path,
        method=method,
        content_type=content_type,
        body=_parts_naming(made_up),
        headers=CSRF_COOKIE,
    )
    assert status == 415
    assert not _kept(made_up)


@pytest.mark.django_db(transaction=True)  # the handler's own transaction (ATOMIC_REQUESTS)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_another_methods_multipart_body_reaches_no_form_parser(path, method):
    """Only a POST's body is a form to Django (``HttpRequest._load_post_and_files``), and the
    API's one parser reads JSON (DRF's ``request.data`` of a PUT or a PATCH): another
    method's multipart body is not refused by the flag, and no part of it is read."""
    made_up = [f"made-up-{uuid.uuid4().hex}" for _ in range(3)]
    status, _, _ = call(
        path,
        method=method,
        content_type="multipart/form-data; boundary=b0undary",
        body=_parts_naming(made_up),
        headers=CSRF_COOKIE,
    )
    assert status in (401, 403, 405)
    assert not _kept(made_up)
