"""`manage.py reembed`: vectors another model made are re-made with the configured one."""

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from memory_core.embeddings import get_embedder
from memory_core.models import Memory, Status
from memory_core.services import memories as memories_service
from memory_core.text import content_hash
from tests.factories import MemoryFactory, SubjectFactory
from tests.memory_core.test_embeddings import linked_model_copy

OLD_VECTOR = [1.0] + [0.0] * 383


@pytest.fixture
def rows(tenant, other_tenant):
    embedder = get_embedder()
    subject, elsewhere = SubjectFactory(tenant=tenant), SubjectFactory(tenant=other_tenant)
    stale = [
        MemoryFactory(subject=subject, embedding=OLD_VECTOR, embedding_model="old-model"),
        MemoryFactory(subject=elsewhere, embedding=OLD_VECTOR, embedding_model="old-model"),
        MemoryFactory(subject=subject),  # content but no vector
    ]
    current = MemoryFactory(
        subject=subject, embedding=OLD_VECTOR, embedding_model=embedder.model_name
    )
    gone = MemoryFactory(
        subject=subject,
        status=Status.DELETED,
        content="",
        content_hash="",
        value=None,
        embedding=None,
        embedding_model="",
    )
    return stale, current, gone


def _vector(memory_id):
    return np.array(Memory.objects.get(pk=memory_id).embedding)


def test_reembed_remakes_every_stale_vector_of_every_tenant_and_nothing_else(rows, capsys):
    stale, current, gone = rows
    embedder = get_embedder()
    call_command("reembed", "--batch-size", "2")
    out = capsys.readouterr()
    assert f"Re-embedded 3 of 3 memories with {embedder.model_name}; 0 skipped" in out.out
    assert "re-embedded 2/3" in out.err and "re-embedded 3/3" in out.err
    expected = embedder.embed([m.content for m in stale])
    for memory, vector in zip(stale, expected, strict=True):
        memory.refresh_from_db()
        assert memory.embedding_model == embedder.model_name
        assert np.allclose(np.array(memory.embedding), vector, atol=1e-5)
    # A vector the configured model made is left alone, and a tombstone gets no vector.
    assert np.array_equal(_vector(current.pk), OLD_VECTOR)
    assert Memory.objects.get(pk=gone.pk).embedding is None
    # Nothing is left: a second run (or a dry run) finds nothing.
    call_command("reembed", "--dry-run")
    assert f"0 memories to re-embed with {embedder.model_name}" in capsys.readouterr().out


def test_a_deletion_or_correction_committed_while_embedding_wins(rows, monkeypatch):
    stale, _, _ = rows
    corrected, deleted = stale[0], stale[1]
    embedder = get_embedder()
    real_embed = embedder.embed

    def embed_while_others_write(texts):
        vectors = real_embed(texts)
        Memory.objects.filter(pk=corrected.pk).update(
            content="User prefers option X now.", content_hash=content_hash("User prefers X now.")
        )
        Memory.objects.filter(pk=deleted.pk).update(  # as a deletion leaves its tombstone
            status=Status.DELETED, content="", content_hash="", value=None, embedding=None
        )
        return vectors

    monkeypatch.setattr(embedder, "embed", embed_while_others_write)
    result = memories_service.memories_reembed(batch_size=10)
    assert (result.stale, result.reembedded, result.skipped) == (3, 1, 2)
    corrected.refresh_from_db()
    assert corrected.embedding_model == "old-model"
    assert np.array_equal(np.array(corrected.embedding), OLD_VECTOR)
    deleted.refresh_from_db()
    assert deleted.embedding is None


def test_a_bad_batch_size_is_refused(db):
    with pytest.raises(CommandError, match="--batch-size"):
        call_command("reembed", "--batch-size", "0")


def test_one_memory_is_reembedded_by_the_same_guarded_write(rows):
    stale, _, gone = rows
    embedder = get_embedder()
    assert memories_service.memory_reembed(stale[0].pk) == "reembedded"
    stale[0].refresh_from_db()
    assert stale[0].embedding_model == embedder.model_name
    assert np.allclose(
        np.array(stale[0].embedding), embedder.embed([stale[0].content])[0], atol=1e-5
    )
    assert memories_service.memory_reembed(gone.pk) == "nothing"  # a tombstone has no content


@pytest.mark.django_db
def test_a_model_that_cannot_embed_ends_the_command_with_a_command_error(rows, broken_model):
    with pytest.raises(CommandError, match="The embedding model failed: model weights unreadable"):
        call_command("reembed")
    assert Memory.objects.filter(embedding_model="old-model").count() == 2  # nothing changed


@pytest.mark.django_db
def test_a_switched_model_folder_labels_its_vectors_anew_and_reembed_finds_the_old_ones(
    tenant, settings, tmp_path, capsys
):
    packaged = get_embedder()
    subject = SubjectFactory(tenant=tenant)
    old = [
        MemoryFactory(subject=subject, embedding=OLD_VECTOR, embedding_model=packaged.model_name)
        for _ in range(2)
    ]
    # MEMLEDGER_EMBEDDING_MODEL_PATH points at another folder (here: the same files under
    # another name, which is all a test can afford); its own graph cache, so nothing is shared.
    folder = linked_model_copy(tmp_path / "minilm-copy")
    settings.MEMLEDGER_EMBEDDER = {
        **settings.MEMLEDGER_EMBEDDER,
        "MODEL_PATH": str(folder),
        "CACHE_DIR": str(tmp_path / "cache"),
    }  # the embedder made before is forgotten (memory_core.apps), and again at the end
    switched = get_embedder()
    assert switched.model_name.startswith("minilm-copy-")
    call_command("reembed", "--dry-run")
    assert f"2 memories to re-embed with {switched.model_name}" in capsys.readouterr().out
    call_command("reembed")
    assert f"Re-embedded 2 of 2 memories with {switched.model_name}" in (capsys.readouterr().out)
    expected = switched.embed([m.content for m in old])
    for memory, vector in zip(old, expected, strict=True):
        memory.refresh_from_db()
        assert memory.embedding_model == switched.model_name
        assert np.allclose(np.array(memory.embedding), vector, atol=1e-5)
