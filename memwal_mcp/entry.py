"""The `memwal-mcp` command: the CLI, imported only once a Ctrl-C can be answered.

Importing the CLI takes most of a second (pydantic, the MCP SDK's types); a Ctrl-C meanwhile would
end in a traceback through the imports. Nothing has run yet then, so it exits as any interrupted
command does: status 130, one line.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130  # commands/output.py's, not imported: it would import what is being guarded


def main() -> None:
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        print("memwal-mcp: interrupted while starting; nothing was done", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    run()
