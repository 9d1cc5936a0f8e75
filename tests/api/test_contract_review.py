"""What a demanding client sends, answered as docs/api.md says (an API contract review)."""

import uuid

import pytest
from rest_framework.test import APIClient

from memory_core.models import Memory, Status
from tests.factories import write_body

pytestmark = pytest.mark.django_db

MEMORIES = "/api/v1/memories"


def field_codes(response) -> dict:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and error["message"]
    return {name: [entry["code"] for entry in found] for name, found in error["details"].items()}


# --- Ids are trimmed by every endpoint, the write included ---------------------------------


def test_a_write_stores_its_ids_as_checked_so_other_endpoints_find_them(api_client):
    # DRF checks ids trimmed and every other endpoint trims them; the write stored them as
    # sent, so " user-9 " was a subject nothing could name, and deleting " user-9 "'s key
    # " k " deleted user-9's memory on "k" while the written one stayed active.
    older = api_client.post(
        MEMORIES, write_body(subject="user-9", memory_key="k", task_id="t"), format="json"
    )
    assert older.status_code == 201, older.json()
    padded = write_body(
        subject=" user-9 ",
        memory_key=" k ",
        task_id=" t ",
        session_id=" s ",
        content="User prefers long answers.",
    )
    response = api_client.post(MEMORIES, padded, format="json")
    assert response.status_code == 201, response.json()
    memory = response.json()["memory"]
    assert (memory["subject"], memory["memory_key"], memory["task_id"], memory["session_id"]) == (
        "user-9",
        "k",
        "t",
        "s",
    )
    assert memory["version"] == 2 and memory["supersedes"] == older.json()["memory"]["id"]

    listed = api_client.get(MEMORIES, {"subject": " user-9 ", "key": " k ", "status": "active"})
    assert [row["id"] for row in listed.json()["results"]] == [memory["id"]]
    deletion = api_client.post(
        "/api/v1/deletions", {"subject": " user-9 ", "memory_key": " k "}, format="json"
    )
    assert deletion.status_code == 202, deletion.json()
    assert set(Memory.objects.values_list("status", flat=True)) == {Status.DELETED}


def test_a_batch_stores_its_items_ids_as_checked(api_client):
    body = {"items": [write_body(subject=" user-9 ", memory_key="\tk\n")]}
    response = api_client.post(f"{MEMORIES}/batch", body, format="json")
    assert response.status_code == 200, response.json()
    memory = response.json()["results"][0]["memory"]
    assert (memory["subject"], memory["memory_key"]) == ("user-9", "k")


# --- Paging parameters mean what they were checked as ---------------------------------------


@pytest.fixture
def four_memories(api_client) -> list[str]:
    ids = []
    for index in range(4):
        body = write_body(memory_key=f"k{index}", content=f"User prefers option {index}.")
        response = api_client.post(MEMORIES, body, format="json")
        assert response.status_code == 201, response.json()
        ids.append(response.json()["memory"]["id"])
    return ids[::-1]  # newest first


@pytest.mark.parametrize("pagination", ["offset", "cursor"])
def test_a_limit_written_as_a_decimal_pages_by_its_integer(api_client, four_memories, pagination):
    # "2.0" passed the query's check (an integer) and the paginator's int() refused it:
    # 50 rows (here all four) instead of 2, and no next link.
    page = api_client.get(f"{MEMORIES}?limit=2.0&pagination={pagination}").json()
    assert [row["id"] for row in page["results"]] == four_memories[:2]
    assert page["next"]


def test_an_offset_written_as_a_decimal_pages_by_its_integer(api_client, four_memories):
    page = api_client.get(f"{MEMORIES}?limit=2&offset=2.0").json()
    assert [row["id"] for row in page["results"]] == four_memories[2:]
    assert page["previous"] and "offset" not in page["previous"]


def test_the_review_queue_reads_its_checked_limit_too(reviewer, api_client):
    for index in range(2):
        content = f"User is allergic to dust {index}."
        body = write_body(memory_key=f"health.{index}", content=content)
        assert api_client.post(MEMORIES, body, format="json").status_code == 202
    page = reviewer.get("/api/v1/review/items?limit=1.0").json()
    assert page["count"] == 2 and len(page["results"]) == 1


# --- A path under the reviewer API that names no endpoint ----------------------------------


@pytest.mark.parametrize(
    "path", ["/api/v1/review/items/not-a-uuid", "/api/v1/review/nothing", "/api/v1/review/"]
)
def test_a_reviewer_api_path_without_endpoint_is_404_to_a_reviewer_never_401(
    reviewer, api_client, path
):
    # The catch-all asked every caller for an API key: a logged-in reviewer got 401
    # not_authenticated, which the reviewer API never answers (docs/api.md).
    answer = reviewer.get(path)
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "not_found")
    for client in (APIClient(), api_client):
        answer = client.get(path)
        assert (answer.status_code, answer.json()["error"]["code"]) == (403, "forbidden")
        assert "WWW-Authenticate" not in answer


def test_an_api_path_without_endpoint_still_needs_an_api_key(api_client):
    assert APIClient().get("/api/v1/nothing").status_code == 401
    assert api_client.get("/api/v1/nothing").json()["error"]["code"] == "not_found"


# --- A UUID is a string ---------------------------------------------------------------------


@pytest.mark.parametrize("memory_id", [5, True, 0, 1.5, ["x"]])
def test_a_deletion_of_a_memory_id_that_is_not_a_string_is_invalid(api_client, memory_id):
    # DRF's UUIDField read 5 as 00000000-0000-0000-0000-000000000005: a 404 for an id the
    # client never sent, instead of a 400 naming the field.
    response = api_client.post("/api/v1/deletions", {"memory_id": memory_id}, format="json")
    assert field_codes(response) == {"memory_id": ["invalid"]}


def test_a_usage_report_of_memory_ids_that_are_not_strings_is_invalid(api_client):
    trace = api_client.post(
        "/api/v1/retrieve", {"query": "answers", "context": {"user_id": "user-1"}}, format="json"
    ).json()["trace_id"]
    url = f"/api/v1/traces/{trace}/usage"
    response = api_client.post(url, {"kind": "answer", "memory_ids": [5]}, format="json")
    assert field_codes(response) == {"memory_ids.0": ["invalid"]}
    fine = api_client.post(url, {"kind": "answer", "memory_ids": []}, format="json")
    assert fine.status_code == 200, fine.json()


def test_a_memory_id_in_any_uuid_spelling_is_still_read(api_client):
    missing = uuid.uuid4()
    for spelling in (str(missing), missing.hex, str(missing).upper(), f"urn:uuid:{missing}"):
        response = api_client.post("/api/v1/deletions", {"memory_id": spelling}, format="json")
        assert response.status_code == 404, (spelling, response.json())


# --- A query parameter is given once --------------------------------------------------------


@pytest.mark.parametrize(
    "query, repeated",
    [
        ("subject=user-1&subject=user-2", ["subject"]),
        ("limit=500&limit=5", ["limit"]),
        ("type=episode&type=incident&status=active&status=active", ["status", "type"]),
    ],
)
def test_a_list_parameter_given_twice_is_refused_not_read_as_its_last(api_client, query, repeated):
    # The last value won: the second subject's rows only, and a limit past the maximum
    # passed because a valid one followed it.
    codes = field_codes(api_client.get(f"{MEMORIES}?{query}"))
    assert codes == {name: ["repeated"] for name in repeated}


def test_a_review_queue_parameter_given_twice_is_refused(reviewer):
    response = reviewer.get("/api/v1/review/items?state=open&state=approved")
    assert field_codes(response) == {"state": ["repeated"]}


def test_a_repeated_parameter_is_named_with_the_other_mistakes(api_client):
    """It was checked first and answered alone, hiding every other mistake of the query
    string (docs/api.md: "one answer names every mistake it can find"): stop 50's audit."""
    codes = field_codes(api_client.get(f"{MEMORIES}?subject=a&subject=b&limit=abc&bogus=1"))
    assert codes == {"subject": ["repeated"], "limit": ["invalid"], "bogus": ["unknown_field"]}


def test_a_parameter_an_endpoint_does_not_take_is_unknown_however_often_given(api_client):
    """``GET /api/v1/deletions`` takes none: ``limit`` twice was told to be given once."""
    codes = field_codes(api_client.get("/api/v1/deletions?limit=5&limit=6"))
    assert codes == {"limit": ["unknown_field"]}


def test_unknown_parameters_given_twice_are_named_at_most_fifty_times(api_client):
    """200 unknown names, each twice, were 200 ``repeated`` entries: the bound on unknown
    names (50, then one ``too_many_errors``) did not apply."""
    query = "&".join(f"p{i}=1&p{i}=2" for i in range(200))
    response = api_client.get(f"{MEMORIES}?{query}")
    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert len([name for name in details if name != "non_field_errors"]) == 50
    assert [entry["code"] for entry in details["non_field_errors"]] == ["too_many_errors"]


@pytest.mark.parametrize("path", [MEMORIES, "/api/v1/whoami", "/api/v1/review/items"])
def test_a_query_string_of_too_many_parameters_is_the_json_400(api_client, reviewer, path):
    # Django refuses more than DATA_UPLOAD_MAX_NUMBER_FIELDS (1,000) as the query string is
    # first read; the answer was Django's HTML "Bad Request" page. 1,001 "a=" fit in
    # gunicorn's 4,094-byte request line. The reviewer API reads it once a reviewer is
    # logged in (an agent's key is its 403 first).
    client = reviewer if "/review/" in path else api_client
    response = client.get(f"{path}?" + "&".join(["a="] * 1001))
    assert response["Content-Type"] == "application/json"
    assert field_codes(response) == {"non_field_errors": ["too_many_parameters"]}


def test_a_host_the_server_does_not_answer_for_is_the_json_400_under_the_api(client):
    # Django refuses a Host outside DJANGO_ALLOWED_HOSTS before any view: its HTML "Bad
    # Request" page answered the API too. The portal keeps Django's page.
    api = client.get("/api/v1/whoami", HTTP_HOST="evil.example")
    assert api.status_code == 400
    assert api["Content-Type"] == "application/json"
    error = api.json()["error"]
    assert error["code"] == "bad_request" and "Host header" in error["message"]
    portal = client.get("/portal/", HTTP_HOST="evil.example")
    assert portal.status_code == 400
    assert not portal["Content-Type"].startswith("application/json")


def test_with_debug_on_a_bad_host_under_the_api_is_still_the_json_400(client, settings):
    """Under ``make run`` (DEBUG on) Django answered it with its HTML debug page, settings
    and paths included, not the documented JSON."""
    settings.DEBUG = True
    api = client.get("/api/v1/whoami", HTTP_HOST="evil.example")
    assert api.status_code == 400 and api["Content-Type"] == "application/json"
    assert api.json()["error"]["code"] == "bad_request"
