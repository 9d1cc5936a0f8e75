"""Smoke tests of the benchmarks: the corpus generator's shape, and a tiny end-to-end run.

Real measurements are long and belong to the management commands (docs/performance.md); these
only prove the code paths work and the report has the documented keys.
"""

import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from memory_core.benchmarks import database
from memory_core.benchmarks.corpus import (
    CorpusSpec,
    allocate,
    bucket_tenants,
    sample_texts,
    subject_sizes,
    synthetic_vectors,
    tenant_sizes,
)
from memory_core.benchmarks.measure import percentiles, recall
from memory_core.benchmarks.setup import measure_as_production
from memory_core.management.commands.bench_ingest import INGEST_DB
from memory_core.models import Tenant

ROOT = Path(__file__).resolve().parents[2]


def test_zipf_sizes_add_up_and_fall_with_rank():
    spec = CorpusSpec(memories=500, tenants=20)
    sizes = tenant_sizes(spec)
    assert sizes.sum() == 500 and len(sizes) == 20
    assert (sizes >= 1).all() and (np.diff(sizes) <= 0).all()
    assert sizes[0] > 4 * sizes[-1]
    subjects = subject_sizes(int(sizes[0]))
    assert subjects.sum() == sizes[0] and (subjects >= 1).all()
    assert allocate(10, np.ones(10)).tolist() == [1] * 10


def test_buckets_pick_tenants_nearest_their_share():
    spec = CorpusSpec(memories=1_000_000, tenants=10_000)
    buckets = bucket_tenants(spec)
    assert buckets["10%"] == [1]
    shares = tenant_sizes(spec) / 1_000_000
    for label, target in (("1%", 0.01), ("0.1%", 0.001)):
        for rank in buckets[label]:
            assert target / 1.25 < shares[rank - 1] < target * 1.25


def test_sample_texts_are_distinct_and_vectors_unit_length():
    rng = np.random.default_rng(1)
    texts = sample_texts(500, rng)
    assert len(set(texts)) == 500
    anchors = rng.standard_normal((5, 384)).astype(np.float32)
    anchors /= np.linalg.norm(anchors, axis=1, keepdims=True)
    vectors = synthetic_vectors(anchors, np.array([0, 1, 2, 3, 4] * 100), 0.025, rng)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors[:5] * anchors).sum(axis=1)
    assert (cosines > 0.8).all() and (cosines < 0.99).all()


def test_recall_and_percentiles():
    assert recall(["a", "b"], ["a", "c"], 10) == 0.5
    assert recall([], [], 10) == 1.0
    p = percentiles([float(i) for i in range(1, 101)])
    assert (p["p50_ms"], p["p95_ms"], p["p99_ms"]) == (50.0, 95.0, 99.0)


def test_bench_database_names_are_fenced():
    assert database.check_name("memledger_bench_500_5_s7")
    for name in ("memledger", "test_memledger", "test_perf", "memledger_bench_x; drop"):
        with pytest.raises(database.BenchDatabaseError):
            database.check_name(name)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_tiny_bench_run_and_request_breakdown_report_the_documented_keys(tmp_path):
    out, parts_out, list_out, ab_out, split_out, index_out, postings_out = (
        tmp_path / f"{n}.json"
        for n in ("bench", "parts", "list", "ab", "split", "index", "postings")
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    name = database.bench_database_name(memories=300, tenants=5, seed=4242)
    try:
        subprocess.run(
            [sys.executable, "manage.py", "bench_retrieval", "--memories", "300",
             "--tenants", "5", "--seed", "4242", "--sample", "60", "--queries", "6",
             "--concurrency", "2", "--workers", "1", "--http-seconds", "20",
             "--json", str(out)],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=170,
        )  # fmt: skip
        # The request breakdown runs on the same corpus (scripts/request_breakdown.py).
        subprocess.run(
            [sys.executable, "scripts/request_breakdown.py", "--memories", "300",
             "--tenants", "5", "--seed", "4242", "--queries", "6", "--rounds", "1",
             "--json", str(parts_out)],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        # The statement against another checkout's, here this one's (scripts/statement_ab.py).
        subprocess.run(
            [sys.executable, "scripts/statement_ab.py", "--memories", "300", "--tenants", "5",
             "--seed", "4242", "--queries", "6", "--rounds", "1", "--other", str(ROOT),
             "--json", str(ab_out)],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        # The large-subject probes, on the corpus's six queries: the stores split over two
        # connections, through indexes of a subject's own, and from lexeme postings.
        for script, extra, script_out in (
            ("split_stores_cost.py", (), split_out),
            ("large_subject_index_cost.py", ("--inserts", "3"), index_out),
            ("lexeme_postings_cost.py", ("--inserts", "3"), postings_out),
        ):
            subprocess.run(
                [sys.executable, f"scripts/{script}", "--memories", "300", "--tenants", "5",
                 "--seed", "4242", "--queries", "6", "--min-rows", "1", "--rounds", "1",
                 *extra, "--json", str(script_out)],
                cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
            )  # fmt: skip
        left = subprocess.run(
            [sys.executable, "-c", _PROBE_INDEXES.format(name=name)],
            cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        # And the memory list's cost (scripts/list_cost.py).
        subprocess.run(
            [sys.executable, "scripts/list_cost.py", "--memories", "300", "--tenants", "5",
             "--seed", "4242", "--rounds", "1", "--offsets", "0,10", "--json", str(list_out)],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    finally:
        subprocess.run(
            [sys.executable, "-c", _DROP.format(name=name)], cwd=ROOT, env=env, check=False
        )
    listed = json.loads(list_out.read_text())
    assert 0 < listed["tenant_memories"] <= 300 and listed["rounds"] == 1
    assert all(
        listed[key] > 0 for key in ("page_at_0_ms", "page_at_10_ms", "count_ms", "subject_page_ms")
    )
    assert 0 < listed["subject_memories"] <= listed["tenant_memories"]
    assert listed["subject_page_statement"]["buffers"] > 0
    assert listed["cursor_page_at_0_ms"] > 0 and listed["cursor_page_at_10_ms"] > 0
    assert listed["cursor_matches_offset"] is True
    indexed = json.loads(index_out.read_text())
    assert indexed["queries"] == 6 and indexed["rounds"] == 1
    assert {
        "whole",
        "stats",
        "gin_fulltext",
        "gin_fulltext_steered",
        "gin_fulltext_forced",
        "ann_vector_ef40",
    } <= set(indexed["ms"])
    assert all(figures["median"] > 0 for figures in indexed["ms"].values())
    assert set(indexed["recall_at_10"]) == {"ef40", "ef100"}
    # Given the statement's own statistics, the full-text store ranks as the statement's does.
    assert indexed["fulltext_same_ranks"] == indexed["forced_same_ranks"] == 6
    assert indexed["steered_same_ranks"] == 6
    assert indexed["insert_ms"]["with"]["median"] > 0
    # every index, statistics object and table the probes made is dropped
    assert left.stdout.strip() == "0"
    postings = json.loads(postings_out.read_text())
    assert postings["queries"] == 6 and postings["rounds"] == 1 and postings["postings"] > 0
    assert set(postings["ms"]) == {
        "whole",
        "whole_postings",
        "stats",
        "fulltext_heap",
        "fulltext_postings",
        "visit_heap",
        "visit_covering",
        "copy_as_built",
        "copy_indexed",
    }
    assert all(figures["median"] > 0 for figures in postings["ms"].values())
    # From the postings, under row-level security, the same ranks and the same statement rows;
    # from the covering index, the same count and vector ranks as from the heap; from both
    # together, on the copy, the rows of the statement as built on the memory table.
    assert postings["same_ranks"] == {
        "fulltext_heap": 6,
        "fulltext_postings": 6,
        "whole_postings": 6,
        "visit_covering": 6,
        "copy_indexed": 6,
    }
    assert postings["covering_mb"] > 0
    assert "Index Cond" in postings["plans"]["fulltext_postings"]
    assert postings["insert_ms"]["per_memory"] > 0
    split = json.loads(split_out.read_text())
    assert split["queries"] == 6 and split["rounds"] == 1
    assert set(split["ms"]) == {"single", "vector", "fulltext", "split"}
    assert all(figures["n"] == 6 and figures["median"] > 0 for figures in split["ms"].values())
    compared = json.loads(ab_out.read_text())["statement"]
    assert {version: compared[version]["n"] for version in compared} == {"this": 6, "other": 6}
    assert all(compared[version]["p50_ms"] > 0 for version in compared)
    parts = json.loads(parts_out.read_text())["parts"]
    assert parts["request"]["n"] == 6 and parts["candidate_statement"]["n"] == 6
    for name in ("api_key", "pipeline", "embed_query", "trace_insert", "commit", "render"):
        assert 0 < parts[name]["p50_ms"] < parts["request"]["p95_ms"], name
    report = json.loads(out.read_text())
    assert report["memories"] == 300 and report["tenants"] == 5
    for key in ("p50_ms", "p95_ms"):
        assert report["embedding_only"][key] > 0
    for key in ("p50_ms", "p95_ms", "p99_ms"):
        assert report["in_process"][key] > 0
        assert report["http"][key] > 0
    assert report["http"]["concurrency"] == 2 and report["http"]["rps"] > 0
    # Which requests set the tail: every answered request counted in its bucket, and the
    # slowest named with the size of the subject it read.
    for run in (report["http_single"], report["http"]):
        assert sum(figures["n"] for figures in run["by_bucket"].values()) == run["n"] == 6
        slowest = [request["ms"] for request in run["slowest"]]
        assert len(slowest) == 5 and slowest == sorted(slowest, reverse=True)
        assert slowest[0] == run["p99_ms"] and all(r["subject_rows"] > 0 for r in run["slowest"])
    assert set(report["recall_at_10"]) == {"0.1%", "1%", "10%"}
    assert 0 <= report["filled_share"] <= 1
    assert set(report["baseline_postfilter"]) >= {"recall_at_10", "filled_share"}
    assert report["stages"]["embed_query_ms"]["n"] == 6
    assert report["in_process"]["debug"] is False
    assert report["worker_rss_mb"] > 50
    # Which vectors: the configured model and precision (int8 by default: one text a call).
    precision = settings.MEMLEDGER_EMBEDDER["PRECISION"]
    assert report["embedder"] == {
        "model_name": "all-MiniLM-L6-v2" + ("-int8" if precision == "int8" else ""),
        "precision": precision,
        "batch_size": 1 if precision == "int8" else 16,
    }


_PROBE_INDEXES = (
    "import django; django.setup(); "
    "from memory_core.benchmarks.database import connect; "
    "conn = connect('{name}'); "
    'print(conn.execute("SELECT (SELECT count(*) FROM pg_indexes WHERE indexname LIKE '
    "'probe_%') + (SELECT count(*) FROM pg_statistic_ext WHERE stxname LIKE 'probe_%') "
    "+ (SELECT count(*) FROM pg_tables WHERE tablename LIKE 'probe_%')\")"
    ".fetchone()[0])"
)
_DROP = (
    "import django, os; django.setup(); "
    "from memory_core.benchmarks.database import drop_database; drop_database('{name}')"
)


def test_benchmarks_measure_with_debug_off(settings):
    settings.DEBUG = True  # the local settings' default
    assert connection.queries_logged
    measure_as_production()
    assert not settings.DEBUG and not connection.queries_logged


RETRIEVAL = ["--memories", "1000", "--tenants", "10"]


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("bench_retrieval", [*RETRIEVAL, "--queries", "0"], "--queries: must be at least 1, not 0"),
        ("bench_retrieval", [*RETRIEVAL, "--concurrency", "-2"], "--concurrency: must be at"),
        ("bench_retrieval", [*RETRIEVAL, "--http-seconds", "nan"], "--http-seconds: must be"),
        ("bench_retrieval", ["--memories", "ten", "--tenants", "1"], "'ten' is not a whole number"),
        ("bench_retrieval", ["--memories", "100", "--tenants", "200"], "must not exceed"),
        ("bench_ingest", ["--single", "0"], "--single: must be at least 1, not 0"),
        ("bench_ingest", ["--batch-size", "101"], "--batch-size must be at most 100"),
        ("bench_ingest", ["--base-memories", "1000"], "--base-tenants go together"),
        (
            "bench_ingest",
            ["--base-memories", "1000", "--base-tenants", "3"],
            "memledger_bench_1000_3_s7 does not exist",
        ),
        # Past what PostgreSQL's setting holds, or the corpus's database name: both failed
        # after the corpus was built, in a traceback (stop 49's audit).
        ("bench_retrieval", [*RETRIEVAL, "--statement-timeout-ms", "2147483648"],
         "--statement-timeout-ms: must be at most 2147483647"),
        ("bench_retrieval", [*RETRIEVAL, "--seed", "1" * 35], "--seed: must be at most"),
        ("bench_ingest", ["--seed", "1" * 35], "--seed: must be at most"),
    ],
)  # fmt: skip
@pytest.mark.django_db
def test_bad_arguments_are_refused_before_any_work(command, args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command(command, *args)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("bench_retrieval", ["--memories", str(10**41), "--tenants", "1", "--build-only"]),
        ("bench_ingest", ["--base-memories", str(10**41), "--base-tenants", "1"]),
    ],
)
@pytest.mark.django_db
def test_a_corpus_size_its_database_name_cannot_hold_is_refused(command, args):
    """``--memories`` (``bench_ingest``: ``--base-memories``) had no upper bound: a size whose
    ``memledger_bench_<N>_<T>_s<seed>`` was past the 40 characters ``check_name`` allows
    ended in a BenchDatabaseError traceback, not the usage error ``--seed`` gets (stop 56's
    audit of the benchmarks)."""
    with pytest.raises(CommandError, match="longer than a benchmark database's name may be"):
        call_command(command, *args, stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate", "0"], "--rate: must be a finite number above 0 per second, not 0"),
        (["--rate", "-5"], "--rate: must be a finite number above 0 per second, not -5"),
        (["--rate", "nan"], "--rate: must be a finite number above 0 per second, not nan"),
        (["--rate", "inf"], "--rate: must be a finite number above 0 per second, not inf"),
        (["--concurrency", "0"], "--concurrency: must be at least 1, not 0"),
        (["--timeout", "-1"], "--timeout: must be above 0 seconds, not -1"),
        (["--operations", "0"], "--operations: must be at least 1, not 0"),
    ],
)
@pytest.mark.django_db
def test_bench_deletion_refuses_a_rate_that_is_no_rate_before_it_seeds_anything(args, message):
    """``--rate 0`` seeded the bench tenant (memories, events, traces, export files and an
    evaluation file every later deletion reads), started a worker, then died in
    ``ZeroDivisionError`` with all of it left behind (the command runs in autocommit);
    ``--rate -5`` or ``nan`` ran flat out and reported "steady, -5 requests/s". The rate,
    the worker's concurrency and the timeout are checked by their types, before the seeding."""
    eval_dir = Path(settings.MEMLEDGER_EVAL_DATA_DIRS[0])
    before = set(eval_dir.glob("bench-*.json"))
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("bench_deletion", "--operations", "1", *args)
    assert not Tenant.objects.filter(slug__startswith="bench-").exists()
    assert set(eval_dir.glob("bench-*.json")) == before


@pytest.mark.django_db
def test_bench_deletion_that_fails_after_seeding_leaves_nothing_behind(monkeypatch):
    """A run that failed after seeding (here its own Celery worker exiting at start, as a
    broken broker URL or a missing dependency makes it; a Ctrl-C or a failing step alike) left
    the bench tenant, its memories, events, traces and export files, and the evaluation file
    every later deletion's evaluation step reads: ``handle`` called ``_cleanup`` only after a
    run that succeeded, and the worker's failure was a ``WorkerError`` traceback (stop 56's
    audit of the commands)."""
    from memory_core.deletion.worker import WorkerError, WorkerProcess

    # Restored afterwards: the command turns DEBUG off and points tasks at its own queue.
    monkeypatch.setattr(settings, "DEBUG", settings.DEBUG)
    monkeypatch.setattr(settings, "CELERY_TASK_DEFAULT_QUEUE", settings.CELERY_TASK_DEFAULT_QUEUE)
    monkeypatch.setattr(settings, "CELERY_BROKER_URL", "filesystem://")  # no ping: own worker
    eval_dir = Path(settings.MEMLEDGER_EVAL_DATA_DIRS[0])
    before = set(eval_dir.glob("bench-*.json"))

    def failing_start(self, timeout=90.0):
        raise WorkerError("worker exited at start: (simulated)")

    monkeypatch.setattr(WorkerProcess, "start", failing_start)
    try:
        with pytest.raises(CommandError, match="worker did not start"):
            call_command("bench_deletion", "--operations", "2", stdout=StringIO())
    finally:
        left = set(eval_dir.glob("bench-*.json")) - before
        for path in left:  # never left to the other tests
            path.unlink()
    assert not Tenant.objects.filter(slug__startswith="bench-").exists()
    assert not left, sorted(map(str, left))


@pytest.mark.parametrize(
    "script", ["request_breakdown.py", "probe_first_request.py", "list_cost.py"]
)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--memories", "100", "--tenants", "1", "--seed", "987654"], "does not exist: build it"),
        (["--memories", "99", "--tenants", "1"], "--memories: must be at least 100, not 99"),
    ],
)
def test_the_scripts_refuse_a_corpus_that_is_not_built_or_out_of_range(script, args, message):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, f"scripts/{script}", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and message in done.stderr, done.stderr[-500:]


def test_the_statement_ab_script_refuses_another_checkout_that_is_not_one(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "scripts/statement_ab.py", "--memories", "100", "--tenants", "1",
         "--other", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "--other names a checkout" in done.stderr, done.stderr[-500:]


@pytest.mark.django_db
def test_the_deletion_request_cost_is_measured_and_leaves_nothing_behind():
    """scripts/deletion_request_cost.py (operations.md, "Scaling"): a real request over a
    subject of N memories, timed, then rolled back."""
    import importlib.util

    from memory_core.models import DeletionOperation, Memory, Tenant

    spec = importlib.util.spec_from_file_location(
        "deletion_request_cost", ROOT / "scripts" / "deletion_request_cost.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    before = (Tenant.objects.count(), DeletionOperation.objects.count())
    result = script.measure(120)
    assert (result["memories"], result["deleted"]) == (120, 120)
    assert 0 < result["commit_checks_s"] < result["sql_s"] <= result["request_s"]
    assert any("UPDATE" in row["sql"] for row in result["slowest_statements"])
    assert (Tenant.objects.count(), DeletionOperation.objects.count()) == before
    assert not Memory.objects.filter(embedding_model="scratch").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_tiny_ingest_run_warms_up_as_a_web_worker_and_reports_the_documented_keys(tmp_path):
    """The first single write paid the process's cold start, ~0.5 s (the model's first run,
    the guards' indexes), which a web worker pays at import instead (config/wsgi.py): stop
    44's single writes were 74.8 /s with it and 110.8 /s without (docs/performance.md)."""
    out = tmp_path / "ingest.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    try:
        subprocess.run(
            [sys.executable, "manage.py", "bench_ingest", "--memories", "20", "--batch-size",
             "10", "--single", "5", "--probes", "2", "--json", str(out)],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=170,
        )  # fmt: skip
    finally:  # its own database (memledger_bench_ingest), which keeps what it wrote
        subprocess.run(
            [sys.executable, "-c", _DROP.format(name=INGEST_DB)], cwd=ROOT, env=env, check=False
        )
    report = json.loads(out.read_text())
    assert set(report["warm_up_ms"]) == {"embedder_ms", "admission_ms", "urls_ms"}
    assert report["warm_up_ms"]["admission_ms"] > 0
    single = report["single"]
    assert single["memories"] == 5 and single["n"] == 5
    assert 0 < single["p50_ms"] <= single["max_ms"]
    assert report["batch"]["memories"] == 20 and report["batch"]["memories_per_s"] > 0
    assert report["write_to_retrievable"]["probes"] == 2
    assert report["admission_outcomes"] == {"accepted": 20 + 5}  # the probes are not counted


def test_the_ingest_breakdown_times_each_part_of_the_batches(tmp_path):
    """scripts/ingest_breakdown.py: ``bench_ingest``'s batches with the write service's parts
    timed; in this test's database (its own tenant, deleted after)."""
    out = tmp_path / "parts.json"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "MEMLEDGER_DB_NAME": connection.settings_dict["NAME"],
    }
    subprocess.run(
        [sys.executable, "scripts/ingest_breakdown.py", "--memories", "100", "--json", str(out)],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["memories"] == 100 and report["batch_memories_per_s"] > 0
    parts, calls = report["parts_ms"], report["calls"]
    assert calls["_admit_each"] == 3  # the single write, one batch of 100, the probe
    assert calls["check_content"] == 102
    for part in ("_admit_each", "_store", "memory_insert_rows", "_record"):
        assert 0 < parts[part] < parts["_run"], part
    assert parts["check_content"] < parts["_admit_each"]


def test_the_split_rule_cost_is_measured(tmp_path):
    """scripts/split_rule_cost.py (performance.md, section 16): the joined pairs' cost and the
    share of (rule, reading) pairs the prefilter settles, with more settled by every
    requirement than by the first alone."""
    out = tmp_path / "split.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    subprocess.run(
        [sys.executable, "scripts/split_rule_cost.py", "--texts", "30", "--rounds", "1",
         "--json", str(out)],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["pairs"] == (30 - 5) * 5 and report["ms_per_pair"]["best"] > 0
    settled = report["settled_without_a_regex"]
    assert 0.5 < settled["first_requirement_only"] < settled["every_requirement"] < 1


def test_the_guard_answers_digest_reads_the_corpus_and_the_benchmark_texts(tmp_path):
    """scripts/guard_answers_digest.py (security.md): without LoCoMo's file, the corpus's
    contents and 2,000 benchmark texts, each text and each consecutive pair."""
    out = tmp_path / "digest.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    subprocess.run(
        [sys.executable, "scripts/guard_answers_digest.py", "--locomo", str(tmp_path / "none"),
         "--json", str(out)],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    report = json.loads(out.read_text())
    corpus = ROOT / "tests/security/corpus.jsonl"
    contents = sum(1 for line in corpus.read_text().splitlines() if json.loads(line).get("content"))
    assert report["texts"] == contents + 2000
    assert report["pairs"] == contents - 1 + 1999
    assert report["fired"] > 100 and len(report["sha256"]) == 64


@pytest.mark.django_db
@pytest.mark.timeout(120)
def test_a_probe_never_retrievable_counts_as_the_wait_in_write_to_retrievable():
    """A probe not retrievable within 5 s was left out of the percentiles (counted apart in
    ``not_retrievable_within_5s``): with every probe missing the p95 was null, with half of
    them the others' ~20 ms, and the target read as met (stop 49's audit). Here the writer
    may read none of the types it writes, so no probe comes back."""
    from memory_core.management.commands.bench_ingest import PROBE_WAIT_MS, Command
    from memory_core.models import Agent
    from memory_core.services.api_keys import agent_grant_set

    command = Command()
    principal, _tenant = command._principal()
    agent_grant_set(agent=Agent.objects.get(pk=principal.agent_id), read_types=["user_preference"])
    principal, _tenant = command._principal()
    opts = {"memories": 2, "single": 1, "batch_size": 2, "probes": 1, "seed": 7}
    texts = [f"Bench ingest text number {i} about deploying service {i}." for i in range(8)]
    probes = command._run(principal, texts, opts)["write_to_retrievable"]
    assert probes["not_retrievable_within_5s"] == 1
    assert probes["p95_ms"] == PROBE_WAIT_MS
