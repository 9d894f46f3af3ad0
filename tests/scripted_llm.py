"""A real OpenAI-compatible HTTP server on 127.0.0.1 with scripted answers, for the LLM tier.

The real `openai` client talks to it over a socket. Each request to
/v1/chat/completions is recorded; the answer comes from `script`, a callable
taking the request JSON and returning a Reply (text, HTTP status, delay).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str = "CREATE"
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None  # sent verbatim instead of a chat completion


Script = Callable[[dict[str, Any]], Reply]


class ScriptedLLM:
    def __init__(self, script: Script | None = None) -> None:
        self.script: Script = script or (lambda request: Reply())
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    owner.requests.append(request)
                reply = owner.script(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    body = reply.raw_body.encode()
                elif reply.status == 200:
                    body = json.dumps(
                        {
                            "id": "chatcmpl-test",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": request.get("model", "scripted"),
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": reply.text},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        }
                    ).encode()
                else:
                    body = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}}).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # serve_forever checks for shutdown every poll_interval (0.5 s by default): every test
        # with a scripted LLM waited that long on exit.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def user_messages(self) -> list[str]:
        """The user-message text of every request so far."""
        with self._lock:
            return [m["content"] for r in self.requests for m in r.get("messages", []) if m.get("role") == "user"]

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
