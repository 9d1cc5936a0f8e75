"""What a rate-limited request spends in the limiter, ten slices against one, A/B in one process.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/throttle_cost.py \
        [--requests 2000] [--rounds 6] [--redis redis://127.0.0.1:6379] [--json OUT]

Calls ``ApiKeyRateThrottle.allow_request`` for one key, as every API request does, on the
default cache without Redis (memledger's locking file cache, in a fresh temporary folder) and,
with ``--redis``, on Django's Redis cache. Rounds alternate between the sliding window of
``SLICES`` (10) slices and ``SLICES = 1``, which is a fixed window (the limiter before the
slices: one counter per window, nothing else read), so the machine's drift falls on both
alike. Before each round the key is given a counter in every earlier slice of the window, as
a key busy for the whole period has. The limit is set high enough that every request passes.
Prints the median per request of each round's mean, in microseconds, for each cache and
window.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import at_least  # noqa: E402


def busy_for_a_minute(api_key_id) -> None:
    """Give the key a counter in each of the window's earlier slices, as a key busy for a
    whole period has: the limiter then reads nine counters that exist, not nine misses."""
    from api import throttling

    cache = throttling.counter_cache()
    width = 60 / throttling.SLICES
    current = int(time.time() // width)
    for number in range(current - throttling.SLICES + 1, current):
        cache.set(f"throttle:{throttling.ApiKeyRateThrottle.scope}:{api_key_id}:{number}", 1, 60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=at_least(1), default=2000)
    parser.add_argument("--rounds", type=at_least(2), default=6)
    parser.add_argument("--redis", help="a Redis URL to measure Django's Redis cache too")
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()

    import django

    django.setup()
    from django.test import override_settings

    from api import throttling
    from memory_core.principals import AgentPrincipal

    principal = AgentPrincipal(
        tenant_id=uuid.uuid4(), agent_id=uuid.uuid4(), agent_name="bench", api_key_id=uuid.uuid4()
    )
    folder = tempfile.mkdtemp(prefix="memledger-throttle-")
    backends = {
        "locking file cache": {
            "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
            "LOCATION": folder,
            "OPTIONS": {"MAX_ENTRIES": 5000},
        }
    }
    if opts.redis:
        backends["redis"] = {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": opts.redis,
        }
    rate = f"{10 * opts.requests * opts.rounds}/min"
    report = {"requests": opts.requests, "rounds": opts.rounds, "microseconds_per_request": {}}
    for name, backend in backends.items():
        means = {"10 slices": [], "fixed window": []}
        with override_settings(CACHES={"default": backend}, MEMLEDGER_RATE_LIMIT=rate):
            for round_number in range(opts.rounds * 2):
                label = "10 slices" if round_number % 2 == 0 else "fixed window"
                throttling.SLICES = 10 if label == "10 slices" else 1
                throttle = throttling.ApiKeyRateThrottle()
                busy_for_a_minute(principal.api_key_id)
                started = time.perf_counter()
                for _ in range(opts.requests):
                    request = SimpleNamespace(user=principal)
                    if not throttle.allow_request(request, None):
                        raise SystemExit("a request was refused: the limit is too low")
                elapsed = time.perf_counter() - started
                means[label].append(elapsed / opts.requests * 1e6)
        throttling.SLICES = 10
        report["microseconds_per_request"][name] = {
            label: round(statistics.median(values), 1) for label, values in means.items()
        }
        figures = report["microseconds_per_request"][name]
        print(
            f"{name}: {figures['10 slices']} µs a request with 10 slices, "
            f"{figures['fixed window']} µs with a fixed window (medians of {opts.rounds} rounds "
            f"of {opts.requests})"
        )
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
