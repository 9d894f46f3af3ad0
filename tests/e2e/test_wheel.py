"""The built wheel works on its own: files inside it, and a fresh venv serving MCP from it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import anyio
import pytest

from .conftest import base_env, db_scalar, mcp_stdio_session, tool_text

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 240) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _build_wheel(out: Path, cwd: Path) -> Path:
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, REPO], cwd=cwd)
    wheels = list(out.glob("memwal_mcp-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _site_packages(venv: Path) -> Path:
    found = list((venv / "lib").glob("python3.*/site-packages"))
    assert len(found) == 1, found
    return found[0]


async def test_wheel_installs_into_a_fresh_venv_and_serves(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"  # a working directory outside the repository
    elsewhere.mkdir()

    wheel = _build_wheel(tmp_path / "wheelhouse", elsewhere)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "memwal_mcp/migrations/sqlite/001_initial.sql" in names
    assert "memwal_mcp/model/tokenizer_config.json" in names
    assert "memwal_mcp/__init__.py" in names
    assert not any(name.startswith("tests/") for name in names)

    venv = tmp_path / "fresh-venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=elsewhere)
    python = venv / "bin" / "python"
    # Install before the dependencies become visible, so pip cannot mistake the test venv's
    # editable memwal-mcp for an installed copy in this one.
    _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel],
        cwd=elsewhere,
    )
    # Dependencies come from the test venv, through a .pth file: no network installs.
    dependency_paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (_site_packages(venv) / "_memwal_e2e_deps.pth").write_text("\n".join(dependency_paths) + "\n")

    script = venv / "bin" / "memwal-mcp"
    assert script.is_file()
    assert script.read_text().splitlines()[0] == f"#!{python}"

    env = base_env(tmp_path, tmp_path / "wheel.db")
    where = _run(
        [
            python,
            "-c",
            "import memwal_mcp, memwal_mcp.store.sqlite.migrations as m; print(memwal_mcp.__file__); print(m.migrations_dir())",
        ],
        cwd=elsewhere,
        env=env,
    ).splitlines()
    site = _site_packages(venv).resolve()
    assert Path(where[0]).resolve().is_relative_to(site), where
    assert Path(where[1]).resolve() == site / "memwal_mcp" / "migrations" / "sqlite", where
    assert not any(str(REPO) in line for line in where), where

    with anyio.fail_after(90):
        async with mcp_stdio_session(env, tmp_path / "wheel-stderr.log", command=script, cwd=elsewhere) as (
            session,
            init,
        ):
            assert init.server_info.name == "memwal"
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"memwal_remember", "memwal_remember_status", "memwal_recall"} <= names
            remembered = await session.call_tool(
                "memwal_remember", {"text": "Installed from a wheel into a fresh venv", "wait_ms": 20000}
            )
            assert not remembered.is_error, tool_text(remembered)
            assert remembered.structured_content["status"] == "done", remembered.structured_content
            recalled = await session.call_tool("memwal_recall", {"query": "wheel install", "limit": 3})
            assert not recalled.is_error, tool_text(recalled)
            assert [hit["text"] for hit in recalled.structured_content["hits"]] == [
                "Installed from a wheel into a fresh venv"
            ]

    assert db_scalar(tmp_path / "wheel.db", "SELECT count(*) FROM memories") == 1
    # The vector index was used, so the bundled model loaded from the installed wheel's files.
    assert db_scalar(tmp_path / "wheel.db", "SELECT count(*) FROM embedding_meta") == 1
    assert os.path.exists(tmp_path / "xdg-cache" / "memwal-mcp" / "models")
