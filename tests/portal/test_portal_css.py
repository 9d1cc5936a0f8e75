"""The stylesheet's colours where a rule of WCAG depends on them, read from portal.css itself.

A control's edge is what tells it is a control: WCAG 1.4.11 asks 3:1 against what is next to
it. The portal puts its controls on the cards' white and on the page's grey.
"""

import re
from pathlib import Path

import pytest
from django.conf import settings

CSS = Path(settings.BASE_DIR) / "portal" / "static" / "portal" / "portal.css"
COLOR = re.compile(r"#[0-9a-fA-F]{6}\b|var\(--[\w-]+\)")


def rules(css: str) -> list[tuple[list[str], dict[str, str]]]:
    """Return (selectors, declarations) of every rule, in order (those in @media too)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found = []
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = {}
        for declaration in body.split(";"):
            name, _, value = declaration.partition(":")
            if value.strip():
                declarations[name.strip()] = value.strip()
        found.append(([s.strip() for s in selectors.split(",")], declarations))
    return found


def resolve(value: str, variables: dict[str, str]) -> str:
    while value.startswith("var("):
        value = variables[value[4:-1]]
    return value.lower()


def border_color(selector: str) -> str:
    """The border colour the stylesheet's last word gives ``selector`` (its own rules only)."""
    parsed = rules(CSS.read_text())
    variables = {
        name: value
        for selectors, body in parsed
        if ":root" in selectors
        for name, value in body.items()
        if name.startswith("--")
    }
    color = None
    for selectors, body in parsed:
        if selector not in selectors:
            continue
        for name in ("border", "border-color"):
            if name in body:
                match = COLOR.search(body[name])
                color = match.group(0) if match else color
    assert color, selector
    return resolve(color, variables)


def luminance(color: str) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize(
    "selector",
    [
        'input[type="text"]',
        'input[type="search"]',
        'input[type="password"]',
        "select",
        "textarea",
        ".btn",
        ".btn-danger",
    ],
)
@pytest.mark.parametrize("background", ["#ffffff", "#f6f7f9"], ids=["card", "page"])
def test_a_controls_border_stands_out_three_to_one(selector, background):
    color = border_color(selector)
    assert contrast(color, background) >= 3, (
        selector,
        color,
        round(contrast(color, background), 2),
    )


def test_an_id_is_isolated_from_the_words_around_it():
    """Ids are shown in ``<code>``; one stored with a bidi override (refused since stop 51)
    reversed the rest of its line in the reviewer's queue: its type, key and writer."""
    code = [
        declarations for selectors, declarations in rules(CSS.read_text()) if "code" in selectors
    ]
    assert code and code[0].get("unicode-bidi") == "isolate"
