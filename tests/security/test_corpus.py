"""The admission policy against the attack corpus: the acceptance targets of issue 3.

Runs admission in-process (pure, no database), so the whole corpus takes about a second.
"""

import pytest

from memory_core.admission.corpus import evaluate, load_corpus

CORPUS = load_corpus()


def test_corpus_is_big_enough_and_labelled():
    attacks = [e for e in CORPUS if e["label"] == "attack"]
    benign = [e for e in CORPUS if e["label"] == "benign"]
    assert len(attacks) >= 150 and len(benign) >= 150
    categories = {e["category"] for e in attacks}
    assert {
        "minja_redirect",
        "mextra_extraction",
        "agentpoison_trigger",
        "role_tampering",
        "persistent_override",
        "exfiltration",
        "business_fact",
        "obfuscated",
        "split_write",
    } <= categories
    assert len({e["id"] for e in CORPUS}) == len(CORPUS)


def test_attack_acceptance_and_benign_false_rejection_meet_the_targets():
    report = evaluate(CORPUS)
    assert report.attack_acceptance <= 0.01, report.accepted_attacks
    assert report.benign_false_rejection <= 0.03, report.rejected_benign


@pytest.mark.parametrize("split", ["dev", "holdout"])
def test_each_split_meets_the_targets(split):
    report = evaluate([e for e in CORPUS if e.get("split", "dev") == split])
    assert report.attack_acceptance <= 0.03, report.accepted_attacks
    assert report.benign_false_rejection <= 0.03, report.rejected_benign


def test_every_rejection_carries_a_readable_rule_code():
    from memory_core.admission.codes import RULE_CODES

    report = evaluate(CORPUS)
    for code in report.rules:
        assert code in RULE_CODES and RULE_CODES[code][1]
