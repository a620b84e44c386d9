"""Connects an MCP server's stdio to the unix socket of a [`zamburak.host.Host`]: the policy's `servers:`
entry starts `python3 -m zamburak.relay` with `env: [ZAMBURAK_TOOLS_SOCKET]`, and the Python process that
called `zamburak.run` answers over the socket. Standard library only.

When Zamburak closes stdin (the run is over), the socket's write side is shut, and the relay exits once the
host has closed its side."""

from __future__ import annotations

import os
import socket
import sys
import threading

SOCKET_ENV = "ZAMBURAK_TOOLS_SOCKET"


def main() -> int:
    path = os.environ.get(SOCKET_ENV)
    if not path:
        sys.stderr.write(f"relay: {SOCKET_ENV} is not set: name it in the server's `env:` in the policy\n")
        return 1
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as e:
        sys.stderr.write(f"relay: cannot reach the tools' host at {path}: {e}\n")
        return 1

    def upstream() -> None:
        stdin = sys.stdin.buffer
        while True:
            chunk = stdin.read1(65536)  # type: ignore[union-attr]  # a BufferedReader: stdin is a pipe
            if not chunk:
                break
            sock.sendall(chunk)
        sock.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    out = sys.stdout.buffer
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        out.write(chunk)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
