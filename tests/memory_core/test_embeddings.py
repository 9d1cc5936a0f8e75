"""The real model embeds on CPU from the packaged weights, and pgvector finds the rows."""

import errno
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from pgvector.django import CosineDistance

from memory_core.embeddings import (
    PACKAGED_SHA256,
    EmbeddingError,
    SentenceTransformerEmbedder,
    _GraphCache,
    _onnx_inputs,
    get_embedder,
)
from memory_core.models import Memory, MemoryType
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory
from tests.processes import run_python_json


def test_weights_digest_mismatch_is_refused_with_a_clear_message():
    embedder = SentenceTransformerEmbedder(sha256="0" * 64)
    with pytest.raises(EmbeddingError, match="Refusing to load"):
        embedder.embed(["hello"])


def test_missing_weights_are_reported(tmp_path):
    shutil.copy(get_embedder().model_path / "config.json", tmp_path / "config.json")
    with pytest.raises(EmbeddingError, match="weights not found"):
        SentenceTransformerEmbedder(model_path=tmp_path).embed(["hello"])


def linked_model_copy(folder):
    """Return ``folder``: the packaged model's files, linked (not copied: 90 MB)."""
    folder.mkdir()
    for item in get_embedder().model_path.iterdir():
        (folder / item.name).symlink_to(item)
    return folder


def test_the_packaged_model_keeps_the_label_its_stored_vectors_have():
    # Databases hold vectors labelled so: they must not all need re-embedding.
    assert SentenceTransformerEmbedder(precision="fp32").model_name == "all-MiniLM-L6-v2"
    assert SentenceTransformerEmbedder(sha256=PACKAGED_SHA256, precision="int8").model_name == (
        "all-MiniLM-L6-v2-int8"
    )
    suffix = "-int8" if settings.MEMLEDGER_EMBEDDER["PRECISION"] == "int8" else ""
    assert get_embedder().model_name == f"all-MiniLM-L6-v2{suffix}"


def test_another_model_folder_or_weights_gets_a_label_of_its_own(tmp_path):
    copy = linked_model_copy(tmp_path / "minilm-copy")
    assert SentenceTransformerEmbedder(model_path=copy, precision="fp32").model_name == (
        f"minilm-copy-{PACKAGED_SHA256[:12]}"
    )
    # Other weights in a folder named like the packaged one: their own digest.
    other = tmp_path / "elsewhere" / get_embedder().model_path.name
    other.mkdir(parents=True)
    (other / "model.safetensors").write_bytes(b"other weights")
    digest = hashlib.sha256(b"other weights").hexdigest()
    assert SentenceTransformerEmbedder(model_path=other, precision="int8").model_name == (
        f"{other.name}-{digest[:12]}-int8"
    )
    # The configured digest names the weights too (the model refuses any others).
    assert SentenceTransformerEmbedder(model_path=other, sha256="ab" * 32).model_name == (
        f"{other.name}-abababababab"
    )
    # MEMLEDGER_EMBEDDING_MODEL_NAME overrides it.
    named = SentenceTransformerEmbedder(model_path=copy, model_name="minilm", precision="int8")
    assert named.model_name == "minilm-int8"


def test_embeddings_are_unit_vectors_and_semantic():
    embedder = get_embedder()
    ios, swift, soup = embedder.embed(
        ["iOS network reachability code", "Swift networking on the iPhone", "tomato soup recipe"]
    )
    assert len(ios) == 384
    assert abs(sum(x * x for x in ios) - 1.0) < 1e-4
    cosine = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
    assert cosine(ios, swift) > cosine(ios, soup) + 0.2


def test_count_tokens_uses_the_model_tokenizer():
    embedder = get_embedder()
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("unbelievably") > 1


@pytest.mark.django_db
def test_cosine_query_with_tenant_filter_finds_the_stored_row(
    tenant, other_tenant, system_principal
):
    mine = SubjectFactory(tenant=tenant)
    theirs = SubjectFactory(tenant=other_tenant)
    texts = [
        "The iOS app must be written in Objective-C.",
        "Deploy the API to eu-west-1.",
        "User likes concise answers.",
    ]
    stored = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=s,
                memory_type=MemoryType.PROJECT_CONSTRAINT,
                content=t,
                authority="explicit_user",
                source_type="user_input",
            )
            for s in (mine, theirs)
            for t in texts
        ],
        principal=system_principal,
    )
    assert all(m.embedding_model == get_embedder().model_name for m in stored)
    query = get_embedder().embed(["Which language for the iPhone application?"])[0]
    qs = (
        Memory.objects.filter(tenant=tenant)
        .annotate(distance=CosineDistance("embedding", query))
        .order_by("distance")[:2]
    )
    found = list(qs)
    assert found[0].content == texts[0]
    assert {m.tenant_id for m in found} == {tenant.id}


def test_the_objects_alive_after_the_model_loads_are_frozen_out_of_full_collections():
    import gc

    get_embedder().embed(["load"])
    # torch, transformers and the model: hundreds of thousands of objects a full collection
    # would otherwise walk (~245 ms) in the middle of some request.
    assert gc.get_freeze_count() > 100_000


def test_the_embedder_sets_its_threads_when_the_model_loads():
    import torch
    from django.conf import settings

    assert settings.MEMLEDGER_EMBEDDER["TORCH_THREADS"] == 1  # one per process by default
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        embedder = SentenceTransformerEmbedder(runtime="torch", torch_threads=1)
        embedder.embed(["one thread"])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    onnx = SentenceTransformerEmbedder(runtime="onnx", torch_threads=1)
    onnx.embed(["one thread"])
    assert onnx._session.get_session_options().intra_op_num_threads == 1


def test_the_onnx_runtime_gives_the_torch_vectors():
    onnx = SentenceTransformerEmbedder(runtime="onnx", torch_threads=1)
    torch_ = SentenceTransformerEmbedder(runtime="torch", torch_threads=1)
    texts = [
        "User prefers dark mode.",
        "  padded with spaces  ",
        "",
        "Ünïcödé, 日本語 and emoji 🚀 in one memory.",
        "deploy " * 400,  # over the model's 256-token limit: truncated the same way
        *[f"Memory number {i} about the {i % 7}th project." for i in range(140)],  # > 1 batch
    ]
    got = np.array(onnx.embed(texts))
    expected = np.array(torch_.embed(texts))
    assert onnx._session is not None and onnx._model is None  # the ONNX path really ran
    assert got.shape == expected.shape == (len(texts), 384)
    assert np.abs(got - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_an_unknown_runtime_is_refused():
    with pytest.raises(EmbeddingError, match="Unknown embedding runtime"):
        SentenceTransformerEmbedder(runtime="tensorflow")


def test_int8_precision_stays_close_to_fp32_and_names_itself():
    int8 = SentenceTransformerEmbedder(runtime="onnx", precision="int8", torch_threads=1)
    fp32 = SentenceTransformerEmbedder(runtime="onnx", precision="fp32", torch_threads=1)
    texts = [
        "User prefers dark mode.",
        "The staging deploy needs a VPN; production deploys go through the release bot.",
        "Ünïcödé, 日本語 and emoji 🚀 in one memory.",
        "deploy " * 400,
        *[f"Memory number {i} about the {i % 7}th project." for i in range(40)],
    ]
    got, expected = np.array(int8.embed(texts)), np.array(fp32.embed(texts))
    # Its own graph: int8 weights, not the fp32 one (whose vectors match torch's to 1e-5).
    assert np.abs(got - expected).max() > 1e-3
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert (got * expected).sum(axis=1).min() > 0.98
    # Stored vectors say which model made them: the two are not interchangeable.
    assert int8.model_name == "all-MiniLM-L6-v2-int8"
    assert fp32.model_name == "all-MiniLM-L6-v2"
    # A text's vector does not depend on the texts embedded with it.
    alone = np.array([int8.embed([text])[0] for text in texts[:6]])
    assert np.abs(alone - got[:6]).max() < 1e-6
    # The ranking it gives is the fp32 model's: the nearest of three is the same.
    query = np.array(int8.embed(["Which UI theme does the user like?"])[0])
    assert int(np.argmax(got[:3] @ query)) == int(np.argmax(expected[:3] @ query)) == 0


def test_an_unknown_precision_or_int8_without_onnx_is_refused():
    with pytest.raises(EmbeddingError, match="Unknown embedding precision"):
        SentenceTransformerEmbedder(precision="fp16")
    with pytest.raises(EmbeddingError, match="needs the onnx runtime"):
        SentenceTransformerEmbedder(runtime="torch", precision="int8")


TRICKY = [
    "User prefers dark mode.",
    "  padded with spaces \n",
    "",
    " ",
    "Ünïcödé, 日本語 and emoji 🚀 in one memory.",
    "deploy " * 400,  # cut at the model's 256 tokens
    "a\tb\nc",
    "x" * 3000,
    "\u200b zero width, ß ǅ ﬁ",
]


def test_the_onnx_path_feeds_the_model_the_ids_sentence_transformers_would():
    embedder = SentenceTransformerEmbedder(runtime="torch")
    embedder.embed(["load"])
    features = embedder._model.preprocess(TRICKY)
    ids, mask, types = _onnx_inputs(embedder.model_path).encode(TRICKY)
    assert ids.shape == mask.shape == types.shape == tuple(features["input_ids"].shape)
    np.testing.assert_array_equal(ids, features["input_ids"].numpy())
    np.testing.assert_array_equal(mask, features["attention_mask"].numpy())
    np.testing.assert_array_equal(types, features["token_type_ids"].numpy())


def test_a_model_the_onnx_path_does_not_reproduce_is_left_to_torch(tmp_path, caplog):
    model = get_embedder().model_path
    for name in ("tokenizer.json", "sentence_bert_config.json"):
        shutil.copy(model / name, tmp_path / name)
    (tmp_path / "1_Pooling").mkdir()
    pooling = {"word_embedding_dimension": 384, "pooling_mode_cls_token": True}
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    assert _onnx_inputs(tmp_path) is None
    assert "is not mean-pooled" in caplog.text
    (tmp_path / "tokenizer.json").unlink()
    assert _onnx_inputs(tmp_path) is None


PROBE = """
import json, sys
import django
django.setup()
from memory_core.embeddings import get_embedder
vectors = get_embedder().embed(json.loads(sys.stdin.read()))
print(json.dumps({"torch": "torch" in sys.modules, "vectors": vectors}))
"""


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_exported_graph_is_kept_so_a_later_process_loads_without_torch(tmp_path, caplog):
    digest = settings.MEMLEDGER_EMBEDDER["SHA256"]
    first = SentenceTransformerEmbedder(precision="fp32", sha256=digest, cache_dir=tmp_path)
    vectors = np.array(first.embed(TRICKY))
    graph = tmp_path / f"all-MiniLM-L6-v2-{digest[:16]}-opset17-v1.onnx"
    assert sorted(tmp_path.iterdir()) == [graph, graph.with_suffix(".sha256")]
    assert graph.with_suffix(".sha256").read_text() == sha256(graph)

    later = run_python_json(
        PROBE,
        stdin=json.dumps(TRICKY),
        MEMLEDGER_EMBEDDING_CACHE_DIR=str(tmp_path),
        MEMLEDGER_EMBEDDING_PRECISION="fp32",
    )
    assert later["torch"] is False  # the graph came from the cache: no export, no torch
    assert np.abs(np.array(later["vectors"]) - vectors).max() < 1e-6

    # A damaged graph is not used: the next process exports again and replaces it.
    damaged = bytearray(graph.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    graph.write_bytes(bytes(damaged))
    again = SentenceTransformerEmbedder(precision="fp32", sha256=digest, cache_dir=tmp_path)
    assert np.abs(np.array(again.embed(TRICKY)) - vectors).max() < 1e-6
    assert "does not match its digest" in caplog.text
    assert graph.with_suffix(".sha256").read_text() == sha256(graph)

    # So is one whose digest matches but which ONNX Runtime cannot open.
    graph.write_bytes(b"not an ONNX graph")
    graph.with_suffix(".sha256").write_text(sha256(graph))
    last = SentenceTransformerEmbedder(precision="fp32", sha256=digest, cache_dir=tmp_path)
    assert np.abs(np.array(last.embed(TRICKY)) - vectors).max() < 1e-6
    assert "cannot open the model's graph" in caplog.text
    assert graph.stat().st_size > 1_000_000
    assert graph.with_suffix(".sha256").read_text() == sha256(graph)


def test_a_cache_folder_that_cannot_be_written_leaves_the_graph_in_memory(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    embedder = SentenceTransformerEmbedder(precision="fp32", cache_dir=blocker / "cache")
    assert len(embedder.embed(["still embeds"])[0]) == 384
    assert embedder._session is not None
    assert "cannot keep the ONNX graph" in caplog.text


def test_a_graph_cache_write_on_a_full_disk_leaves_no_partial_file(tmp_path, monkeypatch, caplog):
    """Stop 63's audit of failure behaviour found that ``_GraphCache.write``, on a full disk,
    left the part of the graph (tens of MB) it had written under ``.<name>.<pid>.tmp``: one
    more for every process that loads the model (each with its own pid), on the disk that
    was already full, and nothing ever removed them. Now a failed write removes its
    temporary file (``files.removed_on_failure``); the process keeps its graph in memory
    (logged), and the next one exports again."""
    folder = tmp_path / "model-cache"
    cache = _GraphCache(folder, "all-MiniLM-L6-v2-int8")
    digest = "ab" * 32

    def write_bytes_on_a_full_disk(self, data):
        with open(self, "wb") as handle:
            handle.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as full_disk:
        full_disk.setattr(Path, "write_bytes", write_bytes_on_a_full_disk)
        cache.write(digest, b"\x08\x07" * 4096)

    assert "cannot keep the ONNX graph" in caplog.text
    assert sorted(folder.iterdir()) == []
    assert cache.read(digest) is None


def test_a_model_of_other_dimensions_is_refused_from_the_cached_graph_too(tmp_path):
    digest = settings.MEMLEDGER_EMBEDDER["SHA256"]
    SentenceTransformerEmbedder(precision="fp32", cache_dir=tmp_path).embed(["export it"])
    for runtime in ("torch", "onnx"):  # onnx: the graph comes from the cache, torch is not asked
        embedder = SentenceTransformerEmbedder(
            runtime=runtime, precision="fp32", sha256=digest, cache_dir=tmp_path, dimensions=512
        )
        with pytest.raises(EmbeddingError, match="makes 384-d vectors, configured 512"):
            embedder.embed(["hello"])
        assert not embedder.loaded


def test_a_failed_export_falls_back_to_torch_for_fp32_and_refuses_int8(
    tmp_path, caplog, monkeypatch
):
    import torch

    def broken_export(*args, **kwargs):
        raise RuntimeError("exporter unavailable")

    monkeypatch.setattr(torch.onnx, "export", broken_export)
    fp32 = SentenceTransformerEmbedder(precision="fp32", cache_dir=tmp_path)
    assert len(fp32.embed(["still embeds"])[0]) == 384
    assert fp32._session is None and fp32._model is not None  # torch's path
    assert "ONNX export of the embedding model failed" in caplog.text
    assert not list(tmp_path.iterdir())  # nothing kept
    int8 = SentenceTransformerEmbedder(precision="int8", cache_dir=tmp_path)
    with pytest.raises(EmbeddingError, match="int8 precision needs the model's ONNX export"):
        int8.embed(["hello"])


def test_overriding_the_embedder_setting_makes_the_embedder_it_names_and_then_forgets_it():
    """``get_embedder`` keeps one embedder per process: a test that overrode the setting
    without clearing that by hand got the embedder made before (the state machine's
    memoizing one was ignored), or left its own behind for the tests after it."""
    from django.test import override_settings

    from memory_core.embeddings import get_embedder

    configured = type(get_embedder())
    failing = "tests.memory_core.retrieval.test_pipeline.FailingEmbedder"
    with override_settings(MEMLEDGER_EMBEDDER={"BACKEND": failing, "DIMENSIONS": 384}):
        assert type(get_embedder()).__name__ == "FailingEmbedder"
    assert type(get_embedder()) is configured
