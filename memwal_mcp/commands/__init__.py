"""CLI commands, one module each. A command module provides:

    NAME, HELP        the subcommand and its one-line help
    WORKER            whether the curation worker runs while the command does
    add_arguments(parser)
    async run(service, args) -> None    prints its result to stdout
or, to open (or diagnose) the store itself:
    async run_standalone(settings, args) -> None
and, for one that runs until Ctrl-C stops it (so that is a success, exit status 0):
    RUNS_UNTIL_STOPPED = True

`serve` is special: it owns the process (see commands/serve.py).
"""

from __future__ import annotations

from types import ModuleType

from . import (
    analyze,
    backup,
    check,
    doctor,
    export_cmd,
    forget,
    history,
    import_cmd,
    list_cmd,
    migrate,
    purge,
    recall,
    reindex,
    remember,
    serve,
    stats,
    status,
    token,
    ui,
    undo,
)

COMMANDS: tuple[ModuleType, ...] = (
    serve,
    remember,
    analyze,
    recall,
    status,
    list_cmd,
    history,
    forget,
    purge,
    undo,
    stats,
    export_cmd,
    import_cmd,
    migrate,
    check,
    backup,
    doctor,
    token,
    reindex,
    ui,
)
