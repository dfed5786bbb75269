"""The language server's JSON-RPC stream, bounded and always answered (``server``).

pygls reads a message of any announced ``Content-Length`` whole (``Content-Length: 10^12`` was
a ``MemoryError`` and the end of the server), drops a request whose parameters do not validate
(a position of ``-1`` or past 2^31: the client waited forever), and ignores every request after
``shutdown`` without answering.  Here:

* :class:`BoundedStdin` (what the server reads): a header line is at most
  :data:`MAX_HEADER_BYTES`; a body larger than :data:`MAX_MESSAGE_BYTES` is answered at once
  with an ``InvalidRequest`` error (id ``null``: the id is inside the body it did not read) and
  is then skipped in chunks, never held in memory;
* :class:`Protocol` answers a request whose parameters do not validate with ``InvalidParams``
  (its id is known), and a request after ``shutdown`` with ``InvalidRequest``, as the LSP
  specification asks; ``exit`` then ends the process with 0 after ``shutdown``, 1 without.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import BinaryIO, Optional, Union

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

MAX_HEADER_BYTES = 64 * 1024  # one header line
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one message's body (a 16 MiB document, JSON-escaped)
TOO_LARGE = "$/rocm-lint/tooLarge"  # the stand-in message of a body that was skipped
_CHUNK = 1 << 20
_ANSWERED = SimpleNamespace(jsonrpc=None, answered=True)  # a message already answered here


class BoundedStdin:
    """``stdin`` as pygls reads it (``readline``, ``read(n)``), every read bounded.  A body over
    :data:`MAX_MESSAGE_BYTES` is answered at once (its stand-in :data:`TOO_LARGE` message) and
    its bytes are skipped, never kept, before the next header is read: the stream stays in step
    with the client."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.skip = 0  # bytes of a refused body still to be read past

    def readline(self) -> bytes:
        while self.skip > 0:
            chunk = self.raw.read(min(self.skip, _CHUNK))
            if not chunk:
                return b""  # the client went away mid-message: the end of the stream
            self.skip -= len(chunk)
        return self.raw.readline(MAX_HEADER_BYTES)

    def read(self, n: int) -> bytes:
        if n <= MAX_MESSAGE_BYTES:
            return self.raw.read(n)
        self.skip = n
        return json.dumps({"jsonrpc": "2.0", "method": TOO_LARGE, "params": {"length": n}}).encode()


class Protocol(LanguageServerProtocol):
    """pygls' protocol, answering every request (see the module's docstring)."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id = data.get("id") if isinstance(data, dict) else None
            if (
                isinstance(data, dict)
                and isinstance(data.get("method"), str)
                and isinstance(msg_id, (int, str))
                and not isinstance(msg_id, bool)
            ):
                self._send_response(msg_id, None, exc.to_response_error())
                return _ANSWERED
            raise

    def handle_message(self, message) -> None:
        if message is _ANSWERED:
            return
        if getattr(message, "method", None) == TOO_LARGE:
            params = getattr(message, "params", None)
            length = params.get("length") if isinstance(params, dict) else getattr(params, "length", None)
            error = {
                "code": JsonRpcInvalidRequest.CODE,
                "message": f"message too large ({length} bytes, limit {MAX_MESSAGE_BYTES}); skipped",
            }
            self._send_data({"jsonrpc": "2.0", "id": None, "error": error})  # its id was not read
            return
        msg_id: Optional[Union[str, int]] = getattr(message, "id", None)
        if self._shutdown and msg_id is not None and getattr(message, "method", "") not in ("", types.EXIT):
            self._send_response(
                msg_id,
                None,
                types.ResponseError(
                    code=JsonRpcInvalidRequest.CODE,
                    message="the server is shut down: only `exit` is answered",
                ),
            )
            return
        super().handle_message(message)
