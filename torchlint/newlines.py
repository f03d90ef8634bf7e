"""Newline styles: text is checked with "\n" newlines and written back in its own style."""

from __future__ import annotations


def newline_style(text: str) -> str | None:
    """The one newline style of `text` ("\n" when it has none); None when it mixes styles."""
    if "\r" not in text:
        return "\n"
    crlf = text.count("\r\n")
    lone_cr = text.count("\r") - crlf
    lone_lf = text.count("\n") - crlf
    styles = [style for style, count in (("\r\n", crlf), ("\r", lone_cr), ("\n", lone_lf)) if count]
    if len(styles) > 1:
        return None
    return styles[0] if styles else "\n"


def normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def restore(text: str, style: str | None) -> str:
    """`text` with "\n" newlines in `style` (unchanged when the style is "\n" or mixed)."""
    return text.replace("\n", style) if style and style != "\n" else text
