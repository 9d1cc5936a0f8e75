"""The leak hunt, bounded: canaries in sibling tenants, subjects, scopes and agents.

The full run is ``python manage.py leak_hunt --retrievals 10000``.
"""

import pytest

from memory_core.security.leak_hunt import Caller, Canary, allowed, hunt

RETRIEVALS = 150


@pytest.mark.django_db
def test_no_canary_reaches_the_wrong_caller():
    report = hunt(retrievals=RETRIEVALS, prefix="leak")
    summary = report.as_dict()
    print("leak_hunt:", {k: v for k, v in summary.items() if k != "leak_examples"})
    assert report.retrievals == RETRIEVALS
    assert report.leaks == 0, summary["leak_examples"]
    # The hunt must be able to fail: answers do carry canaries (the caller's own), and both
    # arms of hybrid search returned them.
    assert report.own_canaries_returned > 0
    assert report.by_arm["vector"] > 0 and report.by_arm["fulltext"] > 0
    assert report.query_kinds["foreign_token"] > 0
    assert report.corpus_prompts > 0 and report.query_kinds["corpus_extraction"] > 0


def test_the_ownership_rule_the_hunt_scores_with():
    canary = Canary("cnry0123456789", "t", "s", None, "project", "orion")
    caller = Caller("t", "a", "s", "user-1", "orion", "")
    assert allowed(canary, caller)
    assert not allowed(canary, Caller("t", "a", "s", "user-1", "vega", ""))
    assert not allowed(canary, Caller("t2", "a", "s", "user-1", "orion", ""))
    assert not allowed(canary, Caller("t", "a", "s2", "user-2", "orion", ""))
    private = Canary("cnry0123456789", "t", "s", "a1", "global", "")
    assert allowed(private, Caller("t", "a1", "s", "user-1", "", ""))
    assert not allowed(private, Caller("t", "a2", "s", "user-1", "", ""))
