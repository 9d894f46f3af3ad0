"""Settings precedence (CLI > env > TOML > defaults) and config.example.toml kept in step with Settings."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import tomllib
from pydantic import BaseModel, ValidationError

from memwal_mcp.config import BUNDLED_MODEL, Settings, load_settings, user_config_file
from memwal_mcp.errors import InvalidInput

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.toml"


def write_toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_toml(
        tmp_path / "memwal.toml",
        'owner = "from-file"\n'
        'log_level = "WARNING"\n'
        "[curation]\n"
        "nominator_k = 7\n"
        "nominator_threshold = 0.8\n"
        "[llm]\n"
        'base_url = "http://127.0.0.1:11434/v1"\n'
        'model = "qwen2.5:7b-instruct"\n',
    )


# --- defaults ---------------------------------------------------------------------


def test_defaults(tmp_path: Path) -> None:
    s = load_settings()
    assert s.owner == "local"
    assert s.log_level == "INFO"
    assert s.embedding.model == BUNDLED_MODEL and s.embedding.enabled
    assert s.embedding.model_path is None
    assert s.llm.base_url is None and s.llm.api_key is None and s.llm.model is None
    assert s.llm.timeout_s == 10 and s.llm.max_output_tokens == 4096
    assert s.curation.enabled is True
    assert s.curation.nominator_k == 5
    assert s.curation.nominator_threshold == 0.86
    assert s.recall.default_limit == 5
    assert s.server.transport == "stdio"
    # the default database lives in the user data dir (XDG_DATA_HOME is a temp dir in tests)
    assert s.db_path == tmp_path / "xdg-data" / "memwal-mcp" / "memwal.db"


# --- environment -------------------------------------------------------------------


def test_env_overrides_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMWAL_OWNER", "alice")
    monkeypatch.setenv("MEMWAL_DB_PATH", str(tmp_path / "env.db"))
    monkeypatch.setenv("MEMWAL_EMBEDDING__MODEL", "none")
    monkeypatch.setenv("MEMWAL_LLM__TIMEOUT_S", "2.5")
    s = load_settings()
    assert s.owner == "alice"
    assert s.db_path == tmp_path / "env.db"
    assert s.embedding.model == "none" and not s.embedding.enabled
    assert s.llm.timeout_s == 2.5


def test_env_nested_partial_keeps_sibling_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWAL_CURATION__ENABLED", "false")
    s = load_settings()
    assert s.curation.enabled is False
    assert s.curation.nominator_k == 5
    assert s.curation.nominator_threshold == 0.86
    assert s.curation.batch_size == 64


@pytest.mark.parametrize("name", ["MEMWAL_CURATION__NOMINATOR_K", "memwal_curation__nominator_k"])
def test_env_names_are_case_insensitive(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "9")
    assert load_settings().curation.nominator_k == 9


def test_invalid_env_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWAL_CURATION__NOMINATOR_K", "0")
    with pytest.raises(ValidationError, match="nominator_k"):
        load_settings()


# --- TOML file ---------------------------------------------------------------------


def test_file_overrides_defaults(config_file: Path) -> None:
    s = load_settings(config_file=config_file)
    assert s.owner == "from-file"
    assert s.log_level == "WARNING"
    assert s.curation.nominator_k == 7
    assert s.curation.nominator_threshold == 0.8
    assert s.curation.enabled is True  # untouched sibling keeps its default
    assert s.llm.base_url == "http://127.0.0.1:11434/v1"
    assert s.llm.timeout_s == 10


def test_memwal_config_env_names_the_file(monkeypatch: pytest.MonkeyPatch, config_file: Path) -> None:
    monkeypatch.setenv("MEMWAL_CONFIG", str(config_file))
    s = load_settings()
    assert s.owner == "from-file"
    assert s.curation.nominator_k == 7


def test_user_config_dir_file_is_read_when_present(tmp_path: Path) -> None:
    path = user_config_file()
    assert str(path).startswith(str(tmp_path))  # the isolated XDG_CONFIG_HOME
    path.parent.mkdir(parents=True)
    write_toml(path, 'owner = "from-user-dir"\n')
    assert load_settings().owner == "from-user-dir"


def test_explicit_config_beats_memwal_config_and_user_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config_file: Path
) -> None:
    other = write_toml(tmp_path / "other.toml", 'owner = "from-env-file"\n')
    monkeypatch.setenv("MEMWAL_CONFIG", str(other))
    user = user_config_file()
    user.parent.mkdir(parents=True)
    write_toml(user, 'owner = "from-user-dir"\n')
    assert load_settings(config_file=config_file).owner == "from-file"
    assert load_settings().owner == "from-env-file"


def test_env_overrides_file(monkeypatch: pytest.MonkeyPatch, config_file: Path) -> None:
    monkeypatch.setenv("MEMWAL_OWNER", "from-env")
    monkeypatch.setenv("MEMWAL_CURATION__NOMINATOR_THRESHOLD", "0.9")
    s = load_settings(config_file=config_file)
    assert s.owner == "from-env"
    assert s.log_level == "WARNING"  # from the file
    # nested: env sets one key, the file's other key in the same section survives
    assert s.curation.nominator_threshold == 0.9
    assert s.curation.nominator_k == 7


def test_cli_overrides_env_and_file(monkeypatch: pytest.MonkeyPatch, config_file: Path) -> None:
    monkeypatch.setenv("MEMWAL_OWNER", "from-env")
    monkeypatch.setenv("MEMWAL_CURATION__NOMINATOR_K", "11")
    s = load_settings(config_file=config_file, owner="from-cli", curation={"nominator_k": 3})
    assert s.owner == "from-cli"
    assert s.curation.nominator_k == 3
    # partial nested CLI override merges with the file and the defaults
    assert s.curation.nominator_threshold == 0.8
    assert s.curation.enabled is True
    assert s.log_level == "WARNING"


def test_cli_overrides_env_without_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWAL_CURATION__ENABLED", "false")
    monkeypatch.setenv("MEMWAL_CURATION__NOMINATOR_K", "9")
    s = load_settings(curation={"enabled": True})
    assert s.curation.enabled is True
    assert s.curation.nominator_k == 9  # env value in the same section survives


def test_full_precedence_chain_per_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Four keys in one section, each set by a different number of layers."""
    path = write_toml(
        tmp_path / "chain.toml",
        "[curation]\nnominator_k = 2\nbatch_size = 2\nmax_attempts = 2\n",
    )
    monkeypatch.setenv("MEMWAL_CURATION__NOMINATOR_K", "3")
    monkeypatch.setenv("MEMWAL_CURATION__BATCH_SIZE", "3")
    s = load_settings(config_file=path, curation={"nominator_k": 4})
    assert s.curation.nominator_k == 4  # cli
    assert s.curation.batch_size == 3  # env
    assert s.curation.max_attempts == 2  # file
    assert s.curation.lease_s == 15.0  # default


def test_missing_config_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"does not exist"):
        load_settings(config_file=tmp_path / "nope.toml")


def test_missing_memwal_config_file_is_invalid_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMWAL_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(InvalidInput, match=r"MEMWAL_CONFIG .*does not exist"):
        load_settings()


def test_invalid_file_value_is_refused(tmp_path: Path) -> None:
    path = write_toml(tmp_path / "bad.toml", '[server]\ntransport = "carrier-pigeon"\n')
    with pytest.raises(ValidationError, match="transport"):
        load_settings(config_file=path)


# --- config.example.toml documents every key -------------------------------------------


def settings_keys(model: type[BaseModel] = Settings, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    keys: set[tuple[str, ...]] = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= settings_keys(annotation, (*prefix, name))
        else:
            keys.add((*prefix, name))
    return keys


_SECTION = re.compile(r"^\s*\[([A-Za-z0-9_.]+)\]\s*(?:#.*)?$")
_COMMENTED_KEY = re.compile(r"^\s*#\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*\S")


def example_keys(text: str) -> set[tuple[str, ...]]:
    """Real keys (via tomllib) plus commented-out `# key = value` lines, by section."""
    keys: set[tuple[str, ...]] = set()

    def walk(table: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for key, value in table.items():
            if isinstance(value, dict):
                walk(value, (*prefix, key))
            else:
                keys.add((*prefix, key))

    walk(tomllib.loads(text), ())
    section: tuple[str, ...] = ()
    for line in text.splitlines():
        if match := _SECTION.match(line):
            section = tuple(match.group(1).split("."))
        elif match := _COMMENTED_KEY.match(line):
            keys.add((*section, match.group(1)))
    return keys


def example_text() -> str:
    # Written by another contributor; give it a moment to appear if it is not there yet.
    for _ in range(30):
        if EXAMPLE.is_file():
            return EXAMPLE.read_text(encoding="utf-8")
        time.sleep(2)
    pytest.fail(f"{EXAMPLE} does not exist; it must document every configuration key")


def test_example_key_parser_sees_commented_keys() -> None:
    sample = '# top = 1\nreal = 2\n# Prose: not = a key\n[sec]\n# inner = "x"\nother = 3\n#   spaced   =   4\n'
    assert example_keys(sample) == {("top",), ("real",), ("sec", "inner"), ("sec", "other"), ("sec", "spaced")}


def test_example_documents_every_settings_key() -> None:
    documented = example_keys(example_text())
    missing = sorted(".".join(k) for k in settings_keys() - documented)
    assert not missing, f"config.example.toml does not document: {missing}"


def test_example_has_no_unknown_keys() -> None:
    documented = example_keys(example_text())
    unknown = sorted(".".join(k) for k in documented - settings_keys())
    assert not unknown, f"config.example.toml documents keys Settings does not have: {unknown}"


def test_example_sections_mirror_nested_models() -> None:
    sections = {k for k, v in tomllib.loads(example_text()).items() if isinstance(v, dict)}
    nested = {k[0] for k in settings_keys() if len(k) > 1}
    assert sections == nested == {"embedding", "llm", "curation", "recall", "limits", "server", "auth", "storage"}


def test_loading_the_example_yields_the_defaults() -> None:
    example_text()
    from_example = load_settings(config_file=EXAMPLE)
    assert from_example.model_dump() == load_settings().model_dump()
