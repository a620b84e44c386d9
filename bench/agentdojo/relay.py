"""Connects a server's stdio to the episode host's unix socket: `zamburak run` starts this as the suite's MCP
server (`python3 -S relay.py`, standard library only, so it starts in milliseconds), and the harness, which
has AgentDojo loaded once per suite, answers over the socket named by ZAMBURAK_AGENTDOJO_SOCKET.

When Zamburak closes stdin (the run is over), the socket's write side is shut, and this exits once the host
has closed its side: the host then knows the episode's calls are all done."""
import os
import socket
import sys
import threading

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    sock.connect(os.environ["ZAMBURAK_AGENTDOJO_SOCKET"])
except (KeyError, OSError) as e:
    sys.stderr.write(f"relay: cannot reach the episode host: {e}\n")
    sys.exit(1)


def upstream():
    stdin = sys.stdin.buffer
    while True:
        chunk = stdin.read1(65536)
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
