"""Readings no text can make backtrack: stop 59's audit of stop 58's changes found that a run
of underscores before two word characters stalled admission. ``normalize._SPACED_LETTERS``
(``(?:\\w[SEP]{1,3}){2,}\\w``) had "_" both as a word character and as a separator, so a run
of them that could not end the match was tried in every split (36 underscores 0.07 s, 40 about
0.5 s, each four more about 5 times as long; 60 about ten minutes). A letter is a word
character but "_" now. Run in a subprocess with a bound far above the milliseconds one write
takes, so that a return of the backtracking fails the test instead of hanging the suite."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django
    django.setup()
    from django.utils import timezone
    from memory_core.admission.corpus import CORPUS_GRANT, DEFAULT_POLICY, _candidate
    from memory_core.admission.policy import AdmissionContext, admit
    context = AdmissionContext(
        now=timezone.now(), policy=DEFAULT_POLICY, policy_version=1, recent_texts=[]
    )
    admit(_candidate({"content": "warm up"}), CORPUS_GRANT, context)
    started = time.perf_counter()
    decision = admit(
        _candidate({"content": "Signature line " + "_" * 60 + "ab"}), CORPUS_GRANT, context
    )
    print(decision.outcome, round(time.perf_counter() - started, 3))
    """
)


def test_a_content_with_sixty_underscores_before_a_word_is_admitted_in_seconds():
    """One content of 77 characters is decided in well under a second (p95 is about 0.6 ms,
    docs/security.md); it was still being read after 30 s, a worker's CPU pinned."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        finished = None
    else:
        finished = done.stdout.strip() or done.stderr[-2000:]
    assert finished is not None, "admission of one 77-character content took more than 30 s"
