"""A TCP relay in front of the test PostgreSQL that can fall silent.

`silent()` stops passing bytes either way without closing anything: what a network partition or a
host that vanished looks like to the client (no reset, no answer), which SIGSTOP on the server only
imitates and which would freeze every other test on the shared server. `speak()` passes again what
was held, so the connections survive the silence, as TCP connections do a short partition.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit


def _socket_path(url: str) -> str:
    """pgserver's URL reaches the server by its socket folder (`?host=/path`)."""
    parts = urlsplit(url)
    folder = parse_qs(parts.query)["host"][0]
    return str(Path(folder) / f".s.PGSQL.{parts.port or 5432}")


class Blackhole:
    def __init__(self, url: str) -> None:
        self._target = _socket_path(url)
        parts = urlsplit(url)
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        netloc = f"{parts.username or 'postgres'}@127.0.0.1:{port}"
        self.url = urlunsplit((parts.scheme, netloc, parts.path, "", ""))  # the same database, through the relay
        self._open = threading.Event()
        self._open.set()
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def silent(self) -> None:
        self._open.clear()

    def speak(self) -> None:
        self._open.set()

    def close(self) -> None:
        self._closed = True
        self._open.set()
        for sock in [self._listener, *self._sockets]:
            try:
                sock.close()
            except OSError:
                pass

    def __enter__(self) -> Blackhole:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(self._target)
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._open.wait()  # held while silent: nothing lost, nothing answered
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
