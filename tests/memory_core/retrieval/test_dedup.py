"""Stage 6: one fact, one candidate; merges are logged and kept on the survivor."""

from datetime import timedelta

from memory_core.retrieval.dedup import deduplicate

from .helpers import NOW, cand, policy

E1 = (1.0, 0.0, 0.0)
E1_NEAR = (0.99, 0.05, 0.0)
E1_ECHO = (0.7, 0.71, 0.0)
E2 = (0.0, 1.0, 0.0)


def test_supersedes_link_keeps_the_newer_row():
    old = cand("old", memory_key="k", version=1)
    new = cand("new", memory_key="k", version=2, supersedes_id="old", content_hash="h2")
    kept, merges = deduplicate([old, new], policy=policy())
    assert [c.id for c in kept] == ["new"]
    assert kept[0].merged_from == ["old"]
    assert [(m.kept, m.merged, m.rule) for m in merges] == [("new", "old", "supersedes")]


def test_equal_content_hash_keeps_the_strongest_row():
    weak = cand("weak", content_hash="same", confidence=0.6, semantic=0.9)
    strong = cand("strong", content_hash="same", confidence=0.95, semantic=0.4)
    kept, merges = deduplicate([weak, strong], policy=policy())
    assert [c.id for c in kept] == ["strong"]
    assert kept[0].merged_from == ["weak"]
    assert kept[0].semantic == 0.9  # the survivor keeps the best relevance signal
    assert merges[0].rule == "content_hash"


def test_near_duplicate_embeddings_merge_within_a_type_only():
    a = cand("a", embedding=E1, updated_at=NOW)
    b = cand("b", embedding=E1_NEAR, updated_at=NOW - timedelta(days=3))
    c = cand("c", embedding=E1_NEAR, memory_type="incident")
    kept, merges = deduplicate([a, b, c], policy=policy())
    assert sorted(x.id for x in kept) == ["a", "c"]
    assert [(m.kept, m.merged, m.rule) for m in merges] == [("a", "b", "near_duplicate")]


def test_an_inference_that_echoes_an_explicit_memory_is_folded_into_it():
    explicit = cand("explicit", embedding=E1, memory_key="style.answers")
    echo = cand("echo", embedding=E1_ECHO, authority="model_inference", confidence=0.7)
    other = cand("other", embedding=E2, authority="model_inference", confidence=0.7)
    kept, merges = deduplicate([explicit, echo, other], policy=policy())
    assert sorted(x.id for x in kept) == ["explicit", "other"]
    assert merges[0].rule == "inferred_echo"


def test_two_keyed_rows_that_differ_are_a_conflict_not_a_duplicate():
    a = cand("a", memory_key="deploy.region", embedding=E1)
    b = cand("b", memory_key="deploy.region", embedding=E1_NEAR)
    kept, merges = deduplicate([a, b], policy=policy())
    assert len(kept) == 2 and merges == []


def test_equal_content_in_another_scope_is_another_fact():
    repo = cand("repo", content_hash="same", scope_kind="repo", scope_ref="atlas-api")
    glob = cand("glob", content_hash="same", confidence=1.0)
    kept, merges = deduplicate([repo, glob], policy=policy())
    assert sorted(c.id for c in kept) == ["glob", "repo"] and merges == []


def test_a_keyed_row_is_never_absorbed_by_a_row_of_another_key_or_none():
    keyed = cand("keyed", memory_key="project.backend", content_hash="same", confidence=0.5)
    unkeyed = cand("unkeyed", content_hash="same", confidence=1.0)
    other_key = cand("other", memory_key="style.answers", content_hash="same", confidence=0.9)
    kept, merges = deduplicate([keyed, unkeyed, other_key], policy=policy())
    # Both keyed rows stay, each in its key's group; the stronger unkeyed copy is the one
    # folded (into the stronger keyed row), never a keyed row into it.
    assert sorted(c.id for c in kept) == ["keyed", "other"]
    assert [(m.kept, m.merged) for m in merges] == [("other", "unkeyed")]
    # By similarity too: the keyed row stays in its key's group, the copy folds into it.
    keyed = cand("keyed", memory_key="project.backend", embedding=E1_NEAR, confidence=0.5)
    unkeyed = cand("unkeyed", embedding=E1, confidence=1.0)
    kept, merges = deduplicate([keyed, unkeyed], policy=policy())
    assert [c.id for c in kept] == ["keyed"]
    assert [(m.kept, m.merged, m.rule) for m in merges] == [("keyed", "unkeyed", "near_duplicate")]


def test_an_unkeyed_copy_is_still_folded_into_the_keyed_row_of_its_scope():
    keyed = cand("keyed", memory_key="project.backend", content_hash="same", confidence=1.0)
    copy = cand("copy", content_hash="same", confidence=0.5)
    kept, merges = deduplicate([keyed, copy], policy=policy())
    assert [c.id for c in kept] == ["keyed"]
    assert [(m.kept, m.merged, m.rule) for m in merges] == [("keyed", "copy", "content_hash")]
