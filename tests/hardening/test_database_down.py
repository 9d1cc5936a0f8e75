"""Database down: the API answers 503 ``memory_unavailable`` quickly, and writes nothing.

A separate process whose DATABASE_URL points at a closed port is a database that is down
(nothing listens, so the connection is refused at once).
"""

import json
import time

from tests.processes import shell_without_database

PROBE = r"""
import json, time
from django.test import Client
from django.urls import Resolver404, resolve
client = Client(HTTP_AUTHORIZATION="Bearer mlk_abcdefabcdef_" + "x" * 43)
results = []
for method, path, body in [
    ("get", "/api/v1/whoami", None),
    ("post", "/api/v1/memories", {"content": "x", "memory_type": "user_preference"}),
    ("post", "/api/v1/retrieve", {"query": "anything"}),
]:
    try:
        resolve(path)
    except Resolver404:  # an endpoint that does not exist in this checkout
        continue
    started = time.monotonic()
    if body is None:
        response = getattr(client, method)(path)
    else:
        response = getattr(client, method)(path, data=body, content_type="application/json")
    results.append({
        "path": path,
        "status": response.status_code,
        "seconds": time.monotonic() - started,
        "body": response.content.decode()[:500],
        "retry_after": response.get("Retry-After"),
    })
print("RESULTS" + json.dumps(results))
"""


def test_database_down_is_a_fast_503_memory_unavailable():
    started = time.monotonic()
    result = shell_without_database(PROBE, DJANGO_ALLOWED_HOSTS="testserver")
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULTS"))
    results = json.loads(line[len("RESULTS") :])
    assert "/api/v1/whoami" in {item["path"] for item in results}
    for item in results:
        assert item["status"] == 503, item
        assert json.loads(item["body"])["error"]["code"] == "memory_unavailable", item
        assert item["retry_after"] == "5"
        # Quickly: a refused connection, not a hang until some proxy gives up.
        assert item["seconds"] < 2.5, item
    assert time.monotonic() - started < 90
