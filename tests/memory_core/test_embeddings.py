"""The real model embeds on CPU from the packaged weights, and pgvector finds the rows."""

import shutil

import pytest
from pgvector.django import CosineDistance

from memory_core.embeddings import EmbeddingError, SentenceTransformerEmbedder, get_embedder
from memory_core.models import Memory, MemoryType
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory


def test_weights_digest_mismatch_is_refused_with_a_clear_message():
    embedder = SentenceTransformerEmbedder(sha256="0" * 64)
    with pytest.raises(EmbeddingError, match="Refusing to load"):
        embedder.embed(["hello"])


def test_missing_weights_are_reported(tmp_path):
    shutil.copy(get_embedder().model_path / "config.json", tmp_path / "config.json")
    with pytest.raises(EmbeddingError, match="weights not found"):
        SentenceTransformerEmbedder(model_path=tmp_path).embed(["hello"])


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


def test_the_embedder_sets_its_torch_threads_when_the_model_loads():
    import torch
    from django.conf import settings

    assert settings.MEMLEDGER_EMBEDDER["TORCH_THREADS"] == 1  # one per process by default
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        embedder = SentenceTransformerEmbedder(torch_threads=1)
        embedder.embed(["one thread"])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_the_onnx_runtime_gives_the_torch_vectors():
    import numpy as np

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
    assert onnx._session is not None  # the ONNX path really ran
    # ... and torch's copy of the weights was released.
    assert sum(p.numel() for p in onnx._model[0].auto_model.parameters()) == 0
    assert got.shape == expected.shape == (len(texts), 384)
    assert np.abs(got - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_an_unknown_runtime_is_refused():
    with pytest.raises(EmbeddingError, match="Unknown embedding runtime"):
        SentenceTransformerEmbedder(runtime="tensorflow")


def test_int8_precision_stays_close_to_fp32_and_names_itself():
    import numpy as np

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
