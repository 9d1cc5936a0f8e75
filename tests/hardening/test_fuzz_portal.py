"""Generated portal requests (portal/fuzz.py), in-process, as an end user and a reviewer: a
bounded run. The full run is ``python manage.py fuzz_portal --requests 3000``."""

import pytest

from portal.fuzz import ROUTES, fuzz_run, plant

REQUESTS = 400


@pytest.mark.django_db
def test_generated_portal_requests_no_5xx_no_foreign_row_shown_or_changed():
    world = plant(prefix="pfuzz")
    report = fuzz_run(world=world, requests=REQUESTS)
    summary = report.as_dict()
    print("fuzz_portal:", {k: v for k, v in summary.items() if k != "examples"})
    assert report.requests == REQUESTS
    assert len(report.by_route) >= len(ROUTES) - 3  # nearly every page and form reached
    assert report.foreign_id_requests > 0
    assert report.server_errors == [], summary["examples"]
    assert report.foreign_shown == [], summary["examples"]
    assert report.foreign_changed == [], summary["examples"]
    assert report.forged_posts > 0
    assert report.forged_not_refused == [], summary["examples"]
    # Some requests did what they asked: the portal was not refusing everything (the posts
    # that were not forged passed the CSRF check).
    assert report.statuses[200] > REQUESTS / 4 and report.statuses[302] > 0


@pytest.mark.django_db
def test_the_checks_catch_a_page_that_shows_changes_or_breaks_what_it_should_not(monkeypatch):
    """Told that alice's own rows are bob's, the fuzzer must report them shown and changed;
    a page that raises must be reported as a 5xx."""
    from dataclasses import replace

    from memory_core.models import Subject
    from portal import views

    world = plant(prefix="pfuzz-check")
    alice = Subject.objects.get(tenant=world.tenant_a, external_id="alice")
    mixed_up = replace(world, bob=alice, canaries={**world.canaries, "sibling": "own words"})
    report = fuzz_run(world=mixed_up, requests=150)
    assert report.foreign_shown and report.foreign_changed

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(views.DeletionListView, "get_context_data", broken)
    report = fuzz_run(world=world, requests=150, rng_seed=3)
    assert report.by_route["GET portal:deletions"] > 0
    assert len(report.server_errors) == report.by_route["GET portal:deletions"]


@pytest.mark.django_db
def test_the_checks_catch_a_post_that_is_not_checked_for_its_csrf_token(monkeypatch):
    """With the CSRF check switched off, the forged posts go through: the fuzzer must say so."""
    from django.middleware.csrf import CsrfViewMiddleware
    from rest_framework.authentication import SessionAuthentication

    monkeypatch.setattr(CsrfViewMiddleware, "process_view", lambda *args, **kwargs: None)
    monkeypatch.setattr(SessionAuthentication, "enforce_csrf", lambda *args, **kwargs: None)
    report = fuzz_run(world=plant(prefix="pfuzz-csrf"), requests=200, rng_seed=5)
    assert report.forged_posts > 0
    assert report.forged_not_refused
