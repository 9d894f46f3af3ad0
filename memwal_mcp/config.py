"""Settings. Precedence: CLI flags > environment (MEMWAL_*, `__` nests) > TOML file > defaults.

The TOML file is `--config`, else `$MEMWAL_CONFIG`, else `config.toml` in the user
config dir (only if it exists). Every key is documented in config.example.toml; a
test keeps the two in step.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # what pydantic-settings reads TOML with before 3.11
    import tomli as tomllib

APP_NAME = "memwal-mcp"
BUNDLED_MODEL = "memwal/all-MiniLM-L6-v2-int8"


def user_data_dir() -> Path:
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def user_config_file() -> Path:
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False) / "config.toml"


def _owner_rule(value: str) -> str:
    from .errors import InvalidInput
    from .validation import owner

    try:
        return owner(value, name="the owner")
    except InvalidInput as exc:  # pydantic reports a ValueError under the key that holds it
        raise ValueError(str(exc)) from None


# The one owner rule (validation.owner), for every key that names an owner.
OwnerName = Annotated[str, AfterValidator(_owner_rule)]


def _default_db_path() -> Path:
    return user_data_dir() / "memwal.db"


def database_url_rule(value: str | None) -> str | None:
    """A PostgreSQL URL, or unset; anything else is a mistake worth naming before a connect."""
    if value is None or not value.strip():
        return None
    scheme = value.split("://", 1)[0].lower() if "://" in value else ""
    if scheme not in ("postgresql", "postgres"):
        raise ValueError("a database URL starts with postgresql:// (e.g. postgresql://user:pass@host:5432/memwal)")
    return value.strip()


DatabaseURL = Annotated[str | None, AfterValidator(database_url_rule)]


def _proxy_rule(value: str) -> str:
    """An address or network uvicorn can match a peer against (or "*"), named here rather than
    silently never matching, which would leave the proxy's own address as every client's."""
    import ipaddress

    if value == "*":
        return value
    try:
        ipaddress.ip_network(value.strip())
    except ValueError:
        raise ValueError(
            f"a proxy is an IP address or network such as 172.28.0.10 or 10.0.0.0/8 (host bits zero), got {value!r}"
        ) from None
    return value.strip()


TrustedProxy = Annotated[str, AfterValidator(_proxy_rule)]


class StorageSettings(BaseModel):
    url: DatabaseURL = Field(
        None, description="postgresql://...: use PostgreSQL + pgvector instead of the SQLite file (MEMWAL_DB_URL)."
    )
    hnsw_min_rows: int = Field(
        20000,
        ge=1,
        le=1_000_000_000,
        description="PostgreSQL: a lane (owner + namespace) with this many live memories gets an HNSW index"
        " of its own, built in the background; dropped when it falls below a quarter of it.",
    )
    lock_wait_s: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="PostgreSQL: how long a statement waits for a lock another session holds (a row locked by"
        " SELECT ... FOR UPDATE) before it fails with 'stayed locked ... try again', as SQLite's writes do after 30 s.",
    )


class EmbeddingSettings(BaseModel):
    model: str = Field(
        BUNDLED_MODEL,
        description="fastembed model name; the default is bundled and needs no network; 'none' disables vectors.",
    )
    model_path: Path | None = Field(None, description="Local folder holding the model files for fastembed.")
    batch_size: int = Field(16, ge=1, le=1024, description="Texts per ONNX run when embedding documents.")
    threads: int | None = Field(
        None, ge=1, description="Threads running the one model copy at once; unset = all cores."
    )

    @property
    def enabled(self) -> bool:
        return self.model.strip().lower() != "none"


class LLMSettings(BaseModel):
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = no LLM tier.")
    api_key: str | None = Field(None, description="API key for the endpoint.")
    model: str | None = Field(None, description="Model name at the endpoint.")
    timeout_s: float = Field(10.0, gt=0, le=600, description="Timeout per LLM call, seconds.")
    max_output_tokens: int = Field(4096, ge=16, le=65536, description="Output token cap per LLM call.")


class CurationSettings(BaseModel):
    enabled: bool = Field(True, description="Fold duplicates on write; false = every remember is its own memory.")
    nominator_k: int = Field(5, ge=1, le=50, description="kNN nominees per proposal.")
    nominator_threshold: float = Field(0.86, ge=-1.0, le=1.0, description="Cosine similarity to nominate.")
    batch_size: int = Field(64, ge=1, le=1024, description="Jobs a worker claims from one lane at a time.")
    lease_s: float = Field(15.0, gt=0, le=3600, description="Lane lease; a crashed worker's lane is free after this.")
    max_attempts: int = Field(5, ge=1, le=100, description="Tries per job before it is marked failed.")
    poll_interval_s: float = Field(0.5, gt=0, le=60, description="Idle poll for jobs queued by other processes.")


class RecallSettings(BaseModel):
    default_limit: int = Field(5, ge=1, le=100, description="Hits returned when the caller gives no limit.")
    read_your_writes_wait_ms: int = Field(
        3000, ge=0, le=30000, description="How long a recall waits for the caller's queued remembers."
    )
    model_wait_ms: int = Field(
        10000,
        ge=0,
        le=600000,
        description="How long a recall waits for the embedding model to load (a process's first recall; a model "
        "still downloading); then it matches words only, and later recalls use the model once it is in.",
    )
    mode: Literal["hybrid", "dense", "lexical"] = Field(
        "hybrid", description="hybrid = vectors and full-text together; dense or lexical alone (for comparison)."
    )
    dense_weight: float = Field(0.5, ge=0, le=1, description="Share of the vector score in the hybrid score.")
    recency_half_life_days: float = Field(
        30.0, gt=0, le=36500, description="With prefer_recent, a fact this old weighs 3/4 of a new one."
    )
    min_relevance: float = Field(
        0.07,
        ge=0,
        le=1,
        description="A fact sharing no content word with the query is returned only if it scores at least this "
        "(a call's min_score replaces the rule).",
    )
    context_share: float = Field(
        0.7,
        ge=0,
        le=1,
        description="Hybrid: a conversation turn that answers the one stored before it (which asks a question), or "
        "says little itself, rises by this share of the gap up to that turn's score; 0 scores every memory alone.",
    )
    context_gap_s: float = Field(
        1800.0,
        ge=0,
        le=86400,
        description="Two memories are turns of one conversation when their occurred_at lie at most this far apart.",
    )


class LimitSettings(BaseModel):
    max_text_bytes: int = Field(65536, ge=16, le=16 * 1024 * 1024, description="Largest remember text, UTF-8 bytes.")
    max_query_bytes: int = Field(4096, ge=16, le=1024 * 1024, description="Largest recall query, UTF-8 bytes.")


class TokenSettings(BaseModel):
    hash: str = Field(description="'sha256:' + hex SHA-256 of the token (memwal-mcp token hash TOKEN prints it).")
    owner: OwnerName = Field(description="Whose memory the token acts for.")
    scopes: list[Literal["read", "write"]] = Field(
        default_factory=lambda: ["read", "write"],  # type: ignore[arg-type]  # the literals are the two scopes
        description="read: recall/status/history/list; write: remember/forget.",
    )


class AuthSettings(BaseModel):
    tokens: list[TokenSettings] = Field(
        default_factory=list, description="Tokens from config, besides those made with `memwal-mcp token create`."
    )
    rate_per_minute: int = Field(
        600, ge=1, le=1_000_000, description="HTTP requests per minute per token, initialize and every call included."
    )
    burst: int = Field(60, ge=1, le=100_000, description="Requests a token may make at once before the rate applies.")
    max_sessions_per_token: int = Field(
        16,
        ge=1,
        le=10_000,
        description="Open MCP sessions per token (per server without tokens); one more ends the least recently used.",
    )
    signin_per_minute: int = Field(
        10, ge=1, le=100_000, description="Dashboard sign-in attempts per minute from one client address."
    )
    signin_per_minute_total: int = Field(
        100, ge=1, le=1_000_000, description="Dashboard sign-in attempts per minute from all addresses together."
    )


class ServerSettings(BaseModel):
    transport: Literal["stdio", "sse", "http"] = Field("stdio", description="stdio, sse or http (streamable HTTP).")
    host: str = Field("127.0.0.1", description="Bind address for sse/http.")
    port: int = Field(8765, ge=1, le=65535, description="Port for sse/http.")
    worker: bool = Field(True, description="Run the curation worker in this process.")
    insecure_no_auth: bool = Field(
        False, description="Allow sse/http on a non-loopback address without tokens (everyone acts as `owner`)."
    )
    session_idle_s: float = Field(
        600.0, gt=0, le=86_400, description="An sse/http session with no request for this long is closed."
    )
    max_sessions: int = Field(
        1000, ge=1, le=1_000_000, description="Open sse/http sessions for all tokens together; more get HTTP 503."
    )
    stateless: bool = Field(
        False,
        description="Streamable HTTP without sessions: any request may reach any replica behind a load balancer.",
    )
    forwarded_allow_ips: list[TrustedProxy] = Field(
        default_factory=list,
        description="Proxies whose X-Forwarded-For/-Proto are believed (client address, https); none: the peer's own.",
    )

    def proxy_options(self) -> dict[str, Any]:
        """uvicorn's proxy_headers / forwarded_allow_ips. Its default believes X-Forwarded-For from
        127.0.0.1, so any loopback client could name a new address per sign-in attempt and never
        meet the per-address limit: headers are read only from the proxies configured here."""
        if not self.forwarded_allow_ips:
            return {"proxy_headers": False, "forwarded_allow_ips": []}
        trusted = "*" if "*" in self.forwarded_allow_ips else list(self.forwarded_allow_ips)
        return {"proxy_headers": True, "forwarded_allow_ips": trusted}

    @model_validator(mode="after")
    def _stateless_needs_http(self) -> ServerSettings:
        if self.stateless and self.transport == "sse":
            raise ValueError("stateless needs transport http: an SSE stream belongs to one session on one server")
        return self


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMWAL_",
        env_nested_delimiter="__",
        extra="ignore",
        nested_model_default_partial_update=True,
    )

    db_path: Path = Field(default_factory=_default_db_path, description="The SQLite file.")
    db_url: DatabaseURL = Field(
        None, description="postgresql://...: use PostgreSQL instead of the SQLite file; wins over [storage] url."
    )
    owner: OwnerName = Field("local", description="Owner for stdio and the CLI.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="stderr log level.")
    log_file: Path | None = Field(None, description="Also append logs to this file.")
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    curation: CurationSettings = Field(default_factory=CurationSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)

    @property
    def database_url(self) -> str | None:
        """The PostgreSQL database to use (MEMWAL_DB_URL / --db-url, else [storage] url); None: the SQLite file."""
        return self.db_url or self.storage.url

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml_file = settings_cls.model_config.get("toml_file") or _discover_config_file()
        if toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_file))
        return tuple(sources)


def _discover_config_file() -> Path | None:
    env = os.environ.get("MEMWAL_CONFIG")
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            from .errors import InvalidInput

            raise InvalidInput(f"MEMWAL_CONFIG points to {path}, which does not exist")
        return path
    default = user_config_file()
    return default if default.is_file() else None


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build Settings; `overrides` are CLI flags (nested as dicts) and win over everything.

    A value out of range raises pydantic's ValidationError (see `config_problems`); a file
    that is not TOML, or an environment value that is not JSON, is an InvalidInput naming it.
    """
    from .errors import InvalidInput

    if config_file is not None and not config_file.is_file():
        raise InvalidInput(f"config file {config_file} does not exist")
    try:
        if config_file is None:
            return Settings(**overrides)

        class _FromFile(Settings):
            model_config = SettingsConfigDict(**{**Settings.model_config, "toml_file": config_file})

        return _FromFile(**overrides)
    except tomllib.TOMLDecodeError as exc:
        path = config_file or _discover_config_file()
        raise InvalidInput(f"config file {path} is not valid TOML: {exc}") from None
    except SettingsError as exc:
        found = re.search(r'field "(\w+)"', str(exc))
        key = found.group(1) if found else "a setting"
        raise InvalidInput(
            f"{key}: an environment variable MEMWAL_{key.upper()}__... holds a value that is not valid JSON"
            " (a list or object, such as MEMWAL_AUTH__TOKENS, is written in JSON)"
        ) from None


def config_problems(exc: ValidationError) -> list[str]:
    """One line per problem, naming the key (`recall.default_limit`) and the value, instead of
    pydantic's dump (several lines per problem, input types and a documentation URL)."""
    lines = []
    for error in exc.errors(include_url=False):
        key = ".".join(str(part) for part in error["loc"]) or "the settings"
        message = str(error["msg"]).removeprefix("Value error, ")
        value = error.get("input")
        shown = "" if error["type"] == "missing" or isinstance(value, (dict, list)) else f" (got {_shown(value)})"
        lines.append(f"{key}: {message[:1].lower()}{message[1:]}{shown}")
    return lines


def _shown(value: object) -> str:
    from .validation import printable, show

    return printable(show(value))
