"""Every answer carries a request id, and so does every log line written while it runs."""

import logging
import re

import pytest

from api import views
from config.request_id import RequestIdLogFilter, current_request_id

pytestmark = pytest.mark.django_db

NEW_ID = re.compile(r"[0-9a-f]{32}")


def test_each_answer_gets_a_new_id(client):
    first, second = client.get("/healthz"), client.get("/api/v1/whoami")
    assert NEW_ID.fullmatch(first["X-Request-ID"])
    assert NEW_ID.fullmatch(second["X-Request-ID"])
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_a_proxys_id_is_kept_when_it_is_safe_to_log(client):
    response = client.get("/api/v1/whoami", HTTP_X_REQUEST_ID="lb-7f3a:0001.2")
    assert response["X-Request-ID"] == "lb-7f3a:0001.2"


@pytest.mark.parametrize("sent", ["", "two words", "line\nbreak", "x" * 129, 'quote"d', "ünicode"])
def test_an_id_that_could_forge_a_log_line_is_replaced(client, sent):
    response = client.get("/api/v1/whoami", HTTP_X_REQUEST_ID=sent)
    assert NEW_ID.fullmatch(response["X-Request-ID"])


def test_log_lines_of_the_request_carry_its_id(client, caplog):
    caplog.handler.addFilter(RequestIdLogFilter())
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/api/v1/whoami")  # no key: 401, logged by django.request
    assert response.status_code == 401
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records, "django.request logged nothing"
    assert {r.request_id for r in records} == {response["X-Request-ID"]}
    assert current_request_id() == "-"  # and the id does not outlive its request


def test_a_500_names_its_request_id(api_client, monkeypatch, settings):
    settings.DEBUG = False
    monkeypatch.setattr(views.WhoAmIView, "get", lambda self, request: 1 / 0)
    api_client.raise_request_exception = False
    response = api_client.get("/api/v1/whoami", HTTP_X_REQUEST_ID="support-case-42")
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["details"] == {"request_id": "support-case-42"}
    assert "support-case-42" in error["message"]
    assert response["X-Request-ID"] == "support-case-42"
