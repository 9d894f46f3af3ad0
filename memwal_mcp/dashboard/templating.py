"""The Jinja2 environment: autoescaping always on, so memory text (untrusted input) is only ever
text in the page; an undefined name is an error, not an empty string."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined


def when(seconds: float | None) -> str:
    """An instant as the pages show it: UTC, to the minute."""
    if seconds is None:
        return ""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, ValueError, OSError):
        return "?"


def iso(seconds: float | None) -> str:
    """The same instant to the second, for a datetime attribute or an `until` that includes it."""
    if seconds is None:
        return ""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return ""


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("memwal_mcp.dashboard", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["iso"] = iso
    return env


_ENV = _environment()


def render(name: str, **context: Any) -> str:
    return _ENV.get_template(name).render(**context)
