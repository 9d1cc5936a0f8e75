"""Argument types of the benchmark commands: a bad number is a usage error, not a report of
nulls (``--queries 0`` used to print a report whose every percentile was null)."""

from __future__ import annotations

import argparse
import math

# PostgreSQL's integer settings (statement_timeout) hold at most this.
PG_INT_MAX = 2**31 - 1
# A seed is part of the corpus's database name, which holds at most 40 characters after
# ``memledger_bench_`` (``benchmarks.database.check_name``): ten digits leave the sizes room.
SEED_MAX = 2**32 - 1


def at_least(minimum: int, most: int | None = None):
    """An argparse type: a whole number no smaller than ``minimum`` (nor larger than
    ``most``: a value the database or the corpus's name cannot hold failed after the corpus
    was built, in a traceback)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most}, not {value}")
        return value

    return parse


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be above 0 seconds, not {text}")
    return value


def positive_rate(text: str) -> float:
    """An argparse type: a finite number of requests per second above zero (a rate of 0 is
    a division by zero, and a negative, NaN or infinite one issued every request at once
    while the report named it as the rate)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of requests per second"
        ) from None
    if not (value > 0 and math.isfinite(value)):  # ``not value > 0`` also refuses nan
        raise argparse.ArgumentTypeError(f"must be a finite number above 0 per second, not {text}")
    return value


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """``--memories``, ``--tenants`` and ``--seed``: the corpus, as ``bench_retrieval`` built it."""
    parser.add_argument("--memories", type=at_least(100), required=True)
    parser.add_argument("--tenants", type=at_least(1), required=True)
    parser.add_argument("--seed", type=at_least(0, SEED_MAX), default=7)


def add_large_subject_arguments(parser: argparse.ArgumentParser, *, rounds: int) -> None:
    """The corpus's arguments, ``--queries``, ``--min-rows`` and ``--rounds``: those of the
    scripts that take the large subjects' statements apart (``setup.large_subjects_of``)."""
    add_corpus_arguments(parser)
    parser.add_argument("--queries", type=at_least(1), default=90)
    parser.add_argument("--min-rows", type=at_least(1), default=5000)
    parser.add_argument("--rounds", type=at_least(1), default=rounds)
