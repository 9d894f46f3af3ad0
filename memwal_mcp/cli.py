"""`memwal-mcp`: serve MCP (the default), or work with the memory from a shell.

Each subcommand lives in memwal_mcp/commands/; this module parses arguments,
builds Settings (flags > env > TOML > defaults) and turns errors into exit codes.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

import anyio
from pydantic import ValidationError

from . import __version__
from .commands import COMMANDS, serve
from .commands.output import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from .config import Settings, config_problems, load_settings
from .errors import InvalidInput, MemwalError, UnsafeConfiguration
from .validation import printable

_BAD_NUMBER = re.compile(r"argument (?P<name>\S+): invalid (?P<kind>int|float) value: (?P<value>.*)", re.S)


class _Parser(argparse.ArgumentParser):
    """argparse with its refusals in one line, like every other error of memwal-mcp: argparse
    prints the whole usage first, which for most commands is a screenful that hides the
    message. The line names the option and the value, and where the usage is."""

    def error(self, message: str) -> NoReturn:
        found = _BAD_NUMBER.fullmatch(message)
        if found is not None:
            kind = "an integer" if found["kind"] == "int" else "a number"
            message = f"{found['name']} must be {kind}, got {found['value']}"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {printable(message)} (see {self.prog} --help)\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """argparse finds words it does not know only after the subcommand's parser is done, and
        refuses them from the top parser ("memwal-mcp: error: ... (see memwal-mcp --help)"); the
        subcommand's parser refuses them here, so the line points at the help that lists its options."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            (_chosen(self, parsed) or self).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def _chosen(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser | None:
    """The subcommand's parser the arguments chose, if any."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(getattr(parsed, action.dest, None) or "")
            if sub is not None:
                return sub
    return None


def _common() -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument("--config", type=Path, default=argparse.SUPPRESS, help="TOML config file")
    common.add_argument("--db", type=Path, default=argparse.SUPPRESS, help="SQLite database file (MEMWAL_DB_PATH)")
    common.add_argument(
        "--db-url",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="postgresql://...: use PostgreSQL + pgvector instead of the SQLite file (MEMWAL_DB_URL)",
    )
    common.add_argument("--owner", default=argparse.SUPPRESS, help="whose memory (MEMWAL_OWNER, default 'local')")
    common.add_argument(
        "--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], default=argparse.SUPPRESS, help="stderr log level"
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(
        prog="memwal-mcp",
        description="Long-term memory for AI agents over MCP. With no command, serves MCP over stdio.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"memwal-mcp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_arguments(subparsers.add_parser(command.NAME, parents=[common], help=command.HELP))
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = serve.settings_overrides(args)
    for flag, key in (("db", "db_path"), ("db_url", "db_url"), ("owner", "owner"), ("log_level", "log_level")):
        if flag in args:
            overrides[key] = getattr(args, flag)
    return load_settings(getattr(args, "config", None), **overrides)


def _argument_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """dest -> how the user typed it ("--label", "TOKEN"), over every subcommand's parser."""
    names: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names.update(_argument_names(sub))
        elif action.option_strings:
            names.setdefault(action.dest, max(action.option_strings, key=len))
        else:
            names.setdefault(action.dest, (action.metavar if isinstance(action.metavar, str) else action.dest).upper())
    return names


def _options(parser: argparse.ArgumentParser, command: str) -> dict[str, str]:
    """The one table from the service's argument names to the command's option spellings: each option's
    dest is the service's name for it (`--expires` has dest expires_at, `--key` idempotency_key)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            sub = action.choices[command]
            return {a.dest: max(a.option_strings, key=len) for a in sub._actions if a.option_strings}
    return {}


def in_option_names(message: str, options: dict[str, str]) -> str:
    """A service error as the command line reads it: the argument it starts with, and any named with its
    value ("until '2026-01-02' is before since '2026-03-01'"), spelled as the option ("--max-chars must be
    ..." for max_chars). Other words are left alone: "the limit is 65536 bytes" names no option."""
    if not options:
        return message
    names = "|".join(re.escape(name) for name in sorted(options, key=len, reverse=True))
    pattern = re.compile(rf"^({names})\b(?!-)|(?<![\w-])({names})(?= ['\"\[])")
    return pattern.sub(lambda m: options[m.group(1) or m.group(2)], message)


def _refuse_undecodable(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An argument that is not UTF-8 arrives with its bad bytes as lone surrogates (PEP 383);
    anything that encodes it later (a hash, SQLite, print) would end in a traceback."""
    for dest, value in vars(args).items():
        if isinstance(value, str) and any("\udc80" <= ch <= "\udcff" for ch in value):
            byte = next(ord(ch) - 0xDC00 for ch in value if "\udc80" <= ch <= "\udcff")
            name = _argument_names(parser).get(dest, dest)
            parser.exit(
                EXIT_USAGE, f"memwal-mcp: error: {name} is not valid UTF-8 (byte 0x{byte:02x}); pass UTF-8 text\n"
            )


def main(argv: list[str] | None = None) -> None:
    threading.excepthook = _quiet_after_shutdown
    try:
        try:
            _main(argv)
            sys.stdout.flush()  # a pipe closed early fails here, inside the handler, not at exit
            # Done and said: a Ctrl-C from now on must not turn the exit into 130, or (once the
            # interpreter's exit has put SIGINT back to its default) into death by the signal.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except BrokenPipeError:
            _stdout_closed()
        except KeyboardInterrupt:  # before the event loop ran: parsing the command line, reading settings
            print("memwal-mcp: interrupted while starting; nothing was done", file=sys.stderr)
            sys.exit(EXIT_INTERRUPTED)
    except SystemExit as exc:
        _leave(exc.code)
        raise
    _leave(0)


def _leave(code: object) -> None:
    """End now, without the interpreter's usual exit, when a thread besides this one is still
    alive: the embedding model loading on its own thread (a command that did not need it, or was
    interrupted, while its worker loads it: a normal exit runs ONNX Runtime's static destructors
    under it and the process aborts, "terminate called without an active exception"); a database
    thread or the stdio reader a Ctrl-C left running (a normal exit joins them: it waited forever
    after an interrupted recall had printed its hits, and for a server whose client kept stdin
    open). Output and logs are flushed first; what was committed is in the database."""
    if not any(thread.is_alive() for thread in threading.enumerate() if thread is not threading.current_thread()):
        return
    if isinstance(code, str):
        print(code, file=sys.stderr)
    status = code if isinstance(code, int) else (0 if code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(status)


def _quiet_after_shutdown(args: threading.ExceptHookArgs) -> None:
    """A database thread finishing after the event loop closed (a Ctrl-C while the store opened)
    cannot hand its result back: "Event loop is closed" is the interruption itself, not an error to
    print as a traceback. Anything else is reported as Python would."""
    if isinstance(args.exc_value, RuntimeError) and str(args.exc_value) == "Event loop is closed":
        return
    threading.__excepthook__(args)


def _stdout_closed() -> None:
    """The reader of stdout went away (`memwal-mcp list | head`): end quietly, as a killed-by-SIGPIPE
    program would. What is still buffered cannot be written; pointing stdout at /dev/null keeps
    the interpreter's exit from reporting that a second time."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(128 + getattr(signal, "SIGPIPE", 13))


def _main(argv: list[str] | None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    _refuse_undecodable(parser, args)
    name = args.command or serve.NAME
    command = next(c for c in COMMANDS if c.NAME == name)
    try:
        settings = _settings(args)
    except MemwalError as exc:
        parser.exit(EXIT_USAGE, f"memwal-mcp: error: {exc}\n")
    except ValidationError as exc:  # env/TOML/flag values
        parser.exit(EXIT_USAGE, "".join(f"memwal-mcp: configuration error: {line}\n" for line in config_problems(exc)))
    except Exception as exc:  # an unreadable TOML file, an env value that is not JSON
        line = printable(str(exc).splitlines()[0] if str(exc) else repr(exc))
        parser.exit(EXIT_USAGE, f"memwal-mcp: configuration error: {line}\n")

    from .logs import setup_logging

    # One-shot commands keep the terminal for their answer unless asked for logs.
    quiet = name != serve.NAME and "log_level" not in args
    setup_logging("WARNING" if quiet else settings.log_level, settings.log_file)
    try:
        if name == serve.NAME:
            anyio.run(serve.serve, settings)
        else:
            anyio.run(_run_command, command, settings, args)
    except KeyboardInterrupt:
        # Ctrl-C is how a server is stopped; a one-shot command it stops did not finish.
        if not getattr(command, "RUNS_UNTIL_STOPPED", False):
            for line in _left_behind:
                print(f"memwal-mcp {name}: interrupted: {line}", file=sys.stderr)
            sys.exit(EXIT_INTERRUPTED)
    except InvalidInput as exc:
        parser.exit(EXIT_USAGE, f"memwal-mcp: error: {in_option_names(str(exc), _options(parser, name))}\n")
    except UnsafeConfiguration as exc:  # a configuration refused as given: status 2, as the README's table says
        parser.exit(EXIT_USAGE, f"memwal-mcp: error: {exc}\n")
    except MemwalError as exc:
        parser.exit(EXIT_FAILED, f"memwal-mcp: error: {exc}\n")


async def _run_command(command: Any, settings: Settings, args: argparse.Namespace) -> None:
    from .service import MemoryService

    if hasattr(command, "run_standalone"):  # it opens (or diagnoses) the store itself
        await command.run_standalone(settings, args)
        return
    service = MemoryService(settings)
    try:
        async with service.running(worker=command.WORKER):
            await command.run(service, args)
    except anyio.get_cancelled_exc_class():  # Ctrl-C: the command can say what it leaves
        if (left := getattr(command, "interrupted", None)) is not None:
            _left_behind.append(left(service, args))
        raise


# What an interrupted command says it left behind (one line), printed after the event loop ended.
_left_behind: list[str] = []
