"""``memory_core.text.without_paths``: the server's paths left out of an error's words."""

import pytest

from memory_core.text import without_paths


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/srv/evals/a.jsonl'",
            "FileNotFoundError: [Errno 2] No such file or directory: '<path>'",
        ),
        (  # quoted: the whole path, spaces and all
            'PermissionError: [Errno 13] Permission denied: "/srv/my evals/a b.csv"',
            'PermissionError: [Errno 13] Permission denied: "<path>"',
        ),
        ("OSError: /var/lib/journal.log: read-only", "OSError: <path>: read-only"),
        ("the folder ~/evals is missing", "the folder <path> is missing"),
        ("names '/a', '/b c' and 'x/y'", "names '<path>', '<path>' and 'x/y'"),
    ],
)
def test_an_absolute_path_is_left_out(error, shown):
    assert without_paths(error) == shown


@pytest.mark.parametrize(
    "text",
    [
        "steps not verified after 8 runs (the last failed): ['evaluation']",
        "1 evaluation folder(s) configured are not folders",
        "a relative path ./evals/a.jsonl, a ratio 3/4, and/or, tenant-a/coder",
        "",
    ],
)
def test_words_without_an_absolute_path_are_kept(text):
    assert without_paths(text) == text
