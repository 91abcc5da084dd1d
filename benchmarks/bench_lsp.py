"""Benchmark a real ``tfcoach-lsp`` process over stdio, optionally beside pylsp.

Figures (on a generated ~5,000-line TensorFlow file):

* start: process spawn -> ``initialize`` result (median over ``--starts`` processes);
* didOpen -> publishDiagnostics and didChange -> publishDiagnostics, median of 10;
* hover latency p50/p95 over 100 positions (on TF names and elsewhere).

The server normally waits ``debounceMs`` (200 ms) after an edit before analysing,
so that typing does not queue analyses. That wait is deliberate latency, not work:
the benchmark starts the server with ``initializationOptions: {"debounceMs": 0}``
so didChange -> publish measures analysis + conversion + transport only. Add the
debounce (200 ms by default) for what a user sees after the last keystroke.

pylsp (python-lsp-server, pyflakes as its linter) is measured the same way on the
same file when ``--pylsp PATH`` names its executable, or when the scratch venv
``/tmp/pylsp-venv`` exists (``python3 -m venv /tmp/pylsp-venv &&
/tmp/pylsp-venv/bin/pip install python-lsp-server pyflakes``; keep it out of the
repo). pylsp debounces linting by a fixed 0.5 s that no setting changes, so its
publish figures include that wait. Its jedi hover is pointed at this interpreter
(``pylsp.plugins.jedi.environment``) so that it sees the same packages.

Usage: ``python benchmarks/bench_lsp.py [--lines N] [--starts N] [--pylsp PATH |
--no-pylsp] [--json]``. No assertions: it prints figures and the targets beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"change_median_ms": 200.0, "hover_p95_ms": 20.0, "initialize_ms": 1000.0}
SCRATCH_PYLSP = Path("/tmp/pylsp-venv/bin/pylsp")
PYLSP_LINT_DEBOUNCE_MS = 500.0  # pylsp.python_lsp.LINT_DEBOUNCE_S

BLOCK = """
class Model{n}(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.w{n} = tf.Variable(tf.random.normal([4, 4]))
        self.b{n} = tf.Variable(tf.zeros([4]))

    def call(self, x):
        return tf.matmul(x, self.w{n}) + self.b{n}


@tf.function
def train_step{n}(model, x, y, lr):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    print("step", {n})
    for g, v in zip(grads, model.trainable_variables):
        v.assign_sub(lr * g)
    return loss


def update{n}(w, g, lr=0.01):
    w = tf.Variable(w)
    w = w - lr * g
    x = tf.constant([1, 2, 3])
    y = tf.cast(x, tf.float32) * 0.5
    tf.print(y)
    return w
"""


def generate(lines: int) -> str:
    head = "import numpy as np\nimport tensorflow as tf\n"
    body = []
    n = 0
    while (head + "".join(body)).count("\n") < lines:
        body.append(BLOCK.format(n=n))
        n += 1
    return head + "".join(body)


class Client:
    """A minimal JSON-RPC client over the server's stdio."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 120) -> Any:
        self._next_id += 1
        request_id = self._next_id
        self.send({"id": request_id, "method": method, "params": params})
        message = self.wait(lambda m: m.get("id") == request_id and "method" not in m, timeout)
        if "error" in message:
            raise RuntimeError(message["error"])
        return message.get("result")

    def wait(self, predicate: Any, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.001))
            if "method" in message and "id" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})
            if predicate(message):
                return message

    def published(self, uri: str, version: int | None = None) -> dict[str, Any]:
        return self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and (version is None or m["params"].get("version", version) == version)
            )
        )

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def hover_positions(text: str, count: int) -> list[tuple[int, int]]:
    lines = text.split("\n")
    names = ("tf.Variable", "tf.function", "tape.gradient", "v.assign_sub", "tf.cast", "tf.print")
    found = []
    for row, line in enumerate(lines):
        for name in names:
            column = line.find(name)
            if column >= 0:
                found.append((row, column + len(name) - 2))
        if line.strip() and len(found) % 3 == 0:
            found.append((row, len(line) // 2))  # somewhere else on a code line
    step = max(len(found) // count, 1)
    return found[::step][:count]


@dataclass(frozen=True)
class Target:
    """A language server to measure and how to talk to it."""

    label: str
    argv: list[str]
    env: dict[str, str]
    init_options: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None  # sent as workspace/didChangeConfiguration
    notes: list[str] = field(default_factory=list)


def tfcoach_target() -> Target:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return Target(
        "tfcoach-lsp",
        [sys.executable, "-m", "lsp_server"],
        env,
        init_options={"debounceMs": 0},
        notes=["tfcoach-lsp: debounce set to 0; a user sees +200 ms (debounceMs default)"],
    )


def pylsp_target(executable: Path) -> Target:
    return Target(
        "pylsp",
        [str(executable)],
        dict(os.environ),
        settings={"pylsp": {"plugins": {"jedi": {"environment": sys.executable}}}},
        notes=[
            f"pylsp: publish figures include its fixed {PYLSP_LINT_DEBOUNCE_MS:.0f} ms lint "
            "debounce; diagnostics are pyflakes'; hover is jedi's"
        ],
    )


def start(target: Target, root: Path) -> tuple[Client, float, dict[str, Any]]:
    """Spawn, initialize; returns the client, ms to the initialize result, serverInfo."""
    client = Client(target.argv, target.env)
    result = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": {},
            "initializationOptions": target.init_options,
        },
    )
    elapsed = (time.perf_counter() - client.started) * 1000
    client.notify("initialized", {})
    if target.settings is not None:
        client.notify("workspace/didChangeConfiguration", {"settings": target.settings})
    return client, elapsed, (result or {}).get("serverInfo") or {}


def open_document(client: Client, uri: str, text: str) -> dict[str, Any]:
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    return client.published(uri, 1)


def measure_opens(client: Client, root: Path, text: str) -> dict[str, float]:
    opens = []
    diagnostics = 0
    for index in range(10):
        uri = (root / f"open_{index}.py").as_uri()
        began = time.perf_counter()
        diagnostics = len(open_document(client, uri, text)["params"]["diagnostics"])
        opens.append((time.perf_counter() - began) * 1000)
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        client.published(uri)
    return {"diagnostics": float(diagnostics), "open_median_ms": statistics.median(opens)}


def measure_changes(client: Client, uri: str, text: str) -> dict[str, float]:
    """Alternate one line between a finding and its fix, ten versions."""
    changes = []
    row = text.split("\n").index("    w = w - lr * g")
    for version in range(2, 12):
        edit = "    w = w - lr * g" if version % 2 else "    w.assign_sub(lr * g)"
        began = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": row, "character": 0},
                            "end": {"line": row + 1, "character": 0},
                        },
                        "text": edit + "\n",
                    }
                ],
            },
        )
        client.published(uri, version)
        changes.append((time.perf_counter() - began) * 1000)
    return {"change_median_ms": statistics.median(changes)}


def has_content(result: Any) -> bool:
    """A hover result that shows something (pylsp answers ``{"contents": ""}``)."""
    if not result:
        return False
    contents = result.get("contents")
    if isinstance(contents, dict):
        return bool(contents.get("value"))
    return bool(contents)


def measure_hovers(client: Client, uri: str, text: str) -> dict[str, float]:
    hovers = []
    hits = 0
    for line, character in hover_positions(text, 100):
        began = time.perf_counter()
        result = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
        )
        hovers.append((time.perf_counter() - began) * 1000)
        hits += has_content(result)
    return {
        "hover_p50_ms": percentile(hovers, 0.50),
        "hover_p95_ms": percentile(hovers, 0.95),
        "hover_first_ms": hovers[0],
        "hover_count": float(len(hovers)),
        "hover_cards": float(hits),
    }


def run(target: Target, text: str, starts: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"lines": float(text.count("\n"))}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        initialize = []
        for _ in range(starts - 1):  # extra processes, only for the start-up figure
            client, elapsed, _info = start(target, root)
            initialize.append(elapsed)
            client.close()
        client, elapsed, info = start(target, root)
        initialize.append(elapsed)
        figures["server"] = " ".join(str(v) for v in (info.get("name"), info.get("version")) if v)
        figures["initialize_ms"] = statistics.median(initialize)
        figures["initialize_max_ms"] = max(initialize)
        try:
            figures.update(measure_opens(client, root, text))
            uri = (root / "edited.py").as_uri()
            open_document(client, uri, text)
            figures.update(measure_changes(client, uri, text))
            figures.update(measure_hovers(client, uri, text))
        finally:
            client.close()
    return figures


def pylsp_executable(args: argparse.Namespace) -> Path | None:
    if args.no_pylsp:
        return None
    if args.pylsp is not None:
        return Path(args.pylsp)
    return SCRATCH_PYLSP if SCRATCH_PYLSP.is_file() else None


ROWS = [
    ("initialize_ms", "process start -> initialize result (median of starts)"),
    ("open_median_ms", "didOpen -> publishDiagnostics (median of 10)"),
    ("change_median_ms", "didChange -> publishDiagnostics (median of 10)"),
    ("hover_p50_ms", "hover p50 (100 positions)"),
    ("hover_p95_ms", "hover p95 (100 positions)"),
    ("hover_first_ms", "first hover"),
]


def report(results: dict[str, dict[str, Any]], starts: int) -> None:
    ours = results["tfcoach-lsp"]
    theirs = results.get("pylsp")
    print(
        f"On a {ours['lines']:.0f}-line TF file; initialize is the median of {starts} starts "
        f"(slowest: tfcoach-lsp {ours['initialize_max_ms']:.0f} ms"
        + (f", pylsp {theirs['initialize_max_ms']:.0f} ms)" if theirs else ")")
    )
    other = theirs["server"] if theirs else "pylsp"
    print(f"  {'':<56} {'tfcoach-lsp':>12} {other:>14}  target")
    for key, label in ROWS:
        value = f"{theirs[key]:9.1f} ms" if theirs else "           -"
        target = f"<= {TARGETS[key]:.0f} ms" if key in TARGETS else ""
        print(f"  {label:<56} {ours[key]:9.1f} ms {value:>14}  {target}")
    counts = (("diagnostics", "diagnostics published"), ("hover_cards", "hovers with content"))
    for key, label in counts:
        value = f"{theirs[key]:12.0f}" if theirs else "           -"
        print(f"  {label:<56} {ours[key]:12.0f} {value:>14}")
    for figures in results.values():
        for note in figures["notes"]:
            print(f"  note: {note}")
    if theirs is None:
        print("  pylsp: not measured (pass --pylsp)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--starts", type=int, default=5, help="processes timed to initialize")
    parser.add_argument("--pylsp", default=None, help="pylsp executable to compare with")
    parser.add_argument("--no-pylsp", action="store_true", help=f"ignore {SCRATCH_PYLSP}")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.starts < 1:
        parser.error("--starts must be at least 1")
    text = generate(args.lines)
    targets = [tfcoach_target()]
    pylsp = pylsp_executable(args)
    if pylsp is not None:
        if not pylsp.is_file():
            parser.error(f"--pylsp: no such file: {pylsp}")
        targets.append(pylsp_target(pylsp))
    results: dict[str, dict[str, Any]] = {}
    for target in targets:
        results[target.label] = run(target, text, args.starts) | {"notes": target.notes}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        report(results, args.starts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
