"""A huge document in a real ``tfcoach-lsp`` process (issue #24): does it stall the rest?

One server over stdio, with a small file already open and analysed. Then, at once:

1. ``didOpen`` of a generated TensorFlow file of ``--megabytes`` (default 5) MiB of text;
2. ``didOpen`` of a second small file;
3. a hover in the first small file: a request answered while the huge one is handled;
   then the time from the opens to the second small file's ``publishDiagnostics``: what
   another document waits while the huge one is handled;
4. the first hover in the huge file, on ``tf.function``;
5. the huge file's own ``publishDiagnostics`` (with the server's default size limit: the
   one "too large to check" diagnostic).

Last, the peak resident memory of the server process (``VmHWM`` in
``/proc/<pid>/status``, Linux only).

``--max-document-characters N`` starts the server with that limit in its
``initializationOptions`` (``maxDocumentCharacters``); without it the server's default
applies. A limit above the file's size (``--max-document-characters 100000000``) shows
what analysing the huge file costs.

Usage: ``python benchmarks/bench_lsp_huge.py [--megabytes 5] [--max-document-characters N]
[--json]``. No assertions: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lsp import Client, generate, tfcoach_target

SMALL_LINES = 200


def huge_text(megabytes: float) -> str:
    """A generated TensorFlow file of at least ``megabytes`` MiB (ASCII: characters = bytes)."""
    wanted = int(megabytes * 1024 * 1024)
    block = generate(1000)
    copies = -(-wanted // len(block))
    return block * copies


def peak_rss_mib(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def hover_params(uri: str, text: str, name: str) -> dict[str, Any]:
    for row, line in enumerate(text.split("\n")):
        column = line.find(name)
        if column >= 0:
            return {
                "textDocument": {"uri": uri},
                "position": {"line": row, "character": column + len(name) - 2},
            }
    raise ValueError(f"{name} not in the text")


class StampedQueue(queue.Queue[dict[str, Any]]):
    """The reader thread's queue, noting when each message arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: dict[int, float] = {}

    def put(self, item: dict[str, Any], block: bool = True, timeout: float | None = None) -> None:
        self.arrived[id(item)] = time.perf_counter()
        super().put(item, block, timeout)


class KeepingClient(Client):
    """Keeps every ``publishDiagnostics`` passed over while waiting for something else
    (the huge file's may arrive while the benchmark waits for a small file's), with the
    time it arrived."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        super().__init__(argv, env)
        # Replaces the base class's plain queue before the server has anything to say.
        self.messages = StampedQueue()
        self.kept: list[dict[str, Any]] = []

    def wait(self, predicate: Any, timeout: float = 300) -> dict[str, Any]:
        for index, message in enumerate(self.kept):
            if predicate(message):
                return self.kept.pop(index)

        def keep(message: dict[str, Any]) -> bool:
            if predicate(message):
                return True
            if message.get("method") == "textDocument/publishDiagnostics":
                self.kept.append(message)
            return False

        return super().wait(keep, timeout)

    def published_at(self, uri: str, version: int) -> tuple[float, dict[str, Any]]:
        """The publish of ``uri`` at ``version`` and when (``perf_counter``) it arrived."""
        message = self.published(uri, version)
        assert isinstance(self.messages, StampedQueue)
        return self.messages.arrived[id(message)], message


def open_notification(client: Client, uri: str, text: str) -> None:
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )


def run(megabytes: float, max_characters: int | None) -> dict[str, Any]:
    target = tfcoach_target()
    options: dict[str, Any] = {"debounceMs": 0}
    if max_characters is not None:
        options["maxDocumentCharacters"] = max_characters
    small = generate(SMALL_LINES)
    huge = huge_text(megabytes)
    figures: dict[str, Any] = {
        "huge_characters": len(huge),
        "huge_lines": huge.count("\n"),
        "max_document_characters": max_characters,
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client = KeepingClient(target.argv, target.env)
        try:
            client.request(
                "initialize",
                {
                    "processId": None,
                    "rootUri": root.as_uri(),
                    "capabilities": {},
                    "initializationOptions": options,
                },
            )
            client.notify("initialized", {})
            first_small = (root / "small.py").as_uri()
            open_notification(client, first_small, small)
            client.published(first_small, 1)
            client.request("textDocument/hover", hover_params(first_small, small, "tf.function"))
            figures["rss_before_mib"] = peak_rss_mib(client.process.pid)

            huge_uri = (root / "huge.py").as_uri()
            second_small = (root / "small2.py").as_uri()
            small_hover = hover_params(first_small, small, "tf.Variable")
            huge_hover = hover_params(huge_uri, huge, "tf.function")  # not timed: 5 MiB split
            began = time.perf_counter()
            open_notification(client, huge_uri, huge)
            open_notification(client, second_small, small)
            asked = time.perf_counter()
            client.request("textDocument/hover", small_hover)
            figures["small_hover_ms"] = (time.perf_counter() - asked) * 1000

            arrived, _ = client.published_at(second_small, 1)
            figures["small_open_publish_ms"] = (arrived - began) * 1000

            asked = time.perf_counter()
            card = client.request("textDocument/hover", huge_hover)
            figures["huge_first_hover_ms"] = (time.perf_counter() - asked) * 1000
            figures["huge_hover_has_card"] = bool(card)

            arrived, published = client.published_at(huge_uri, 1)
            figures["huge_publish_ms"] = (arrived - began) * 1000
            diagnostics = published["params"]["diagnostics"]
            figures["huge_diagnostics"] = len(diagnostics)
            figures["huge_first_message"] = diagnostics[0]["message"] if diagnostics else None
            figures["peak_rss_mib"] = peak_rss_mib(client.process.pid)
        finally:
            figures["exit_ms"] = close(client)
    return figures


def close(client: Client) -> float | None:
    """shutdown + exit; the ms until the process ended, None if it had to be killed."""
    began = time.perf_counter()
    try:
        client.close()  # kills the process when it outlives exit by 10 s
    except subprocess.TimeoutExpired:
        return None
    return (time.perf_counter() - began) * 1000


ROWS = [
    ("small_hover_ms", "hover in another file, sent just after", "ms"),
    ("small_open_publish_ms", "another file: didOpen -> publishDiagnostics", "ms"),
    ("huge_first_hover_ms", "first hover in the huge file", "ms"),
    ("huge_publish_ms", "huge file: didOpen -> publishDiagnostics", "ms"),
    ("rss_before_mib", "server peak RSS before the huge file", "MiB"),
    ("peak_rss_mib", "server peak RSS at the end", "MiB"),
    ("exit_ms", "shutdown + exit -> process ended", "ms"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5.0, help="MiB of text (default 5)")
    parser.add_argument(
        "--max-document-characters",
        type=int,
        default=None,
        help="initializationOptions.maxDocumentCharacters (default: the server's default)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args.megabytes, args.max_document_characters)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    limit = figures["max_document_characters"]
    print(
        f"A {figures['huge_characters'] / 2**20:.1f} MiB file ({figures['huge_lines']:,} lines), "
        f"limit: {'server default' if limit is None else f'{limit:,} characters'}"
    )
    for key, label, unit in ROWS:
        value = figures[key]
        if value is not None:
            shown = f"{value:9.1f} {unit}"
        else:
            shown = "killed after 10 s" if key == "exit_ms" else "-"
        print(f"  {label:<48} {shown:>13}")
    print(
        f"  huge file: {figures['huge_diagnostics']} diagnostics, hover card: "
        f"{figures['huge_hover_has_card']}"
    )
    if figures["huge_first_message"]:
        print(f"  first diagnostic: {figures['huge_first_message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
