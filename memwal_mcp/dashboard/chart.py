"""Bar charts as geometry for an inline SVG the server renders: no chart library, no script.

The template draws what these return (rectangles and text, every label escaped by Jinja), so the
chart reads without JavaScript and nothing is fetched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value: int


@dataclass(frozen=True, slots=True)
class Tick:
    position: float  # y of a gridline (columns) or x (rows)
    value: int


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]
    labels: tuple[tuple[float, str], ...]  # (position, text) of the category labels shown
    left: float  # where the plot starts (room for value labels)
    bottom: float  # the baseline (columns) or the plot's bottom (rows)
    title: str


def _scale_top(peak: int) -> int:
    """A round top for the axis at or above the peak: 1, 2, 5, 10, 20, 50, ..."""
    if peak <= 1:
        return 1
    magnitude = 10 ** math.floor(math.log10(peak))
    for step in (1, 2, 5, 10):
        if peak <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def _ticks(top: int) -> list[int]:
    return sorted({0, top // 2, top}) if top > 1 else [0, 1]


def columns(points: Sequence[tuple[str, int]], title: str, width: int = 720, height: int = 220) -> Chart:
    """One column per point, left to right (remembers per day). Every seventh label is shown,
    counted back from the last (today), so thirty days stay legible and none overlap."""
    left, right, top_pad, bottom = 40.0, 8.0, 10.0, height - 30.0
    plot_w, plot_h = width - left - right, bottom - top_pad
    top = _scale_top(max((v for _, v in points), default=0))
    slot = plot_w / max(len(points), 1)
    bars = []
    labels = []
    for i, (label, value) in enumerate(points):
        h = plot_h * value / top
        bars.append(Bar(left + i * slot + slot * 0.1, bottom - h, slot * 0.8, h, label, value))
        if (len(points) - 1 - i) % 7 == 0:
            labels.append((left + i * slot + slot / 2, label))
    ticks = tuple(Tick(bottom - plot_h * t / top, t) for t in _ticks(top))
    return Chart(width, height, tuple(bars), ticks, tuple(labels), left, bottom, title)


def rows(points: Sequence[tuple[str, int]], title: str, width: int = 720, row_h: int = 26) -> Chart:
    """One horizontal bar per point, top to bottom (decisions by kind)."""
    left, right, top_pad = 130.0, 60.0, 6.0
    height = int(top_pad * 2 + row_h * max(len(points), 1) + 20)
    plot_w = width - left - right
    top = _scale_top(max((v for _, v in points), default=0))
    bars = []
    labels = []
    for i, (label, value) in enumerate(points):
        y = top_pad + i * row_h
        bars.append(Bar(left, y + row_h * 0.15, plot_w * value / top, row_h * 0.7, label, value))
        labels.append((y + row_h / 2, label))
    bottom = top_pad + row_h * max(len(points), 1)
    ticks = tuple(Tick(left + plot_w * t / top, t) for t in _ticks(top))
    return Chart(width, height, tuple(bars), ticks, tuple(labels), left, bottom, title)
