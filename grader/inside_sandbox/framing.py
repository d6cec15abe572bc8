"""Messages between the grader and a sandboxed child: a 4-byte length, then that many bytes of UTF-8 JSON."""

from __future__ import annotations

import json
import socket
import struct
import time

HEADER = struct.Struct("!I")
ITEM_LIMIT = 500  # outputs kept per cell
TOTAL_LIMIT = 8 << 20  # characters of all outputs of a cell together, tracebacks included


class MessageTooLarge(Exception):
    """The peer announced a message longer than the reader accepts."""


def send(connection: socket.socket, message: object) -> None:
    data = json.dumps(message, allow_nan=False).encode()
    connection.sendall(HEADER.pack(len(data)) + data)


def receive(connection: socket.socket, limit: int = 1 << 30, deadline: float | None = None) -> object | None:
    """The next message, or None at end of stream; MessageTooLarge if it announces more than `limit` bytes.

    `deadline` (a time.monotonic() value): TimeoutError once it passes, however the peer spaces what it sends.
    """
    header = _exactly(connection, HEADER.size, deadline)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > limit:
        raise MessageTooLarge(f"a message of {size} bytes (at most {limit} accepted)")
    data = _exactly(connection, size, deadline)
    if data is None:
        return None
    return json.loads(data)


def _exactly(connection: socket.socket, size: int, deadline: float | None) -> bytes | None:
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the deadline passed")
            connection.settimeout(left)
        chunk = connection.recv(min(missing, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
