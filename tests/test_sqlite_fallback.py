"""choose_sqlite: the first SQLite that can load sqlite-vec wins; none gives an install hint."""

from __future__ import annotations

import sqlite3
from types import ModuleType

import pytest
import sqlite_vec

from memwal_mcp.errors import StoreUnavailable
from memwal_mcp.store.sqlite.connection import SQLITE_CANDIDATES, choose_sqlite


def stdlib_can_load_extensions() -> bool:
    conn = sqlite3.connect(":memory:")
    try:
        if not hasattr(conn, "enable_load_extension"):
            return False
        try:
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.execute("SELECT vec_version()")
        except Exception:
            return False
        return True
    finally:
        conn.close()


def assert_loads_sqlite_vec(module: ModuleType) -> None:
    conn = module.connect(":memory:")
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
    finally:
        conn.close()


def test_default_candidates_give_a_sqlite_that_loads_sqlite_vec() -> None:
    module = choose_sqlite()
    assert_loads_sqlite_vec(module)
    if not hasattr(sqlite3.connect(":memory:"), "enable_load_extension"):
        assert module is not sqlite3
        assert module.__name__ != "sqlite3"


def test_stdlib_is_preferred_when_it_can_load_extensions() -> None:
    if not stdlib_can_load_extensions():
        pytest.skip("this interpreter's sqlite3 cannot load extensions")
    assert choose_sqlite() is sqlite3


def test_fallback_is_sqlean_when_stdlib_cannot_load() -> None:
    if stdlib_can_load_extensions():
        pytest.skip("this interpreter's sqlite3 can load extensions; no fallback needed")
    module = choose_sqlite()
    assert module.__name__ in SQLITE_CANDIDATES[1:]
    assert module.__name__ == "sqlean"  # the one memwal-mcp depends on


def test_missing_module_is_skipped_not_fatal() -> None:
    module = choose_sqlite(("no_such_module_xyz", "sqlean"))
    assert module.__name__ == "sqlean"
    assert_loads_sqlite_vec(module)


def test_no_usable_sqlite_tells_the_user_what_to_install() -> None:
    with pytest.raises(StoreUnavailable) as caught:
        choose_sqlite(("no_such_module_xyz",))
    message = str(caught.value)
    assert "pip install sqlean-py" in message
    assert "no_such_module_xyz (not installed)" in message


def test_module_that_is_not_a_sqlite_is_refused() -> None:
    with pytest.raises(StoreUnavailable, match=r"json \(cannot load sqlite-vec\).*pip install sqlean-py"):
        choose_sqlite(("json",))


def test_stdlib_only_fails_when_it_cannot_load_extensions() -> None:
    if stdlib_can_load_extensions():
        pytest.skip("this interpreter's sqlite3 can load extensions")
    with pytest.raises(StoreUnavailable) as caught:
        choose_sqlite(("sqlite3",))
    message = str(caught.value)
    assert "sqlite3 (cannot load sqlite-vec)" in message
    assert "pip install sqlean-py" in message


def test_empty_candidates_raise() -> None:
    with pytest.raises(StoreUnavailable, match="pip install sqlean-py"):
        choose_sqlite(())
