"""What gunicorn refuses before Django sees a request answers in the API's JSON error shape."""

import json
import socket

import pytest

from memory_core.benchmarks.load import start_gunicorn


@pytest.fixture(scope="module")
def server(tmp_path_factory, django_db_setup, django_db_blocker):
    from django.db import connection

    with django_db_blocker.unblock():
        database = connection.settings_dict["NAME"]
    mp = pytest.MonkeyPatch()
    mp.setenv("MEMLEDGER_WARM_UP", "false")  # no model: nothing here reaches a retrieval
    server = start_gunicorn(
        database=database,
        workers=1,
        threads=1,
        torch_threads=1,
        log_dir=tmp_path_factory.mktemp("gunicorn"),
    )
    mp.undo()
    yield server
    server.stop()


def exchange(port: int, request: bytes) -> tuple[int, dict, bytes]:
    """Send ``request`` as raw bytes; return the answer's status, headers and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(request)
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return int(status_line.split()[1]), headers, body


def request(target: str = "/api/v1/whoami", headers: str = "") -> bytes:
    return (
        f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n"
    ).encode("latin-1")


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (request("/api/v1/whoami?q=" + "a" * 5000), 414, "request_line_too_long"),
        (request(headers="".join(f"X-H{i}: v\r\n" for i in range(120))), 431, "headers_too_large"),
        (request(headers="X-Long: " + "v" * 9000 + "\r\n"), 431, "headers_too_large"),
        (request(headers="X-Nul: a\x00b\r\n"), 400, "malformed_request"),
        (b"GET /api/v1/whoami HTTP/1.1 nonsense\r\n\r\n", 400, "malformed_request"),
    ],
    ids=["long-request-line", "too-many-headers", "long-header", "nul-in-header", "bad-line"],
)
def test_gunicorns_own_refusals_are_the_apis_json_errors(server, raw, status, code):
    answer_status, headers, body = exchange(server.port, raw)
    assert answer_status == status, body
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(body)
    error = json.loads(body)["error"]
    assert error["code"] == code
    assert error["message"].endswith(".")


def test_what_gunicorn_lets_through_is_answered_by_django(server):
    status, headers, body = exchange(server.port, request())
    assert status == 401  # no API key: the API's own error, from Django
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body)["error"]["code"] == "not_authenticated"
