"""A synthetic memory corpus: Zipf-sized tenants and subjects, real and synthetic vectors.

Sizes: tenant ``r`` (1-based rank) holds a share ``1/r`` of the rows, normalised (Zipf, s=1).
At 10k tenants the largest tenant holds ~10 % of the rows, rank ~10 ~1 % and rank ~100 ~0.1 %:
exactly the tenant-size buckets of the benchmark. Inside a tenant, subjects are Zipf-sized too
(one subject per ~100 rows).

Vectors: ``sample`` texts are embedded with the real model (all-MiniLM-L6-v2); every row is one
of those texts with a variant suffix, and its vector is the sample's real vector plus a
normalised Gaussian perturbation (``noise`` per dimension, cosine ~0.9 to its anchor). Queries
are fresh texts embedded by the real model at query time.

Loading: COPY in binary format (pgvector's binary vector format) with triggers off for the
session (the rows are consistent by construction: no chains, no deletions), then VACUUM and
ANALYZE. The memory table has no approximate index (migration 0007); the post-filter
baseline's HNSW index is built over a copy of the vectors in ``bench_ann``, so the memory
table stays exactly as in production (ingest measured on top of it pays what production pays).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from psycopg import sql

from memory_core.models.choices import TYPE_CLASS

# 2: embeddings stored inline (migration 0004), VACUUM after load; 3: rows inline (0006), no
# HNSW/GIN on the memory table (0007), the baseline's HNSW index on bench_ann.
CORPUS_VERSION = 3
TENANT_SLUG = "bench-t{rank:05d}"
ROWS_PER_SUBJECT = 100
BUCKETS = {"0.1%": 0.001, "1%": 0.01, "10%": 0.1}

# The post-filter baseline (the anti-pattern: ANN over every tenant, filter after) needs an
# ANN index over every row: on a copy of the vectors, never on the memory table.
ANN_SQL = (
    "CREATE TABLE bench_ann AS SELECT id, tenant_id, subject_id, agent_id, status, "
    "memory_type, valid_until, embedding FROM memory_core_memory"
)
HNSW_SQL = (
    "CREATE INDEX bench_ann_hnsw ON bench_ann "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef})"
)

# type -> (share, source_type, authority)
TYPE_MIX = [
    ("episode", 0.40, "user_input", "explicit_user"),
    ("incident", 0.10, "verified_tool_output", "tool_observation"),
    ("previous_decision", 0.15, "user_input", "explicit_user"),
    ("successful_procedure", 0.10, "verified_tool_output", "tool_observation"),
    ("user_preference", 0.15, "model_inference", "model_inference"),
    ("project_constraint", 0.05, "user_input", "explicit_user"),
    ("repository_rule", 0.05, "user_input", "explicit_user"),
]
# Retired rows stay in the table (and in the index) but must never be returned.
STATUS_MIX = [("active", 0.96), ("revoked", 0.02), ("expired", 0.02)]

_TEMPLATES = [
    "The user prefers {lang} for {task} and wants {style} answers.",
    "Deploying {service} to {env} failed because {cause}; fixed by {fix}.",
    "Decided to use {tool} for {task} in the {project} project after comparing options.",
    "For the {project} repository, never modify {artifact} by hand.",
    "The {service} service runs on {lang} with {tool} in {env}.",
    "Meeting with {person} about {topic}: agreed to revisit it {when}.",
    "{person} asked to be reminded about {topic} {when}.",
    "The user lives in {place} and usually works {when}.",
    "To rotate credentials for {service}, run {tool} then restart {artifact}.",
    "Incident: {service} latency spiked in {env} after {cause}.",
    "The user dislikes {style} explanations when discussing {topic}.",
    "Travel plan: {person} goes to {place} {when} for {topic}.",
]
_SLOTS = {
    "lang": "Python Go Rust TypeScript Kotlin Swift Java Ruby Elixir C++ Scala Haskell".split(),
    "task": [
        "data scripts",
        "web backends",
        "mobile apps",
        "CLI tools",
        "ETL jobs",
        "infra code",
        "unit tests",
        "notebooks",
        "game prototypes",
        "embedded firmware",
    ],
    "style": ["concise", "detailed", "step-by-step", "formal", "casual", "bullet-point"],
    "service": [
        "billing",
        "search",
        "auth",
        "payments",
        "notifications",
        "ingest",
        "reporting",
        "checkout",
        "inventory",
        "gateway",
        "scheduler",
        "media",
    ],
    "env": ["staging", "production", "the EU region", "the test cluster", "on-prem", "dev"],
    "cause": [
        "a missing environment variable",
        "an expired certificate",
        "a schema migration",
        "a memory leak",
        "DNS misconfiguration",
        "a full disk",
        "a bad feature flag",
        "connection pool exhaustion",
    ],
    "fix": [
        "rolling back",
        "adding a retry",
        "raising the timeout",
        "pinning the version",
        "rotating the key",
        "adding an index",
        "scaling out",
        "clearing the cache",
    ],
    "tool": [
        "Terraform",
        "Ansible",
        "Docker",
        "Kubernetes",
        "Celery",
        "Airflow",
        "pytest",
        "Grafana",
        "Sentry",
        "PostgreSQL",
        "Redis",
        "Kafka",
    ],
    "project": [
        "lunest-ios",
        "atlas",
        "orion",
        "hermes",
        "zephyr",
        "nova",
        "cobalt",
        "quartz",
        "helios",
        "tundra",
    ],
    "artifact": [
        "generated files",
        "the lockfile",
        "vendored code",
        "migration files",
        "the CHANGELOG",
        "protobuf stubs",
        "the worker pool",
        "the nginx config",
    ],
    "person": ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Giulia", "Hiro", "Ines", "Jon"],
    "topic": [
        "the Q3 roadmap",
        "hiring",
        "the budget",
        "the database upgrade",
        "onboarding",
        "the security audit",
        "pricing",
        "the offsite",
        "vacation days",
        "the API redesign",
    ],
    "when": [
        "next Monday",
        "in the mornings",
        "after lunch",
        "every Friday",
        "next quarter",
        "at the end of the month",
        "tomorrow",
        "in two weeks",
        "late at night",
    ],
    "place": ["Berlin", "Lisbon", "Nairobi", "Osaka", "Toronto", "Austin", "Warsaw", "Lima"],
}


@dataclass(frozen=True)
class CorpusSpec:
    """What identifies a corpus: same spec, same rows (and the same database name)."""

    memories: int
    tenants: int
    seed: int = 7
    sample: int = 2000
    noise: float = 0.025
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    version: int = CORPUS_VERSION

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass
class CorpusStats:
    """What building a corpus cost, stage by stage."""

    rows: int = 0
    tenants: int = 0
    subjects: int = 0
    seconds: dict = field(default_factory=dict)
    embedding: str = ""
    table_mb: float = 0.0
    toast_mb: float = 0.0
    hnsw_mb: float = 0.0


def maintenance_mb(memories: int) -> int:
    """maintenance_work_mem for building the HNSW graph over ``memories`` 384-d rows in RAM."""
    return min(6144, max(256, memories * 3 // 1024))


def allocate(total: int, weights: np.ndarray) -> np.ndarray:
    """Split ``total`` into integer parts proportional to ``weights``, each at least 1."""
    count = len(weights)
    if total < count:
        raise ValueError(f"cannot give {count} parts at least 1 of {total}")
    shares = weights / weights.sum()
    sizes = np.maximum(1, np.floor(shares * total)).astype(np.int64)
    remainder = total - int(sizes.sum())
    order = np.argsort(-shares, kind="stable")
    i = 0
    while remainder != 0:
        j = order[i % count]
        if remainder > 0:
            sizes[j] += 1
            remainder -= 1
        elif sizes[j] > 1:
            sizes[j] -= 1
            remainder += 1
        i += 1
    return sizes


def zipf_weights(count: int, s: float = 1.0) -> np.ndarray:
    return 1.0 / np.arange(1, count + 1, dtype=np.float64) ** s


def tenant_sizes(spec: CorpusSpec) -> np.ndarray:
    """Rows per tenant, largest first (rank 1 = index 0)."""
    return allocate(spec.memories, zipf_weights(min(spec.tenants, spec.memories)))


def subject_sizes(tenant_rows: int) -> np.ndarray:
    """Rows per subject of a tenant with ``tenant_rows`` rows, largest first."""
    count = max(1, -(-tenant_rows // ROWS_PER_SUBJECT))
    return allocate(tenant_rows, zipf_weights(count))


def bucket_tenants(spec: CorpusSpec, per_bucket: int = 5) -> dict[str, list[int]]:
    """Tenant ranks (1-based) whose share of rows is nearest each bucket's share."""
    sizes = tenant_sizes(spec)
    shares = sizes / sizes.sum()
    result = {}
    for label, target in BUCKETS.items():
        distance = np.abs(np.log(shares / target))
        near = [int(i) for i in np.argsort(distance, kind="stable") if distance[i] < np.log(1.25)]
        chosen = near[:per_bucket] or [int(np.argmin(distance))]
        result[label] = [i + 1 for i in chosen]
    return result


def sample_texts(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct memory-like sentences from the templates."""
    texts: list[str] = []
    seen: set[str] = set()
    attempts = 0
    while len(texts) < count:
        attempts += 1
        template = _TEMPLATES[int(rng.integers(len(_TEMPLATES)))]
        values = {name: words[int(rng.integers(len(words)))] for name, words in _SLOTS.items()}
        text = template.format(**values)
        if text in seen:
            if attempts > count * 50:
                text = f"{text} (variant {attempts})"
            else:
                continue
        seen.add(text)
        texts.append(text)
    return texts


def query_texts(count: int, seed: int) -> list[str]:
    """Fresh query sentences (not in the corpus), deterministic for ``seed``."""
    rng = np.random.default_rng(seed + 1_000_003)
    prefixes = ["What do we know about: ", "Remind me: ", "Context for the task: ", ""]
    return [
        prefixes[int(rng.integers(len(prefixes)))] + text.rstrip(".").lower()
        for text in sample_texts(count, rng)
    ]


def synthetic_vectors(
    anchors: np.ndarray, picks: np.ndarray, noise: float, rng: np.random.Generator
) -> np.ndarray:
    """Unit vectors: the picked anchors plus Gaussian noise, renormalised."""
    vectors = anchors[picks] + rng.standard_normal((len(picks), anchors.shape[1])).astype(
        np.float32
    ) * np.float32(noise)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def _uuids(rng: np.random.Generator, count: int) -> list[uuid.UUID]:
    raw = rng.bytes(16 * count)
    return [uuid.UUID(bytes=raw[i * 16 : (i + 1) * 16], version=4) for i in range(count)]


MEMORY_COLUMNS = [
    ("id", "uuid"),
    ("tenant_id", "uuid"),
    ("subject_id", "uuid"),
    ("memory_class", "text"),
    ("memory_type", "text"),
    ("memory_key", "text"),
    ("scope_kind", "text"),
    ("scope_ref", "text"),
    ("session_id", "text"),
    ("task_id", "text"),
    ("content", "text"),
    ("source_type", "text"),
    ("source_conversation_id", "text"),
    ("source_message_id", "text"),
    ("source_tool", "text"),
    ("authority", "text"),
    ("confidence", "float8"),
    ("consent", "text"),
    ("sensitivity", "text"),
    ("valid_from", "timestamptz"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
    ("status", "text"),
    ("version", "int4"),
    ("content_hash", "text"),
    ("embedding", "vector"),
    ("embedding_model", "text"),
]


def corpus_state(conn) -> dict | None:
    """Return the recorded spec and stats of the corpus in ``conn``'s database, if complete."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS bench_corpus (id int PRIMARY KEY, spec jsonb NOT NULL, "
        "stats jsonb NOT NULL, completed_at timestamptz)"
    )
    row = conn.execute(
        "SELECT spec, stats FROM bench_corpus WHERE id = 1 AND completed_at IS NOT NULL"
    ).fetchone()
    conn.commit()
    return {"spec": row[0], "stats": row[1]} if row else None


def build_corpus(
    conn,
    spec: CorpusSpec,
    *,
    embed,
    model_name: str,
    app_role: str,
    log=print,
    chunk: int = 20_000,
) -> CorpusStats:
    """Fill the (migrated, benchmark) database behind ``conn`` with the corpus of ``spec``.

    ``embed(texts) -> list[list[float]]`` is the real embedder and ``model_name`` its name,
    recorded on every row (``embedding_model``). ``conn`` is a psycopg
    connection (not autocommit) with pgvector's adapters registered; ``app_role`` the
    application role that must read ``bench_ann``.
    """
    stats = CorpusStats(
        embedding=f"real model ({model_name}) for {spec.sample} sample texts; "
        f"bulk = sample vector + N(0, {spec.noise}^2) per dim, renormalised"
    )
    rng = np.random.default_rng(spec.seed)
    started = time.perf_counter()

    sample_count = min(spec.sample, spec.memories)
    texts = sample_texts(sample_count, rng)
    anchors = np.asarray(embed(texts), dtype=np.float32)
    stats.seconds["embed_sample"] = round(time.perf_counter() - started, 2)
    log(f"embedded {sample_count} sample texts in {stats.seconds['embed_sample']} s")

    t_sizes = tenant_sizes(spec)
    tenant_ids = _uuids(rng, len(t_sizes))
    now = datetime.now(tz=UTC)

    # Row layout: (tenant index, subject uuid) per row, then shuffled (interleaved arrival).
    row_tenant = np.empty(spec.memories, dtype=np.int32)
    row_subject = np.empty(spec.memories, dtype=np.int64)
    subjects: list[tuple[uuid.UUID, int, int]] = []  # (id, tenant index, rank in tenant)
    position = 0
    for t_index, t_rows in enumerate(t_sizes):
        s_sizes = subject_sizes(int(t_rows))
        for s_rank, s_rows in enumerate(s_sizes):
            row_tenant[position : position + s_rows] = t_index
            row_subject[position : position + s_rows] = len(subjects)
            subjects.append((None, t_index, s_rank + 1))
            position += int(s_rows)
    subject_ids = _uuids(rng, len(subjects))
    order = rng.permutation(spec.memories)
    row_tenant, row_subject = row_tenant[order], row_subject[order]

    with conn.cursor() as cur:
        cur.execute("SET session_replication_role = replica")  # no FK/chain triggers: see doc
        # The HNSW graph must fit in maintenance_work_mem or the build slows down a lot.
        cur.execute(f"SET maintenance_work_mem = '{maintenance_mb(spec.memories)}MB'")
        cur.execute("TRUNCATE memory_core_tenant CASCADE")
        cur.execute("DROP TABLE IF EXISTS bench_ann")
        cur.execute("DELETE FROM bench_corpus")
        t0 = time.perf_counter()
        with cur.copy(
            "COPY memory_core_tenant (id, slug, name, created_at) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["uuid", "text", "text", "timestamptz"])
            for rank, tenant_id in enumerate(tenant_ids, start=1):
                slug = TENANT_SLUG.format(rank=rank)
                copy.write_row((tenant_id, slug, f"Bench tenant {rank}", now))
        with cur.copy(
            "COPY memory_core_subject (id, tenant_id, external_id, display_name, created_at) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["uuid", "uuid", "text", "text", "timestamptz"])
            for (_, t_index, s_rank), subject_id in zip(subjects, subject_ids, strict=True):
                copy.write_row((subject_id, tenant_ids[t_index], f"s{s_rank}", "", now))
        stats.seconds["copy_tenants_subjects"] = round(time.perf_counter() - t0, 2)

        type_names = [t[0] for t in TYPE_MIX]
        type_p = np.array([t[1] for t in TYPE_MIX])
        status_names = [s[0] for s in STATUS_MIX]
        status_p = np.array([s[1] for s in STATUS_MIX])
        type_meta = {t[0]: t for t in TYPE_MIX}
        t0 = time.perf_counter()
        columns = ", ".join(name for name, _ in MEMORY_COLUMNS)
        with cur.copy(
            f"COPY memory_core_memory ({columns}) FROM STDIN (FORMAT BINARY)"  # noqa: S608
        ) as copy:
            copy.set_types([kind for _, kind in MEMORY_COLUMNS])
            for start in range(0, spec.memories, chunk):
                stop = min(start + chunk, spec.memories)
                count = stop - start
                picks = rng.integers(0, sample_count, size=count)
                vectors = synthetic_vectors(anchors, picks, spec.noise, rng)
                ids = _uuids(rng, count)
                types = rng.choice(len(type_names), size=count, p=type_p)
                statuses = rng.choice(len(status_names), size=count, p=status_p)
                ages = rng.integers(0, 365 * 86_400, size=count)
                confidences = np.round(rng.uniform(0.6, 1.0, size=count), 3)
                for i in range(count):
                    row = start + i
                    memory_type = type_names[types[i]]
                    _, _, source_type, authority = type_meta[memory_type]
                    content = f"{texts[picks[i]]} (note {row})"
                    created = now - timedelta(seconds=int(ages[i]))
                    copy.write_row(
                        (
                            ids[i],
                            tenant_ids[row_tenant[row]],
                            subject_ids[row_subject[row]],
                            str(TYPE_CLASS[memory_type]),
                            memory_type,
                            "",
                            "global",
                            "",
                            "",
                            "",
                            content,
                            source_type,
                            "",
                            "",
                            "",
                            authority,
                            float(confidences[i]),
                            "explicit",
                            "personal",
                            created,
                            created,
                            created,
                            status_names[statuses[i]],
                            1,
                            hashlib.sha256(content.encode()).hexdigest(),
                            vectors[i],
                            model_name,
                        )
                    )
                if stop == spec.memories or (stop // chunk) % 10 == 0:
                    log(
                        f"copied {stop}/{spec.memories} memories ({time.perf_counter() - t0:.0f} s)"
                    )
        stats.seconds["copy_memories"] = round(time.perf_counter() - t0, 2)
        conn.commit()

        t0 = time.perf_counter()
        cur.execute(ANN_SQL)
        cur.execute(HNSW_SQL.format(m=spec.hnsw_m, ef=spec.hnsw_ef_construction))
        # The benchmark reads it over the application role's connection.
        cur.execute(sql.SQL("GRANT SELECT ON bench_ann TO {}").format(sql.Identifier(app_role)))
        conn.commit()
        stats.seconds["build_baseline_hnsw"] = round(time.perf_counter() - t0, 2)
        log(f"post-filter baseline's HNSW index built in {stats.seconds['build_baseline_hnsw']} s")
        # Steady state, as autovacuum would leave it: hint bits set, visibility map filled.
        t0 = time.perf_counter()
        conn.autocommit = True
        cur.execute("VACUUM (FREEZE, ANALYZE) memory_core_memory")
        cur.execute("VACUUM ANALYZE bench_ann")
        cur.execute("ANALYZE memory_core_tenant, memory_core_subject")
        conn.autocommit = False
        stats.seconds["vacuum_analyze"] = round(time.perf_counter() - t0, 2)
        stats.rows = spec.memories
        stats.tenants = len(tenant_ids)
        stats.subjects = len(subjects)
        stats.table_mb = round(
            cur.execute("SELECT pg_table_size('memory_core_memory')").fetchone()[0] / 2**20, 1
        )
        stats.toast_mb = round(
            cur.execute(
                "SELECT pg_relation_size(reltoastrelid) FROM pg_class "
                "WHERE relname = 'memory_core_memory'"
            ).fetchone()[0]
            / 2**20,
            1,
        )
        stats.hnsw_mb = round(
            cur.execute("SELECT pg_relation_size('bench_ann_hnsw')").fetchone()[0] / 2**20,
            1,
        )
        stats.seconds["total"] = round(time.perf_counter() - started, 2)
        cur.execute(
            "INSERT INTO bench_corpus (id, spec, stats, completed_at) VALUES (1, %s, %s, now())",
            [json.dumps(asdict(spec)), json.dumps(asdict(stats))],
        )
        cur.execute("RESET session_replication_role")
    conn.commit()
    return stats
