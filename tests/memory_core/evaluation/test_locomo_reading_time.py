"""eval_locomo reads a turn's dia_id and a question's evidence ids (``locomo._DIA``) in time
linear in their length, and a dia_id too long to store not at all.

Each time is compared with the time of a plain text of the same length, the fastest of a few
runs each: a ratio holds on a busy machine where seconds do not."""

import re
import time

import pytest

from memory_core.evaluation.dataset import DatasetError
from memory_core.evaluation.locomo import normalize_evidence, parse

SPACES = 5_000  # quadratic, ~0.4 s a read before stop 63; linear, ~0.2 ms


def _fastest(read, text: str, *, runs: int = 7) -> float:
    """Return the fewest seconds ``read(text)`` took in ``runs`` calls."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        read(text)
        times.append(time.perf_counter() - started)
    return min(times)


def test_an_evidence_id_of_a_d_and_many_spaces_is_read_in_linear_time():
    """Stop 63's audit of exports found ``_DIA`` (``D\\s*:?\\s*(\\d+)\\s*:\\s*(\\d+)``) putting
    two whitespace runs around an optional colon, so a "D" followed by n spaces and no digit
    was tried at every split of the run: O(n^2) steps (40,000 spaces took 15-20 s, a 100 KB
    evidence id minutes). ``D\\s*(?::\\s*)?(\\d+)\\s*:\\s*(\\d+)`` reads the same ids with one
    run on either side of the colon: such an id now costs a small multiple of a well-formed
    id of the same length (10 to 25 times here, against 14,000 to 24,000 times before)."""
    hostile = "D" + " " * SPACES
    plain = "D" + " " * (SPACES - 3) + "1:1"  # as long, and read in one pass by either
    assert normalize_evidence([hostile]) == []
    assert normalize_evidence([plain]) == ["D1:1"]
    ratio = _fastest(lambda text: normalize_evidence([text]), hostile) / _fastest(
        lambda text: normalize_evidence([text]), plain
    )
    assert ratio < 200, f"a 'D' and {SPACES:,} spaces took {ratio:.0f} times a plain id's time"


@pytest.mark.parametrize(
    "written",
    ["D1:3", "D:11:26", "D 8 : 6", "D:  5:2", "D8:6; D9:17", "D", "D:1", "d1:1"],
)
def test_the_linear_reading_finds_the_ids_the_quadratic_one_found(written):
    """The pattern of stop 63 reads the ids the pattern before it read, and no other."""
    before = r"D\s*:?\s*(\d+)\s*:\s*(\d+)"
    expected = sorted({f"D{int(a)}:{int(b)}" for a, b in re.findall(before, written)})
    assert normalize_evidence([written]) == expected


def _conversation(dia_id: str) -> list:
    """Return a LoCoMo file of one conversation whose one turn is ``dia_id``."""
    turn = {"speaker": "A", "dia_id": dia_id, "text": "I like tea."}
    conversation = {"session_1_date_time": "1 May 2023", "session_1": [turn]}
    question = {"question": "What does A like?", "evidence": ["D1:1"], "category": 4}
    return [{"sample_id": "s1", "conversation": conversation, "qa": [question]}]


def _refused(dia_id: str) -> None:
    """Parse a file whose one turn is ``dia_id``, refused for its length."""
    with pytest.raises(DatasetError, match="dia_id is at most 200 characters"):
        parse(_conversation(dia_id))


def test_a_dia_id_over_200_characters_is_refused_at_once():
    """Stop 63's audit of exports found ``parse`` reading a turn's dia_id with
    ``normalize_evidence`` before measuring it, so a dia_id of a "D" and 40,000 spaces cost
    15-20 s before the refusal docs/retrieval.md promises for one over 200 characters. It is
    measured first now: refused as fast as any other text of its length."""
    hostile = "D" + " " * SPACES
    plain = "x" * len(hostile)  # no "D": refused for its length without reading, before too
    ratio = _fastest(_refused, hostile) / _fastest(_refused, plain)
    assert ratio < 10, f"a 'D' and {SPACES:,} spaces took {ratio:.0f} times a plain id's time"
