"""Benchmarks: a synthetic corpus in a separate database and the measurements run against it.

Nothing here touches the ``memledger`` development database or a test database: the corpus
lives in ``memledger_bench_<N>_<T>_s<seed>`` on the same server (see ``corpus.py``).
"""
