"""What gunicorn refuses before Django sees a request answers in the API's JSON error shape;
what its access log keeps of a request."""

import json
import logging
import re
import shlex
import socket
import threading
import urllib.parse
from pathlib import Path

import pytest
from django.conf import settings
from django.core.servers.basehttp import WSGIRequestHandler, WSGIServer
from django.core.wsgi import get_wsgi_application

from memory_core.benchmarks.load import start_gunicorn
from memory_core.services.api_keys import api_key_create
from tests.factories import AgentFactory, write_body


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


EXTERNAL_ID = "jane.doe@example.com"
KEY = "health.diagnosis"


def documented_access_log_flags() -> tuple[str, ...]:
    """The access log's flags of the deployment command in docs/operations.md."""
    text = (Path(settings.BASE_DIR) / "docs" / "operations.md").read_text()
    line = next(line for line in text.splitlines() if "--access-logfile" in line)
    flags = shlex.split(line.strip())
    return tuple(flags[flags.index("--access-logfile") :])


@pytest.mark.django_db(transaction=True)
def test_the_documented_access_log_leaves_out_the_query_string(tenant, tmp_path):
    """A memory list by subject and key (``GET /api/v1/memories?subject=&key=``) through the
    web process as docs/operations.md deploys it: the access log named the person's external
    id (an e-mail address) and the memory's key (a health fact's), where no deletion reaches
    (stop 51's audit of logs). It keeps the method, the path and the request id."""
    from django.db import connection

    _, api_key = api_key_create(agent=AgentFactory(tenant=tenant))
    auth = f"Authorization: Bearer {api_key}\r\n"
    server = start_gunicorn(
        database=connection.settings_dict["NAME"],
        workers=1,
        threads=1,
        torch_threads=1,
        log_dir=tmp_path,
        extra_args=documented_access_log_flags(),
    )
    try:
        body = json.dumps(
            write_body(subject=EXTERNAL_ID, memory_key=KEY, content="User prefers short answers.")
        )
        written, _, _ = exchange(
            server.port,
            (
                f"POST /api/v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                f"Connection: close\r\n\r\n{body}"
            ).encode(),
        )
        query = urllib.parse.urlencode({"subject": EXTERNAL_ID, "key": KEY})
        listed, headers, _ = exchange(server.port, request(f"/api/v1/memories?{query}", auth))
    finally:
        server.stop()
    log = server.log_path.read_text()
    assert (written, listed) == (202, 200), log[-2000:]  # a health key waits for a reviewer
    lines = [line for line in log.splitlines() if "/api/v1/memories" in line]
    assert len(lines) == 2, log[-2000:]
    assert not [line for line in lines if re.search(r"jane|example|health|diagnosis", line)]
    assert '"GET /api/v1/memories HTTP/1.1" 200' in lines[1]
    assert lines[1].endswith(headers["X-Request-ID"])


def test_the_development_servers_request_lines_leave_out_the_query_string():
    """``make run``'s runserver logs each request through ``django.server``, whose records the
    settings' filter rewrites (config/log_filters.py)."""
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    logger = logging.getLogger("django.server")
    handler = Keep()
    logger.addHandler(handler)
    try:
        logger.info(
            '"%s" %s %s', f"GET /api/v1/memories?subject={EXTERNAL_ID} HTTP/1.1", "200", "886"
        )
        logger.warning('"%s" %s %s', "GET /portal/?q=diabetes", "404", "10")
    finally:
        logger.removeHandler(handler)
    assert seen == ['"GET /api/v1/memories HTTP/1.1" 200 886', '"GET /portal/" 404 10']


class _Kept(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _served(raw: bytes) -> list[str]:
    """The development server's (``make run``: runserver) log lines for one raw request."""
    server = WSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    server.set_app(get_wsgi_application())
    kept = _Kept()
    logger = logging.getLogger("django.server")
    logger.addHandler(kept)
    thread = threading.Thread(target=server.handle_request)
    thread.start()
    try:
        with socket.create_connection(server.server_address, timeout=5) as client:
            client.sendall(raw)
            while client.recv(4096):
                pass
        thread.join(5)
    finally:
        logger.removeHandler(kept)
        server.server_close()
    return kept.lines


def test_the_development_servers_error_lines_leave_out_the_query_string_too():
    """A client that does not encode the space in a name ("?subject=alice@example.com Smith")
    sends a request line of four words: runserver's "Bad request syntax" line quoted it whole,
    query and all (stop 51's review)."""
    lines = _served(b"GET /api/v1/memories?subject=alice@example.com Smith HTTP/1.1\r\n\r\n")
    assert any("Bad request syntax" in line for line in lines), lines
    assert not [line for line in lines if "alice" in line or "Smith" in line], lines
