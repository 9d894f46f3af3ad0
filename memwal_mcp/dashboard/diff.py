"""A word-level diff of two bodies, as runs the template marks up (<del>, <ins>) as text."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

_TOKENS = re.compile(r"\s+|\w+(?:[.:/@'-]\w+)*|[^\w\s]", re.UNICODE)  # 2.4.1, a.b/c, it's: one word
# Past this many tokens a side, the diff is by lines: SequenceMatcher is quadratic at worst, and a
# 64 KiB body is some 20,000 tokens.
_MAX_TOKENS = 4000


@dataclass(frozen=True, slots=True)
class Run:
    kind: Literal["same", "del", "ins"]
    text: str


def word_diff(before: str, after: str) -> list[Run]:
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    if len(a) > _MAX_TOKENS or len(b) > _MAX_TOKENS:
        a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    runs: list[Run] = []

    def put(kind: Literal["same", "del", "ins"], parts: list[str]) -> None:
        text = "".join(parts)
        if not text:
            return
        if runs and runs[-1].kind == kind:
            runs[-1] = Run(kind, runs[-1].text + text)
        else:
            runs.append(Run(kind, text))

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            put("same", a[i1:i2])
        else:
            put("del", a[i1:i2])
            put("ins", b[j1:j2])
    return runs
