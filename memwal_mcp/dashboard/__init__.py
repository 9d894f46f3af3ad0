"""The web dashboard: search, browse, inspect, undo and forget memories in a browser.

Server-rendered (Jinja2, autoescaped) on Starlette, over MemoryService only: `memwal-mcp serve
--transport http|sse` mounts it at /ui, `memwal-mcp ui` serves it alone on 127.0.0.1.

  routes.py      the pages and forms
  access.py      who a request acts for, which forms may change anything, the security headers
  session.py     sessions and their cookies, CSRF tokens, the sign-in form's nonce
  templating.py  the Jinja2 environment and date filters
  chart.py       bar-chart geometry for the inline SVG charts
  diff.py        word diffs of a merge
"""

from .routes import build_dashboard

__all__ = ["build_dashboard"]
