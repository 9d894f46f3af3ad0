"""Test isolation from the developer's machine, shared by the per-test fixture (conftest.py)
and the module-scoped fixtures that build a store once for their module's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def isolate(patch: pytest.MonkeyPatch, folder: Path) -> None:
    """No MEMWAL_* setting inherited, and config and data dirs of `folder`'s own."""
    for name in [n for n in os.environ if n.startswith("MEMWAL_")]:
        patch.delenv(name)
    patch.setenv("XDG_CONFIG_HOME", str(folder / "xdg-config"))
    patch.setenv("XDG_DATA_HOME", str(folder / "xdg-data"))


@contextmanager
def isolated(folder: Path) -> Iterator[pytest.MonkeyPatch]:
    """isolate() for a module-scoped fixture, which cannot take the per-test monkeypatch."""
    with pytest.MonkeyPatch.context() as patch:
        isolate(patch, folder)
        yield patch
