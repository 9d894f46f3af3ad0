"""The `memwal-mcp` command: the CLI, imported only once a Ctrl-C can be answered.

Importing the CLI takes most of a second (pydantic, the MCP SDK's types); a Ctrl-C meanwhile would
end in a traceback through the imports. Nothing has run yet then, so it exits as any interrupted
command does: status 130, one line. The interruption does not always arrive as KeyboardInterrupt:
one inside pydantic_core's import of `datetime` comes out as a pyo3 PanicException.

At the end, every object is moved out of the collector's sight (`gc.freeze`): the interpreter's
exit would otherwise walk the hundreds of thousands the imports made (pydantic's and the MCP SDK's
schemas) in its last collections, about 0.25 s of every command and every server's exit for
nothing, since the process is ending. Exit handlers, buffered output and thread joins run as usual.
"""

from __future__ import annotations

import gc
import signal
import sys

EXIT_INTERRUPTED = 130  # commands/output.py's, not imported: it would import what is being guarded


def main() -> None:
    interrupted = False

    def on_interrupt(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        raise KeyboardInterrupt

    # Python's own handler, unless the parent ignored SIGINT (a background job): that stays as it is.
    watching = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if watching:
        signal.signal(signal.SIGINT, on_interrupt)
    try:
        from .cli import main as run
    except BaseException:  # SystemExit included: nothing in the imports exits
        if interrupted:
            print("memwal-mcp: interrupted while starting; nothing was done", file=sys.stderr)
            sys.exit(EXIT_INTERRUPTED)
        raise
    finally:
        if watching:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run()
    finally:
        gc.freeze()
