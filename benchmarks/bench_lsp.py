"""Benchmark a real ``tfcoach-lsp`` process over stdio.

Figures (on a generated ~5,000-line TensorFlow file):

* start: process spawn -> ``initialize`` result;
* didOpen -> publishDiagnostics and didChange -> publishDiagnostics, median of 10;
* hover latency p50/p95 over 100 positions (on TF names and elsewhere).

The server normally waits ``debounceMs`` (200 ms) after an edit before analysing,
so that typing does not queue analyses. That wait is deliberate latency, not work:
the benchmark starts the server with ``initializationOptions: {"debounceMs": 0}``
so didChange -> publish measures analysis + conversion + transport only. Add the
debounce (200 ms by default) for what a user sees after the last keystroke.

Usage: ``python benchmarks/bench_lsp.py [--lines N] [--json]``. No assertions:
it prints figures and the targets beside them.
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
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"change_ms": 200.0, "hover_p95_ms": 20.0, "initialize_ms": 1000.0}

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

    def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        message = self.wait(lambda m: m.get("id") == self._next_id and "method" not in m)
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
                and (version is None or m["params"].get("version") == version)
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


def run(lines: int) -> dict[str, float]:
    text = generate(lines)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    figures: dict[str, float] = {"lines": float(text.count("\n"))}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client = Client([sys.executable, "-m", "lsp_server"], env)
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {"debounceMs": 0},
            },
        )
        figures["initialize_ms"] = (time.perf_counter() - client.started) * 1000
        client.notify("initialized", {})
        try:
            opens = []
            for index in range(10):
                uri = (root / f"open_{index}.py").as_uri()
                start = time.perf_counter()
                client.notify(
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": uri,
                            "languageId": "python",
                            "version": 1,
                            "text": text,
                        }
                    },
                )
                result = client.published(uri, 1)
                opens.append((time.perf_counter() - start) * 1000)
                client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                client.published(uri)
            figures["diagnostics"] = float(len(result["params"]["diagnostics"]))
            figures["open_median_ms"] = statistics.median(opens)

            uri = (root / "edited.py").as_uri()
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
            client.published(uri, 1)
            changes = []
            row = text.split("\n").index("    w = w - lr * g")
            for version in range(2, 12):
                edit = "    w = w - lr * g" if version % 2 else "    w.assign_sub(lr * g)"
                start = time.perf_counter()
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
                changes.append((time.perf_counter() - start) * 1000)
            figures["change_median_ms"] = statistics.median(changes)

            hovers = []
            hits = 0
            for line, character in hover_positions(text, 100):
                start = time.perf_counter()
                result = client.request(
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": uri},
                        "position": {"line": line, "character": character},
                    },
                )
                hovers.append((time.perf_counter() - start) * 1000)
                hits += result is not None
            figures["hover_p50_ms"] = percentile(hovers, 0.50)
            figures["hover_p95_ms"] = percentile(hovers, 0.95)
            figures["hover_first_ms"] = hovers[0]
            figures["hover_count"] = float(len(hovers))
            figures["hover_cards"] = float(hits)
        finally:
            client.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args.lines)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"tfcoach-lsp on a {figures['lines']:.0f}-line TF file "
        f"({figures['diagnostics']:.0f} diagnostics)"
    )
    rows = [
        ("process start -> initialize result", figures["initialize_ms"], TARGETS["initialize_ms"]),
        ("didOpen -> publishDiagnostics (median of 10)", figures["open_median_ms"], None),
        (
            "didChange -> publishDiagnostics (median of 10, debounce 0)",
            figures["change_median_ms"],
            TARGETS["change_ms"],
        ),
        ("hover p50 (100 positions)", figures["hover_p50_ms"], None),
        ("hover p95 (100 positions)", figures["hover_p95_ms"], TARGETS["hover_p95_ms"]),
        ("first hover (builds the symbol index)", figures["hover_first_ms"], None),
    ]
    for label, value, target in rows:
        goal = f"(target <= {target:.0f} ms)" if target else ""
        print(f"  {label:<58} {value:8.1f} ms {goal}")
    print(
        f"  hover answered with a card at {figures['hover_cards']:.0f} of "
        f"{figures['hover_count']:.0f} positions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
