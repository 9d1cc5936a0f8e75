"""Prepare (or reuse) the benchmark database of one corpus spec and point Django at it."""

from __future__ import annotations

import statistics
import time

from django.conf import settings
from pgvector.psycopg import register_vector

from memory_core.embeddings import get_embedder

from . import database
from .corpus import CorpusSpec, build_corpus, corpus_state


def prepare_corpus(spec: CorpusSpec, *, rebuild: bool = False, log=print) -> dict:
    """Create + migrate the spec's database, build the corpus unless an identical one exists.

    Returns ``{"database", "reused", "stats"}``. Afterwards Django's default connection points
    at the benchmark database (never the dev or a test database).
    """
    name = database.bench_database_name(
        memories=spec.memories, tenants=spec.tenants, seed=spec.seed
    )
    created = database.ensure_database(name)
    database.use_database(name)
    database.migrate()
    with database.connect(name) as conn:
        register_vector(conn)
        state = corpus_state(conn)
        if state and not rebuild and state["spec"] == _jsonable(spec):
            log(f"reusing corpus in {name}")
            return {"database": name, "reused": True, "stats": state["stats"]}
        log(f"{'created' if created else 'rebuilding'} {name}: building the corpus")
        embedder = get_embedder()
        stats = build_corpus(
            conn,
            spec,
            embed=embedder.embed,
            model_name=embedder.model_name,
            app_role=settings.MEMLEDGER_DB_APP_ROLE,
            log=log,
        )
    from dataclasses import asdict

    return {"database": name, "reused": False, "stats": asdict(stats)}


def measure_as_production() -> None:
    """Run this process's measurements as a deployed process runs: DEBUG off.

    Under DEBUG (the local settings' default) Django logs every query and renders its SQL with
    the parameters, the 384-number query vector included: in-process p50 33.97 against
    32.40 ms here, a cost no deployed web worker pays (docs/performance.md, section 10). The
    HTTP runs use the production settings already.
    """
    settings.DEBUG = False


def use_torch_threads(threads: int) -> None:
    """Make this process's embedder use ``threads`` torch threads (0: the configured value)."""
    if threads:
        settings.MEMLEDGER_EMBEDDER = {**settings.MEMLEDGER_EMBEDDER, "TORCH_THREADS": threads}
        get_embedder.cache_clear()


def _jsonable(spec: CorpusSpec) -> dict:
    from dataclasses import asdict

    return asdict(spec)


def open_corpus(spec: CorpusSpec) -> str:
    """Point Django at the spec's corpus that ``bench_retrieval`` built, and return its
    database's name; BenchDatabaseError (saying how to build it) if there is none."""
    name = database.bench_database_name(
        memories=spec.memories, tenants=spec.tenants, seed=spec.seed
    )
    if not database.exists(name):
        raise database.BenchDatabaseError(
            f"{name} does not exist: build it with `manage.py bench_retrieval --memories "
            f"{spec.memories} --tenants {spec.tenants} --seed {spec.seed} --build-only`"
        )
    database.use_database(name)
    return name


def queries_with_keys(spec: CorpusSpec, count: int, *, key_name: str) -> tuple[list, dict]:
    """``count`` of the benchmark's queries on the spec's corpus (``measure.build_queries``),
    and a fresh API key for every agent they ask as (agent id: raw key)."""
    from memory_core import rls
    from memory_core.models import Agent
    from memory_core.services.api_keys import api_key_create

    from .measure import build_queries

    with rls.platform_scope(key_name):
        queries = build_queries(spec, count, seed=spec.seed)
        agents = Agent.objects.filter(id__in={q.agent_id for q in queries})
        keys = {agent.id: api_key_create(agent=agent, name=key_name)[1] for agent in agents}
    return queries, keys


def retrieval_requests(
    spec: CorpusSpec, count: int, *, key_name: str, bucket=None, context: dict | None = None
):
    """Open the spec's corpus for retrievals through Django's whole request stack, in-process.

    DEBUG and the per-key rate limit are off, as ``bench_retrieval``'s gunicorn runs. Return
    the benchmark's queries (``count`` of them, then those of ``bucket`` if given) and
    ``send(query)``, which posts one to ``/api/v1/retrieve`` with its agent's key through
    Django's test client and returns the milliseconds it took (SystemExit on an answer other
    than 200). ``context``: more of each request's context (``repository_id``, ``task_id``)
    beside its ``user_id``. BenchDatabaseError if the corpus was not built.
    """
    import json
    import time

    from django.test import Client

    measure_as_production()
    settings.MEMLEDGER_RATE_LIMIT = None
    open_corpus(spec)
    queries, keys = queries_with_keys(spec, count, key_name=key_name)
    queries = [q for q in queries if bucket in (None, q.bucket)]
    client = Client()

    def send(query) -> float:
        body = {"query": query.text, "context": {**(context or {}), "user_id": query.user_id}}
        started = time.perf_counter()
        response = client.post(
            "/api/v1/retrieve",
            json.dumps(body),
            content_type="application/json",
            HTTP_HOST="127.0.0.1",
            HTTP_AUTHORIZATION=f"Bearer {keys[query.agent_id]}",
        )
        if response.status_code != 200:
            raise SystemExit(f"retrieve answered {response.status_code}: {response.content[:300]}")
        return (time.perf_counter() - started) * 1000

    return queries, send


def large_subject_candidates(
    spec: CorpusSpec, count: int, *, key_name: str, min_rows: int
) -> tuple[list, list[dict]]:
    """The benchmark's queries (of ``count``) whose subject holds ``min_rows`` rows or more,
    and the arguments the pipeline passed ``fetch_candidates`` for each, in the same order
    (one request each through Django's whole stack, ``retrieval_requests``): what the scripts
    that take a large subject's statement apart run again.

    BenchDatabaseError if the corpus was not built; ValueError if no query reads such a
    subject, or if a request asked for candidates twice (a degraded retry), which would
    leave the arguments out of step with the queries.
    """
    from memory_core.retrieval import candidates

    queries, send = retrieval_requests(spec, count, key_name=key_name)
    large = [q for q in queries if q.subject_rows >= min_rows]
    if not large:
        raise ValueError(f"no query reads a subject of {min_rows} rows or more")
    asked: list[dict] = []
    real_fetch = candidates.fetch_candidates

    def capture(**kwargs):
        asked.append(kwargs)
        return real_fetch(**kwargs)

    candidates.fetch_candidates = capture
    try:
        for query in large:
            send(query)
    finally:
        candidates.fetch_candidates = real_fetch
    if len(asked) != len(large):
        raise ValueError(f"{len(large)} requests asked for candidates {len(asked)} times")
    return large, asked


def large_subjects_of(parser, opts, *, key_name: str) -> tuple[list, list[dict]]:
    """``large_subject_candidates`` for a script's arguments (``args.add_large_subject_
    arguments``): a corpus not built, or no query of a subject that large, is a usage error."""
    spec = CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed)
    try:
        return large_subject_candidates(
            spec, opts.queries, key_name=key_name, min_rows=opts.min_rows
        )
    except (database.BenchDatabaseError, ValueError) as exc:
        parser.error(str(exc))


def timed(samples: dict[str, list[float]], label: str, call, *args):
    """``call(*args)``, its milliseconds added to ``samples[label]``."""
    started = time.perf_counter()
    result = call(*args)
    samples.setdefault(label, []).append((time.perf_counter() - started) * 1000)
    return result


def medians_by_subject_size(samples: dict[str, list[float]], sizes: list[int]) -> dict:
    """Each label's median and largest milliseconds, and its median per subject size.

    Every label holds one sample a round and query, the queries in the order of ``sizes``
    (their subjects' rows), as the large-subject scripts take them
    (``large_subject_candidates``)."""
    return {
        label: {"median": round(statistics.median(values), 2), "max": round(max(values), 2)}
        | {
            f"median_{size}_rows": round(
                statistics.median(v for i, v in enumerate(values) if sizes[i % len(sizes)] == size),
                2,
            )
            for size in sorted(set(sizes))
        }
        for label, values in samples.items()
    }


def print_medians(ms: dict, width: int = 20) -> None:
    """Print ``medians_by_subject_size``'s figures, a line a label."""
    for label, figures in ms.items():
        by_size = "  ".join(
            f"{key.split('_')[1]} rows {value:7.2f}"
            for key, value in figures.items()
            if key.startswith("median_")
        )
        print(
            f"{label:{width}s} median {figures['median']:7.2f}  max {figures['max']:7.2f}  "
            f"(medians: {by_size})"
        )
