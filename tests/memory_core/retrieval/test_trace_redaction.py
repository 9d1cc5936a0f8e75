"""What an agent's trace leaves out of its document once it may not read a memory it names.

The endpoint's tests (tests/hardening/test_agent_grants.py) narrow a grant and queue a
deletion; these take the document apart list by list, merges and conflicts included.
"""

from memory_core.retrieval.traces import _stages_without

SEEN, GONE, OTHER = "seen-id", "gone-id", "other-id"


def document() -> dict:
    return {
        "counts": {"candidates": 3},
        "candidates": [{"id": SEEN}, {"id": GONE}, {"id": OTHER}],
        "rejections": [{"id": GONE, "stage": "rerank", "reason": "below_threshold"}],
        "dedup_merges": [
            {"kept": SEEN, "merged": GONE, "rule": "near_duplicate"},
            {"kept": OTHER, "merged": SEEN, "rule": "near_duplicate"},
        ],
        "conflicts": [
            {"memory_key": "k.both", "candidate_ids": [SEEN, GONE], "winner_id": GONE},
            {"memory_key": "k.gone", "candidate_ids": [GONE], "winner_id": GONE},
        ],
        "selected": [{"id": SEEN, "merged_from": [GONE, OTHER]}, {"id": GONE, "merged_from": []}],
    }


def test_every_list_of_the_document_leaves_the_hidden_id_out():
    stages = _stages_without(document(), {GONE})
    assert GONE not in repr(stages)
    assert stages["candidates"] == [{"id": SEEN}, {"id": OTHER}]
    assert stages["rejections"] == []
    assert stages["dedup_merges"] == [{"kept": OTHER, "merged": SEEN, "rule": "near_duplicate"}]
    # A conflict keeps what is left of it, without its hidden winner; one of hidden ids only
    # is left out whole.
    assert stages["conflicts"] == [
        {"memory_key": "k.both", "candidate_ids": [SEEN], "winner_id": None}
    ]
    assert stages["selected"] == [{"id": SEEN, "merged_from": [OTHER]}]
    assert stages["counts"] == {"candidates": 3}  # counts are the retrieval's, as they were


def test_the_stored_document_is_not_changed_and_absent_lists_stay_absent():
    stored = document()
    _stages_without(stored, {GONE})
    assert stored == document()
    assert _stages_without({"gate": {"mode": "none"}}, {GONE}) == {"gate": {"mode": "none"}}
