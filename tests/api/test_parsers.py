"""The JSON parser: however deep a body nests, the answer is a 4xx, never a 500."""

import encodings
import json
import time

import pytest

from api.parsers import MAX_DEPTH, is_readable_charset, json_depth_exceeds
from memory_core.admission.candidate import HARD_MAX_VALUE_DEPTH
from memory_core.models import Memory
from tests.config.test_wsgi import call
from tests.factories import write_body

pytestmark = pytest.mark.django_db


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def single(depth: int) -> str:
    return json.dumps(write_body(value="__V__")).replace('"__V__"', nested(depth))


def batch(depth: int) -> str:
    return json.dumps({"items": ["__I__"]}).replace('"__I__"', single(depth))


def post(client, url: str, raw: str):
    return client.generic("POST", url, raw, content_type="application/json")


def test_bodies_about_900_levels_deep_are_400_on_single_and_batch_writes(api_client):
    # ~900 levels parsed, then DRF's JSONField re-encoded the value with a deeper stack:
    # RecursionError, a 500 (single writes at 902-903 levels, batches at 896-900 here).
    api_client.raise_request_exception = False
    answers = {}
    for depth in range(880, 921):
        for url, raw in (
            ("/api/v1/memories", single(depth)),
            ("/api/v1/memories/batch", batch(depth)),
        ):
            response = post(api_client, url, raw)
            answers[(url, depth)] = (response.status_code, response.json()["error"]["code"])
    assert set(answers.values()) == {(400, "malformed_json")}, answers
    assert not Memory.objects.exists()


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200, 5_000, 100_000])
def test_a_body_deeper_than_the_limit_is_malformed_json_on_every_endpoint(api_client, depth):
    raw = nested(depth)
    for url in ("/api/v1/memories", "/api/v1/retrieve", "/api/v1/deletions"):
        response = post(api_client, url, raw)
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "malformed_json"
    body = {"query": "x", "context": {"user_id": "u"}, "extra": json.loads(nested(MAX_DEPTH))}
    response = api_client.post("/api/v1/retrieve", body, format="json")
    assert response.json()["error"]["code"] == "malformed_json"


def test_the_limit_leaves_a_value_its_own_depth_rule(api_client):
    accepted = post(api_client, "/api/v1/memories", single(HARD_MAX_VALUE_DEPTH))
    assert accepted.status_code == 201, accepted.json()
    for depth in (HARD_MAX_VALUE_DEPTH + 1, MAX_DEPTH - 1):  # still the field error
        response = post(api_client, "/api/v1/memories", single(depth))
        assert response.status_code == 400
        assert response.json()["error"]["details"]["value"][0]["code"] == "too_deep"
    in_batch = post(api_client, "/api/v1/memories/batch", batch(HARD_MAX_VALUE_DEPTH))
    assert in_batch.status_code == 200, in_batch.json()
    assert in_batch.json()["results"][0]["decision"] == "accepted"


def test_an_empty_container_is_a_level_too(api_client):
    """17 nested empty lists are 17 levels, as 17 lists around a number are."""
    for depth, status in ((HARD_MAX_VALUE_DEPTH, 201), (HARD_MAX_VALUE_DEPTH + 1, 400)):
        empty = "[" * depth + "]" * depth
        raw = json.dumps(write_body(value="__V__")).replace('"__V__"', empty)
        response = post(api_client, "/api/v1/memories", raw)
        assert response.status_code == status, response.json()
    assert response.json()["error"]["details"]["value"][0]["code"] == "too_deep"


def test_depth_is_measured_without_recursion():
    assert not json_depth_exceeds(1, 0) and not json_depth_exceeds("s", 0)
    assert not json_depth_exceeds([], 1) and json_depth_exceeds([], 0)
    assert not json_depth_exceeds({"a": [1, {"b": 2}]}, 3)
    assert json_depth_exceeds({"a": [1, {"b": {}}]}, 3)
    deep = []
    for _ in range(200_000):  # far past the recursion limit
        deep = [deep]
    assert json_depth_exceeds(deep, MAX_DEPTH)
    assert not json_depth_exceeds(deep, 200_001)


@pytest.mark.parametrize(
    "url", ["/api/v1/memories", "/api/v1/memories/batch", "/api/v1/retrieve", "/api/v1/deletions"]
)
def test_a_key_holding_a_lone_surrogate_is_malformed_json_not_a_500(api_client, url):
    """An unknown key is named in the field errors, and a lone surrogate cannot be encoded in
    the answer: the renderer raised UnicodeEncodeError (a 500). Nested keys too (a value's)."""
    for raw in (
        json.dumps(write_body())[:-1] + ', "\\ud800x": 1}',
        json.dumps(write_body(value={"k": 1})).replace('"k"', '"\\udfff"'),
    ):
        if url.endswith("batch"):
            raw = '{"items": [' + raw + "]}"
        before = Memory.objects.count()
        response = post(api_client, url, raw)
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert error["code"] == "malformed_json" and "lone surrogate" in error["message"]
        # Shown as the client wrote it, "\ud800x": repr() doubled the escape's backslash.
        assert "'\\ud800x'" in error["message"] or "'\\udfff'" in error["message"]
        assert Memory.objects.count() == before


def test_a_body_starting_with_a_utf8_byte_order_mark_is_read(api_client):
    """RFC 8259 lets a parser ignore a BOM (some editors and shells write one): it was a 400
    whose message advised Python's codec, "decode using utf-8-sig"."""
    raw = "\ufeff" + json.dumps(write_body())
    response = api_client.generic(
        "POST", "/api/v1/memories", raw.encode("utf-8"), content_type="application/json"
    )
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (json.dumps(write_body())[:-1] + ', "subject": "user-2"}', "subject"),
        (json.dumps(write_body(source="__S__")).replace(
            '"__S__"',
            '{"type": "user_input", "type": "admin", "conversation_id": "c", "message_id": "m"}',
        ), "type"),
        (json.dumps(write_body(value="__V__")).replace('"__V__"', '{"a": 1, "a": 2}'), "a"),
        ('{"\\ud800": 1, "\\ud800": 2}', "\\ud800"),
    ],
)  # fmt: skip
def test_a_key_named_twice_in_one_object_is_malformed_json_naming_it(api_client, raw, key):
    """``{"subject": "a", "subject": "b"}`` has no one meaning: Python's json kept the last
    (the write was stored for user-2, a source's ``type`` read as admin), where a proxy or a
    log reading the first saw another request."""
    for url in ("/api/v1/memories", "/api/v1/memories/batch"):
        body = raw if url.endswith("memories") else '{"items": [' + raw + "]}"
        response = post(api_client, url, body)
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert error["code"] == "malformed_json"
        assert f"the key '{key}' appears twice in one object" in error["message"], error
    assert not Memory.objects.exists()


def test_the_same_key_in_two_objects_is_no_duplicate(api_client):
    body = write_body(value={"a": {"k": 1}, "b": {"k": 2}})
    response = post(api_client, "/api/v1/memories", json.dumps(body))
    assert response.status_code == 201, response.content
    duplicated = post(api_client, "/api/v1/retrieve", '{"query": "x", "query": "y"}')
    assert duplicated.status_code == 400
    assert duplicated.json()["error"]["code"] == "malformed_json"


@pytest.mark.parametrize("charset", ["bogus", "bz2_codec", "base64", "rot13", ""])
@pytest.mark.parametrize("url", ["/api/v1/memories", "/api/v1/retrieve", "/api/v1/deletions"])
def test_a_charset_that_names_no_text_encoding_is_415_naming_it(api_client, charset, url):
    """Django drops a charset it cannot look up, and the body was read as UTF-8 as if none
    were named (the write stored, 201); a codec that is no text encoding was DRF's 400
    malformed_json about a body nobody had read."""
    response = api_client.generic(
        "POST",
        url,
        json.dumps(write_body()).encode(),
        content_type=f"application/json; charset={charset}",
    )
    assert response.status_code == 415, response.content
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type"
    assert f'the charset "{charset}"' in error["message"] and "UTF-8" in error["message"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize("charset", ["utf-8", "UTF8", "latin-1", "utf-16", "UTF-32BE"])
def test_a_charset_that_names_a_text_encoding_is_read_with_it(api_client, charset):
    raw = json.dumps(write_body(content="User prefers café answers."), ensure_ascii=False)
    response = api_client.generic(
        "POST",
        "/api/v1/memories",
        raw.encode(charset),
        content_type=f"application/json; charset={charset}",
    )
    assert response.status_code == 201, response.content
    assert response.json()["memory"]["content"] == "User prefers café answers."


QUADRATIC_BODY_BYTES = 400_000  # well inside MEMLEDGER_MAX_BODY_BYTES (1 MiB)


@pytest.mark.parametrize("charset, prefix", [("punycode", b""), ("idna", b"xn--")])
def test_a_body_in_a_quadratic_charset_is_refused_in_time(api_client, charset, prefix):
    """Stop 64's audit of the API: the parser read a body in any charset Python can encode
    text with, ``punycode`` and ``idna`` too, whose decoders insert each character into the
    string built so far: quadratic in the body. 600 KB of punycode kept a worker 35 s, 400 KB
    of IDNA 15 s, past gunicorn's 30 s timeout, and any agent key could send them. A charset
    other than UTF-8, UTF-16, UTF-32, Latin-1 or ASCII is the 415 now, before the body is
    read."""
    body = prefix + b"a" * (QUADRATIC_BODY_BYTES // 2) + b"-" + b"z9" * (QUADRATIC_BODY_BYTES // 4)
    started = time.monotonic()
    response = api_client.generic(
        "POST", "/api/v1/memories", body, content_type=f"application/json; charset={charset}"
    )
    seconds = time.monotonic() - started
    assert response.status_code == 415, response.content[:300]
    assert f'the charset "{charset}"' in response.json()["error"]["message"]
    assert seconds < 3, f"charset={charset}: {len(body):,} bytes took {seconds:.1f} s to refuse"
    assert not Memory.objects.exists()


@pytest.mark.parametrize("content_type", ["*/*", "application/*", "*/json"])
def test_a_body_labelled_with_a_wildcard_media_type_is_415(api_client, content_type):
    """Stop 59's audit of bad input found a body sent with ``Content-Type: */*`` or
    ``application/*`` read as JSON and stored (DRF's parser selection lets a wildcard in the
    request's type match ``application/json``). A media range names no type: it should be
    415 ``unsupported_media_type``, naming the type sent, and nothing stored."""
    response = api_client.generic(
        "POST", "/api/v1/memories", json.dumps(write_body()), content_type=content_type
    )
    assert response.status_code == 415, response.content
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type"
    assert f'(this one was "{content_type}")' in error["message"]
    assert not Memory.objects.exists()


@pytest.mark.django_db(transaction=True)  # the login page's GET reads the session
@pytest.mark.parametrize("charset", ["u\u00e9tf-8", "ut\u00e9f-8", "la\u00e0tin-1"])
def test_a_readable_charset_with_a_letter_outside_ascii_is_not_looked_up_by_its_raw_name(charset):
    """Stop 64's review of the API's charsets: ``charset_name`` mirrors
    ``encodings.normalize_encoding``, which drops a letter outside ASCII (``u\u00e9tf-8`` is
    ``utf_8``: readable), while ``codecs.lookup`` normalizes it as a separator (``u_tf_8``):
    Django looked the raw name up, failed, and the codec search kept ``u_tf_8`` for good (and
    the body was read as UTF-8 whatever the charset said). Such a charset is not readable now:
    refused, as a made-up one is, before Django looks it up."""
    assert not is_readable_charset(charset)
    c_name = encodings.normalize_encoding(
        "".join(c if c.isascii() else "-" for c in charset.lower())
    )
    status, _, _ = call(
        "/accounts/login/", method="GET", content_type=f"text/plain; charset={charset}"
    )
    assert status == 400
    assert c_name not in encodings._cache, f"{charset!r} left {c_name!r} in the codec cache"
