"""``tfcoach-lsp`` command line: --version, --help, stdio hygiene and --tcp."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import pytest

from lsp_server import __version__
from tests.lsp.helpers import SERVER_COMMAND, server_env

pytestmark = pytest.mark.timeout(60)


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*SERVER_COMMAND, *args], input=stdin, capture_output=True, env=server_env(), timeout=30
    )


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream: socket.socket) -> dict[str, object]:
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        chunk = stream.recv(1)
        if not chunk:
            raise ConnectionError("server closed the connection")
        header += chunk
    fields = dict(line.split(b":", 1) for line in header.strip().split(b"\r\n"))
    length = int(fields[b"Content-Length"])
    body = b""
    while len(body) < length:
        body += stream.recv(length - len(body))
    return json.loads(body)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.decode().strip() == f"tfcoach-lsp {__version__}"


def test_help_names_the_transports() -> None:
    result = run("--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    for option in ("--tcp", "--host", "--port", "--stdio", "--version"):
        assert option in text


STARTUP_PROBE = """
import gc, json, sys
from lsp_server.__main__ import _create_server
_create_server()
print(json.dumps({
    "gc_enabled": gc.isenabled(),
    "frozen": gc.get_freeze_count(),
    "loaded": sorted(m for m in ("jedi", "parso", "tensorflow", "jupyter_server")
                     if m in sys.modules),
}))
"""


def test_startup_loads_no_heavy_module_and_restores_the_gc() -> None:
    """Start-up cost (initialize <= 1 s): jedi is only loaded for the hover fallback, and
    the GC paused while the server is built runs again, with the start-up heap frozen."""
    result = subprocess.run(
        [SERVER_COMMAND[0], "-c", STARTUP_PROBE],
        capture_output=True,
        env=server_env(),
        timeout=30,
        check=True,
    )
    state = json.loads(result.stdout)
    assert state["loaded"] == []
    assert state["gc_enabled"] is True
    assert state["frozen"] > 10_000  # pygls + lsprotocol alone are far more objects


def test_bad_arguments_are_a_usage_error() -> None:
    result = run("--tcp", "--port", "not-a-port")
    assert result.returncode == 2
    assert b"--port" in result.stderr
    assert result.stdout == b""


def test_stdio_writes_only_protocol_to_stdout() -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None}
    stdin = frame(init) + frame(shutdown) + frame({"jsonrpc": "2.0", "method": "exit"})
    result = run("--log-level", "DEBUG", stdin=stdin)
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout
    bodies = []
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        assert head.startswith(b"Content-Length:"), out[:200]
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        bodies.append(json.loads(rest[:length]))
        out = rest[length:]
    assert [b.get("id") for b in bodies] == [1, 2]
    assert bodies[0]["result"]["serverInfo"] == {"name": "tfcoach-lsp", "version": __version__}
    assert b"DEBUG" in result.stderr  # the logs went to stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_tcp_serves_initialize() -> None:
    port = free_port()
    process = subprocess.Popen(
        [*SERVER_COMMAND, "--tcp", "--host", "127.0.0.1", "--port", str(port)],
        env=server_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        with connection:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            init["params"] = {"capabilities": {}}
            connection.sendall(frame(init))
            reply = read_message(connection)
            assert reply["id"] == 1
            capabilities = reply["result"]["capabilities"]  # type: ignore[index]
            assert capabilities["hoverProvider"] is True
            connection.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert read_message(connection)["id"] == 2
            connection.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # traitlets, via jupyter_lsp
def test_jupyter_lsp_spec_is_valid_and_starts_the_server() -> None:
    from jupyter_lsp.schema import LANGUAGE_SERVER_SPEC_MAP, SPEC_VERSION

    from lsp_server.jupyter_lsp_spec import spec

    specs = spec(None)
    assert list(specs) == ["tfcoach-lsp"]
    assert list(LANGUAGE_SERVER_SPEC_MAP.iter_errors(specs)) == []
    server = specs["tfcoach-lsp"]
    assert server["version"] == SPEC_VERSION
    assert server["languages"] == ["python"]
    # JupyterLab's tfcoach extension shows notebook findings and cards itself.
    assert "--notebooks-in-jupyterlab" in server["argv"]
    result = subprocess.run(
        [*server["argv"], "--version"], capture_output=True, env=server_env(), timeout=30
    )
    assert result.stdout.decode().strip() == f"tfcoach-lsp {__version__}"
