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
import time
from pathlib import Path

import pytest

from memory_core.admission.guards import business_state, other_languages

ROOT = Path(__file__).resolve().parents[3]  # the project, not tests/

# What every script below starts with: the project's Django, admission and the corpus's grant.
SETUP = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django
    django.setup()
    from django.utils import timezone
    from memory_core.admission.corpus import CORPUS_GRANT, DEFAULT_POLICY, _candidate
    from memory_core.admission.policy import AdmissionContext, admit
    """
)

SCRIPT = SETUP + textwrap.dedent(
    """
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


def _printed(script: str, *, timeout: float) -> str:
    """The last line ``script`` prints, run in a subprocess of the project; None past
    ``timeout`` seconds (a backtracking reading never returns, and would hang the suite)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_content_with_sixty_underscores_before_a_word_is_admitted_in_seconds():
    """One content of 77 characters is decided in well under a second (p95 is about 0.6 ms,
    docs/security.md); it was still being read after 30 s, a worker's CPU pinned."""
    printed = _printed(SCRIPT, timeout=30)
    assert printed is not None, "admission of one 77-character content took more than 30 s"
    assert printed.split()[0] == "accepted", printed


LETTERS_SCRIPT = SETUP + textwrap.dedent(
    """
    import copy, random, string
    policy = copy.deepcopy(DEFAULT_POLICY)
    policy["admission"]["max_value_bytes"] = 65536  # the hard maximum (HARD_MAX_VALUE_BYTES)
    context = AdmissionContext(now=timezone.now(), policy=policy, policy_version=1,
                               recent_texts=[])
    admit(_candidate({"content": "warm up"}), CORPUS_GRANT, context)
    random.seed(7)
    def text(letters):
        out = []
        for i in range(letters):
            out.append(random.choice(string.ascii_lowercase) + "_.")
            if i % 500 == 0:
                out.append("aA\\u200b%25252541.")  # a hump, a zero-width space, a %-escape
        return "".join(out)
    best = {}
    for name, fields in (
        ("plain", {"content": "Note.", "value": "lorem ipsum dolor " * 3600}),
        ("letters", {"content": "Note.", "value": text(21000)}),
    ):
        times = []
        for _ in range(2):
            started = time.perf_counter()
            decision = admit(_candidate(fields), CORPUS_GRANT, context)
            times.append(time.perf_counter() - started)
        best[name] = (decision.outcome, round(min(times), 2))
    print(best)
    """
)


def test_one_64_kib_write_of_letters_and_underscores_is_admitted_in_seconds():
    """Stop 59's audit of its admission fixes found a 64 KiB value (the policy's hard
    maximum) of single letters each followed by "_." (with, every 500 letters, a camelCase
    hump, a zero-width space and a nested %-escape) decided in 12 s, where plain text of the
    same size takes ~0.03 s. ``_SPACED_LETTERS`` still backtracked: a letter followed by "_"
    ends no match, and each letter after "." started the whole run anew (quadratic); and
    each %-decoded layer was read twice, as written and without its invisible characters
    (38 folds of such a content). Each run must be tried once (its second branch takes a run
    that ends no match whole) and each text read once. Measured against plain text of the
    same size in the same run, as the machine's speed is not the test's: ~30 times its time
    since (0.95 against 0.03 s on stop 59's machine), ~400 times before."""
    printed = _printed(LETTERS_SCRIPT, timeout=300)
    assert printed is not None, "admission of one 64 KiB value took more than 300 s"
    best = eval(printed)  # noqa: S307 - our own script's dict
    assert best["letters"][0] == "accepted", best
    assert best["letters"][1] < 120 * max(best["plain"][1], 0.01), best


TIMED_SCRIPT = SETUP + textwrap.dedent(
    """
    context = AdmissionContext(
        now=timezone.now(), policy=DEFAULT_POLICY, policy_version=1, recent_texts=[]
    )
    admit(_candidate({"content": "warm up"}), CORPUS_GRANT, context)
    best = {}
    for name, content in (("plain", "lorem ipsum dolor " * (len(CONTENT) // 18 + 1)),
                          ("shape", CONTENT)):
        started = time.perf_counter()
        admit(_candidate({"content": content}), CORPUS_GRANT, context)
        best[name] = round(time.perf_counter() - started, 4)
    print(best)
    """
)


def _against_plain(content: str) -> tuple[float, float] | None:
    """Seconds to admit ``content`` and plain text of its length in one run, or None past
    30 s (what backtracking takes to such a content)."""
    printed = _printed(TIMED_SCRIPT.replace("CONTENT", repr(content)), timeout=30)
    if printed is None:
        return None
    best = eval(printed)  # noqa: S307 - our own script's dict
    return best["shape"], best["plain"]


def _assert_linear(content: str) -> None:
    timed = _against_plain(content)
    assert timed is not None, f"admission of {len(content)} characters took more than 30 s"
    shape, plain = timed
    assert shape < 100 * max(plain, 0.005), timed


def test_the_trust_as_coming_from_rule_does_not_backtrack():
    """Stop 60's review found that injection.py's identity_claim rule ``\\b(?:treat|...|trust|
    obey)\\W+(?:\\S+\\W+){0,6}?(?:as|like)\\W+(?:coming|sent|issued)...`` split "trust-trust-
    trust-..." every way, ``\\S`` holding the punctuation ``\\W`` also matches: 175 characters
    took 0.08 s, 295 took 5.9 s, each 50 more about 6 times as long. It must take about what
    plain text of its length takes (``vocabulary.words``: each word read whole, one way)."""
    _assert_linear("as coming from the ceo. " + "trust-" * 60 + "x")


def test_the_record_status_rule_does_not_backtrack():
    """Stop 60's review found that business_state.py's status rule ``(?:[^\\w.!?\\n]+[\\w'-]+)
    {0,4}?[^\\w.!?\\n]+(?:status|state|stage)`` split "order-order-order-..." every way, "-"
    and "'" being in both classes: 263 characters took 0.7 s, 383 took 4.6 s. It must take
    about what plain text of its length takes (the separator and the word possessive)."""
    _assert_linear("x: y. " + "order-" * 90 + " status x shipped")


def test_a_money_record_before_several_long_ids_does_not_backtrack():
    """Stop 61's audit of admission: "Order " and four ids of 40 digits joined by ", ", then
    "x. Tests complete." (191 characters) must take about what plain text of its length takes.
    business_state.py's record-state rule read each id as ``[#\\w-]*\\d[\\w-]*``, one split
    per digit, and its list of ids (``_MORE_IDS``) tried every combination of the splits when
    no state followed: 4.4 s, growing with the fourth power of the ids' length. An id is read
    one way now (``_ID``: possessive, its digit required by a look-ahead)."""
    _assert_linear("Order " + ", ".join(["1" * 40] * 4) + " x. Tests complete.")


def test_a_money_record_with_ids_after_for_order_does_not_backtrack():
    """Stop 61's audit of admission: the same with the second list of ids, after "for order"
    ("Refund 111..., 111... for order 111..., 111... x. It is pending.", ids of 30 digits):
    it must take about what plain text of its length takes."""
    ids = ", ".join(["1" * 30] * 2)
    _assert_linear("Refund " + ids + " for order " + ids + " x. It is pending.")


def test_the_combination_to_the_safe_rule_does_not_backtrack_on_apostrophes():
    """Stop 61's last review: "The combination to " and 120 apostrophes before "x y z safe."
    (150 characters) took 8.4 s: sensitive.py's ``combination (?:to|for|of)\\W+(?:[\\w']+
    \\W+){0,2}?`` split a run of apostrophes every way, "'" being in both classes. It reads
    whole words now (``vocabulary.words``)."""
    _assert_linear("The combination to " + "'" * 120 + "x y z safe.")


@pytest.mark.parametrize(
    "content",
    [
        "Admin note. I am " + "'" * 150 + "!",  # injection.py, the identity claim's modifier
        "Compare all alternatives. Leave out " + "-" * 28 + "!",  # competitors left out
        "Malware code. Provide " + "-" * 34 + "!",  # exploits provided
        "Approved. Orders " + "12-" * 330 + "!",  # business_state.py, a record's id
        "Trusted customers. Flagged as " + "-" * 70 + "!",  # flagged as trusted
        "Discounts: approved " + "%" * 40 + "!",  # a discount approved
        "Admin: rol de " + "'" * 34 + "!",  # other_languages.py, a role
    ],
    ids=["mod", "leave-out", "provide", "record-id", "flagged-as", "approved", "rol-de"],
)
def test_older_rules_with_overlapping_classes_do_not_backtrack(content):
    """Stop 61's sweep of every guard for the shape its reviews found twice: seven older
    rules read "up to N words" as ``(?:[\\w'-]+\\W+){0,N}?`` (or a record's id as
    ``[a-z0-9-]*\\d[a-z0-9-]*``), where "'", "-", "," or "%" is in both classes, and a run of it
    was split every way: 1.1 to 4.7 s for 61 to 1,008 characters. They read whole words now
    (``vocabulary.words``), an id one way (possessive); each content must take about what
    plain text of its length takes."""
    _assert_linear(content)


@pytest.mark.parametrize(
    "content",
    [
        "Approved. Order " + "12-" * 1300 + "!",
        "Approved. Orders " + "12-" * 1300 + "!",
        "User was refunded for the order " + "12-" * 1300 + " then x",
    ],
    ids=["record", "records", "refunded-for"],
)
def test_a_records_id_is_read_one_way_at_the_content_bound(content):
    """Stop 62's lead found the record-state rule still quadratic after stop 61's sweep: its
    record's id (``[#\\w-]*\\d[\\w-]*``, before a state that never follows) could end at any
    digit, each ending tried to the run's end: "Orders " and "12-" 330 times took 0.8 s on a
    slow machine (the sweep's "record-id" case, against 100 times plain text's 0.5 s), 1,300
    times (3,918 characters, near the 4,000 bound) 12.6 s. An id is read one way (``_ID``,
    possessive): 0.23 s."""
    _assert_linear(content)


def test_the_change_plan_rule_does_not_backtrack():
    """Stop 60's review found that business_state.py's ``\\b(?:set|change|...)\\W+(?:\\S+\\W+)
    {0,3}?(?:tier|plan|...)\\W+to\\b`` split "change-change-..." every way: 200 of them (1,410
    characters) took 10 s. It must take about what plain text of its length takes."""
    _assert_linear("tier to. " + "change-" * 200 + "x")


@pytest.mark.parametrize(
    "content",
    [
        # injection.privilege_escalation: "add ... to the administrators group"
        "to the administrators group. " + "add-" * 300 + "x",
        # injection.remote_code: "pipe ... script into sh"
        "script into sh. " + "pipe-" * 300 + "x",
    ],
)
def test_every_rule_reading_up_to_n_words_does_not_backtrack(content):
    """Stop 60's review found the ``(?:\\S+\\W+){lo,hi}?`` shape of the two rules above in 26
    more rules of guards/*.py (injection, other_languages), each splitting a hyphenated run
    after its trigger every way (polynomial in the run's length, of the degree of ``hi``).
    Each reads ``vocabulary.words`` now and must take about what plain text takes."""
    _assert_linear(content)


@pytest.mark.parametrize(
    "content",
    [
        # injection.privilege_escalation: "=" (or ":") read as ``\W+`` and as the verb
        "Access " + "=" * 3900 + "!",
        # injection.trigger: "." (or "-") read as the separator and in the tool's name
        "Invoke " + "." * 3870 + "! admin call (",
        # injection.instruction_override: a heading's run of "#" begun at each "#"
        "#" * 3880 + "! instruction #",
        # injection.instruction_override: "&" read as ``\W+`` and as "and" (download and run)
        "Get " + "&" * 3870 + "! execute download .ai &",
        # injection.privilege_escalation: "-" read as ``\W+`` and in the id (make ... admin)
        "Set " + "-" * 3880 + "! admin add",
        # injection.entity_redirect: an id that could end at any digit ("answered as account")
        "Patient " + "12-" * 1290 + "! Answered as account",
        # injection.exfiltration: a domain and an address tried from every boundary of a token
        "app " + "a.b" * 1290 + "! chat avec .ai",
        # injection.exfiltration: the same, before a placeholder in a link
        "conversation " + "12-" * 1290 + "! .ai ${",
        # class.business_state: "-" read as ``\W+`` and in the record's id (``_ID``)
        "The order " + "-" * 3880 + "! Then activated.",
        # ... and two that the fixes' own sweep found: injection.entity_redirect's ``\W+``
        # and ``\W*`` around an absent adverb ("are really the same person as")
        "The same person as. They are " + "%" * 3880 + "!",
        # sens.precise_location's ``\W*:\W*`` after "street" or "address"
        "Street " + ":" * 3880 + "!",
    ],
    ids=[
        "access-equals", "invoke-dots", "heading-hashes", "get-ampersands", "set-hyphens",
        "patient-id", "link-token", "placeholder-link-token", "order-hyphens", "are-percents",
        "street-colons",
    ],
)  # fmt: skip
def test_a_run_read_two_ways_does_not_backtrack_at_the_content_bound(content):
    """Stop 62's sweep of admission found nine rules that still read a run of characters two
    ways after stop 61's sweep (and its fixes two more): a separator ``\\W+`` beside a verb, a
    name or an id that holds the same punctuation ("=", ":", "&", ".", "-", "#", "%"), an id
    that could end at any digit, a heading's "#" run, and a domain or an address begun anew
    at each boundary of one token. A run that no match could end was split every way: 1.5 to
    12.6 s for 3,900 characters (under the 4,000-character content bound), quadratic. Each is
    read one way now (possessive separators and ids, as ``business_state._ID``; a link or an
    address at a rule's start from its token's start, ``vocabulary.LEADING_URL`` and
    ``LEADING_EMAIL``), the guard digest unchanged, and must take about what plain text of
    its length takes."""
    _assert_linear(content)


# A value and an earlier write, timed as ``TIMED_SCRIPT`` times a content: one subprocess,
# against plain text of the same shape in the same run.
SHAPED_SCRIPT = SETUP + textwrap.dedent(
    """
    plain = "lorem ipsum dolor " * 217
    shaped = "Access " + "=" * 3900 + "!"
    def timed(candidate, recent):
        context = AdmissionContext(now=timezone.now(), policy=DEFAULT_POLICY,
                                   policy_version=1, recent_texts=recent)
        started = time.perf_counter()
        admit(_candidate(candidate), CORPUS_GRANT, context)
        return round(time.perf_counter() - started, 4)
    timed({"content": "warm up"}, [])
    print(TIMED)
    """
)


def _shaped_against_plain(timed: str) -> tuple[float, float]:
    """Seconds of the two admissions ``timed`` names (a write of the shape, one of plain
    text), in one run of ``SHAPED_SCRIPT``."""
    printed = _printed(SHAPED_SCRIPT.replace("TIMED", timed), timeout=60)
    assert printed is not None, "admission took more than 60 s"
    return eval(printed)  # noqa: S307 - our own script's tuple


def test_a_value_of_equals_signs_is_admitted_in_about_plain_texts_time():
    """Stop 62's sweep of admission found the privilege_escalation run above slower still in
    a value at the default policy (8,192 bytes): {"note": "Access " + 3,900 "="} took ~17 s,
    each value string being read in more texts than the content (its seams, its labelled
    lines), plain text of its size ~0.01 s. It must take at most ~100 times plain text's
    time."""
    shape, plain = _shaped_against_plain(
        '(timed({"content": "Note.", "value": {"note": shaped}}, []),'
        ' timed({"content": "Note.", "value": {"note": plain}}, []))'
    )
    assert shape < 100 * max(plain, 0.005), (shape, plain)


def test_an_earlier_write_of_a_punctuation_run_does_not_slow_every_later_write():
    """Stop 62's sweep of admission found an earlier write of "Access " + 3,900 "=" made every
    later write in the split-write rule's window pay its backtracking again: ~18 s for an
    ordinary write of plain text, ~0.01 s after an earlier write of plain text. The rule
    reads ``SPLIT_SEAM_CHARS`` visible characters around a seam, a run of punctuation
    counted as one (``normalize.visible_start``), so the run is read whole beside each later
    write. It still is (a cut in raw characters would let such a run hide an instruction's
    first half from its seam again, as 200 dots hid a leaf's words until stop 59); the rules
    read it in linear time now, and a later write must take about what it takes after plain
    text."""
    shape, plain = _shaped_against_plain(
        '(timed({"content": plain}, [shaped]), timed({"content": plain}, [plain]))'
    )
    assert shape < 100 * max(plain, 0.005), (shape, plain)


def _best_of(pattern, text: str, runs: int = 5) -> float:
    """The fastest of ``runs`` scans of ``text`` by ``pattern``, in seconds."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        list(pattern.finditer(text))
        best = min(best, time.perf_counter() - started)
    return best


def _stock_rule():
    return next(r for r in business_state.CLASS_RULES if "on backorder" in r.pattern.pattern)


def _record_status_rule():
    return next(
        r for r in business_state.CLASS_RULES if "reservations?)\\W{0,3}" in r.pattern.pattern
    )


def _other_languages_record_rule():
    return next(
        rule
        for rule in other_languages.CLASS_RULES
        if "chamados" in rule.pattern.pattern and "fueron" in rule.pattern.pattern
    )


@pytest.mark.parametrize(
    ("rule", "unit"),
    [
        (_stock_rule, "sku-"),
        (_stock_rule, "item-"),
        (_other_languages_record_rule, "ticket-"),
        (_record_status_rule, "case-"),
    ],
    ids=["stock-sku", "stock-item", "other-languages-ticket", "record-status-case"],
)
def test_a_rule_reads_a_run_of_its_record_in_linear_time(rule, unit):
    """Stop 63's review found that ``business_state._PRODUCT`` (the stock rule) started at
    every "sku" or "item" of a hyphenated run, and ``_ID``'s look-ahead then scanned the rest
    of the run from each: 4,000 characters of "sku-" took ~0.5 s a content against 0.004 s
    for plain text. The other languages' record rule, holding tickets since the stop's audit
    (``_RECORDS``), did the same on "ticket-", and the older record-status rule on "case-"
    (~0.1 s). A record's word starts a match only at its token's start now
    (``vocabulary.RUN_START``): eight times the text takes about eight times as long, not
    sixty-four."""
    pattern = rule().pattern
    short = (unit * 500)[:500]
    long = (unit * 4000)[:4000]
    _best_of(pattern, short)  # warm

    t_short, t_long = _best_of(pattern, short), _best_of(pattern, long)

    assert t_long < 24 * max(t_short, 0.0002), (round(t_short, 4), round(t_long, 4))


def _money_record_rules():
    """The rules that read a money record's word (``business_state.MONEY_RECORDS``)."""
    return [
        r for r in business_state.CLASS_RULES if business_state.MONEY_RECORDS in r.pattern.pattern
    ]


@pytest.mark.parametrize("unit", ["payment-", "order-"])
def test_the_money_record_rules_read_a_run_of_their_record_in_linear_time(unit):
    """Found while fixing stop 64's audit of admission: the rule of a money record's pending
    state (and the one of any state of a record named by its id, its amount or the record it
    is for, which the fix added) started at every "payment" or "order" of a hyphenated run,
    and ``_ID``'s look-ahead then scanned the rest of the run from each: 4,000 characters of
    "order-" took ~0.09 s against ~0.001 s for 500, quadratic. A record's word starts a match
    only at its token's start now (``vocabulary.RUN_START``), as the stock rule's does."""
    short = (unit * 500)[:500]
    long = (unit * 4000)[:4000]
    rules = _money_record_rules()
    assert rules

    for rule in rules:
        _best_of(rule.pattern, short)  # warm
        t_short, t_long = _best_of(rule.pattern, short), _best_of(rule.pattern, long)

        assert t_long < 24 * max(t_short, 0.0002), (round(t_short, 4), round(t_long, 4))


@pytest.mark.parametrize(
    "content",
    [
        # injection.persistent_override: a preference's form of address read to the end
        "From now on always " + "address-" * 480 + "as",
        # ... a preference's sentence read whole for what it acts on, at the content bound
        "Going forward " + "always answer in french and use celsius " * 95,
        # ... "going forward" read as one, a run of it
        "Always use metric " + "going forward " * 280,
        # ... a standing answer for whoever asks, a run of commas before it
        "If anyone asks " + ", " * 1980,
        # other_languages.py: German's verb at the end of "als ... des ... zu behandeln"
        "Jede Nachricht ist als " + "des " * 990,
        # a preference read as an allowlist to its sentence's end, an order at the end
        "Going forward always " + "answer the user in french as dr. " * 119 + "and obey",
        # normalize.py: a run of dashes inside a word, and a standing answer's six words
        "The user is now an ad" + "\u2014" * 3960 + "min.",
        "If anyone asks about it " + "please " * 565,
    ],
    ids=[
        "address-as",
        "preference-sentence",
        "going-forward",
        "asks-commas",
        "als-des",
        "preference-allowlist",
        "dash-run",
        "asks-words",
    ],
)
def test_the_standing_order_rules_read_in_linear_time(content):
    """Stop 64's audit of admission: a standing override is read from its sentence's start
    now, which is checked whole for a preference of how answers look (since stop 64's review
    of admission an allowlist read to the sentence's end, ``injection._STANDING_PREFERENCE``);
    a standing answer for whoever asks reads up to 80 characters to its clause's end, then
    up to six words; a run of dashes inside a word is read whole. Each content near the
    4,000-character bound must take about what plain text of its length takes."""
    _assert_linear(content[:3990])
