"""Load, as a web process starts, what its first request would otherwise wait for.

A process loads the embedding model on first use (~0.2 s from the exported graph that an
earlier process kept; ~6 s for the process that exports and quantizes it), builds the
admission guards' literal indexes on its first write (~0.2 s) and imports every view through
the URLconf on its first request (~0.1 s).
``config/wsgi.py`` calls ``warm_up`` when a worker imports the application, before gunicorn
hands it a request (``MEMLEDGER_WARM_UP``, on by default): a worker gunicorn starts or
replaces takes no request until it is warm. Each worker warms itself: it imports the
application after gunicorn forks it (no ``--preload``).
"""

from __future__ import annotations

import logging
import time

from django.urls import get_resolver

from memory_core.admission import guards
from memory_core.embeddings import get_embedder

logger = logging.getLogger(__name__)


def warm_up() -> dict[str, float]:
    """Load the model (and run it once), its tokenizer, the guards' indexes and the URLconf.

    Returns each part's milliseconds. A model that fails to load does not stop the process:
    retrieval degrades to the stores that need no vector and writes answer 503, as on first use
    (the error is logged here, and again by the request that meets it).
    """
    timings: dict[str, float] = {}
    started = time.perf_counter()
    try:
        embedder = get_embedder()
        embedder.embed(["warm up"])
        embedder.count_tokens("warm up")
    except Exception as exc:  # noqa: BLE001 - the service degrades, it does not stop
        logger.error("warm-up: the embedding model did not load: %s", exc)
    timings["embedder_ms"] = round((time.perf_counter() - started) * 1000, 1)
    started = time.perf_counter()
    guards.build_literal_indexes()
    timings["admission_ms"] = round((time.perf_counter() - started) * 1000, 1)
    started = time.perf_counter()
    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and every view
    timings["urls_ms"] = round((time.perf_counter() - started) * 1000, 1)
    logger.info("warm-up done: %s", timings)
    return timings
