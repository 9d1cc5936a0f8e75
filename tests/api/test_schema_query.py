"""Bad input to the public OpenAPI endpoint's query string (``/api/schema/``).

Stop 63's audit of the API found ``version``, drf-spectacular's, written as sent into the
answer's ``Content-Disposition`` (``inline; filename="memledger API (<version>).yaml"``,
``SpectacularAPIView._get_filename``) with nothing in ``api.views.SchemaView`` checking it: a
line break was Django's 500, a control character gunicorn's 500, a quote added parameters of
the caller's to the header. A version is now a short token, anything else ``400
invalid_input``. And ``POST /api/schema/?x=1`` was ``400 unknown_field`` where every other
endpoint answers the method's 405 before its query string: it is the 405 now.
"""

import uuid
from urllib.parse import quote

import pytest
from django.utils.http import parse_header_parameters
from django.utils.translation import trans_real
from rest_framework.test import APIClient

from tests.config.test_gunicorn import exchange, request, server  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def anonymous():
    """The schema is public: no key. Answer a view's exception as the server would (500)."""
    client = APIClient()
    client.raise_request_exception = False
    return client


@pytest.mark.parametrize("version", ["%0A", "1%0D%0AX-Injected:%201"])
def test_a_schema_version_holding_a_line_break_is_not_a_500(anonymous, version):
    """Django refuses a header value holding a line break (BadHeaderError) while the view
    builds its Response: the public schema answers 500 ``internal_error``."""
    answer = anonymous.get(f"/api/schema/?version={version}")
    assert answer.status_code == 400, answer.content[:300]
    assert answer.json()["error"]["details"]["version"][0]["code"] == "invalid"


@pytest.mark.parametrize("version", ["%00", "%01", "%1B", "%7F"])
def test_a_schema_version_holding_a_control_character_is_not_a_500_under_gunicorn(
    server,  # noqa: F811
    version,
):
    """Under gunicorn (production), a control character Django lets into the header value is
    refused by gunicorn as it sends the answer (InvalidResponseHeader): a 500."""
    status, _, body = exchange(server.port, request(f"/api/schema/?version={version}"))
    assert status < 500, body[:300]


def test_a_schema_version_cannot_add_parameters_to_the_content_disposition(anonymous):
    """A quote in ``version`` closes the filename's quoted string, and whatever follows is
    parameters of the header: here a ``filename*`` that clients prefer to ``filename``, so the
    document is saved as ``evil.html``."""
    version = "x\"; filename*=UTF-8''evil.html; a=\""
    answer = anonymous.get(f"/api/schema/?version={quote(version)}")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_input"
    assert "letters, digits" in answer.json()["error"]["details"]["version"][0]["message"]


def test_a_version_token_still_names_the_documents_file(anonymous):
    """The refusal is of what no version is: ``1.0-beta_2`` is written into the file name."""
    answer = anonymous.get("/api/schema/?version=1.0-beta_2")
    assert answer.status_code == 200
    disposition, params = parse_header_parameters(answer["Content-Disposition"])
    assert (disposition, set(params)) == ("inline", {"filename"})
    assert params["filename"] == "memledger API (1.0-beta_2).yaml"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_a_method_the_schema_lacks_is_its_405_whatever_the_query_string(anonymous, method):
    """``SchemaView.initial`` reads the query string before DRF looks for the method's
    handler, so ``POST /api/schema/?x=1`` is ``400 unknown_field`` where ``POST /api/schema/``
    and ``POST /api/schema?x=1`` are ``405``: every other endpoint (``QueryStringChecked``)
    answers the 405 first."""
    answer = anonymous.generic(method, "/api/schema/?bogus=1")
    assert answer.status_code == 405, answer.json()
    assert answer.json()["error"]["code"] == "method_not_allowed"
    assert "GET" in answer["Allow"]


def test_an_unknown_parameter_and_a_bad_version_are_named_in_one_answer(anonymous):
    """Stop 63's review found ``SchemaView.initial`` raising the unknown parameters' 400 before
    it checked ``version``, so a query string with both mistakes was told of one, and the
    version's refusal was heard only on the next try, where docs/api.md says one answer
    names every mistake it can find. Both are named in one ``400 invalid_input`` now."""
    answer = anonymous.get("/api/schema/?bogus=1&version=%22x")
    assert answer.status_code == 400
    details = answer.json()["error"]["details"]
    assert set(details) == {"bogus", "version"}, details
    assert [e["code"] for e in details["version"]] == ["invalid"]


def test_a_made_up_schema_lang_leaves_nothing_behind_in_the_worker(anonymous):
    """Stop 64's audit of the API: ``lang`` went unchecked to drf-spectacular, which runs
    ``translation.override(lang)``; Django builds a translation for every new language string
    and keeps it in the process-wide ``trans_real._translations`` for the worker's life. So
    each anonymous request (no key, no rate limit) naming a new made-up language, up to the
    4094-byte request line, left ~9 KB in the worker for good. A lang of no setting is ``400
    invalid_input`` now, and nothing is kept."""
    before = len(trans_real._translations)
    for _ in range(10):
        lang = f"zz-{uuid.uuid4().hex}" + "q" * 2000
        answer = anonymous.get("/api/schema/", {"format": "json", "lang": lang})
        assert answer.status_code == 400, answer.content[:300]
        assert [e["code"] for e in answer.json()["error"]["details"]["lang"]] == ["invalid"]
    grown = len(trans_real._translations) - before
    assert grown <= 1, (
        f"{grown} translation objects kept for good by 10 anonymous schema requests "
        "naming made-up languages"
    )


def test_a_language_of_the_settings_is_still_honoured(anonymous):
    """Stop 64's audit of the API: the check of ``lang`` keeps a language of ``LANGUAGES``
    working."""
    answer = anonymous.get("/api/schema/", {"format": "json", "lang": "de"})
    assert answer.status_code == 200


def test_a_bad_lang_is_named_with_the_query_strings_other_mistakes(anonymous):
    """Stop 64's audit of the API: a lang of no setting is one more mistake of the query
    string, named in the one answer with an unknown parameter and a bad version."""
    answer = anonymous.get("/api/schema/?bogus=1&version=%22x&lang=xx-made-up")
    assert answer.status_code == 400
    assert set(answer.json()["error"]["details"]) == {"bogus", "lang", "version"}


@pytest.mark.parametrize("lang", ["pt-BR", "zh-Hans", "DE"])
def test_a_language_of_the_settings_in_bcp47_casing_is_still_honoured(anonymous, lang):
    """Stop 64's review of the API's charsets and schema lang: a language tag is
    case-insensitive (BCP 47; ``pt-BR`` and ``zh-Hans`` are its usual spellings, the ones a
    browser sends), and drf-spectacular translated the document for them before the check,
    which compared the string as sent with ``LANGUAGES``' lower-case codes: ``pt-BR`` was
    ``400 invalid_input``. The document is translated under the code as the settings spell it,
    so a casing is not one more translation kept."""
    answer = anonymous.get("/api/schema/", {"format": "json", "lang": lang})
    assert answer.status_code == 200, answer.content[:300]
    assert lang not in trans_real._translations
