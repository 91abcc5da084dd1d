"""The JSON-RPC protocol, hardened: a request whose params do not match the LSP
schema gets an ``InvalidParams`` error response (pygls 2.1 logs it and never
answers, leaving the client waiting forever)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)

# ``handle_message`` drops messages whose ``jsonrpc`` is not "2.0" with a warning.
_ALREADY_ANSWERED = SimpleNamespace(jsonrpc="invalid: already answered")


class TfCoachProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            method = data.get("method")
            if "id" in data and method is not None:
                response = JsonRpcInvalidParams(f"invalid params for {method!r}: {error}")
                self._send_response(data["id"], None, response.to_response_error())
            else:
                log.warning("dropping malformed %s message", method or "JSON-RPC")
            return _ALREADY_ANSWERED
