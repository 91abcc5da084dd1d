"""``tfcoach-lsp``: start the language server on stdio (default) or TCP."""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsp_server import SERVER_NAME, __version__

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=SERVER_NAME,
        description=(
            "tfcoach language server: TensorFlow pitfalls as diagnostics, hover cards "
            "and quick fixes, each linked to the course. Speaks LSP on stdio by default."
        ),
    )
    parser.add_argument("--version", action="version", version=f"{SERVER_NAME} {__version__}")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="communicate over stdin/stdout (the default)"
    )
    transport.add_argument("--tcp", action="store_true", help="listen on a TCP socket instead")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default: %(default)s)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default: %(default)s)")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level for messages written to stderr (default: %(default)s)",
    )
    parser.add_argument("--log-file", default=None, help="also append logs to this file")
    parser.add_argument(
        "--notebooks-in-jupyterlab",
        action="store_true",
        help=(
            "leave notebooks opened as text documents (jupyterlab-lsp sends a notebook as one "
            "Python text document at its .ipynb path) to the tfcoach JupyterLab extension, "
            "which shows their findings and hover cards itself: no diagnostics, hovers or "
            "fixes for them here, so that no name gets two cards"
        ),
    )
    return parser


def configure_logging(level: str, log_file: str | None) -> None:
    """Logs go to stderr (never stdout: in stdio mode stdout carries the protocol)."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(
        level=getattr(logging, level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    if level != "DEBUG":
        # pygls logs every message body at INFO; keep that for --log-level DEBUG.
        logging.getLogger("pygls").setLevel(max(logging.WARNING, getattr(logging, level)))


def _create_server(notebooks_in_jupyterlab: bool = False) -> LanguageServer:
    """Import and build the server with the cyclic GC paused.

    Importing pygls builds ~600 attrs classes (lsprotocol); every later allocation
    burst then triggers full collections that rescan all of them, which costs more
    than the imports themselves. Those objects live as long as the process, so
    they are moved to the permanent generation (``gc.freeze``) before collection
    resumes: later collections (during analysis or a hover) skip them too.
    """
    gc.disable()
    try:
        from lsp_server.server import create_server

        server = create_server(notebooks_in_jupyterlab=notebooks_in_jupyterlab)
    finally:
        gc.freeze()
        gc.enable()
    return server


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.tcp and not 0 < args.port < 65536:
        build_parser().error(f"--port must be between 1 and 65535, got {args.port}")
    configure_logging(args.log_level, args.log_file)
    # Analysis and indexing run on worker threads; a shorter GIL switch interval keeps
    # the protocol thread (hover, code actions) responsive while they run.
    sys.setswitchinterval(0.001)

    server = _create_server(notebooks_in_jupyterlab=args.notebooks_in_jupyterlab)
    # This process runs the language server only: its analyses and hover indexes may
    # pause the collector on their worker threads (see ``gc_paused``).
    from jupyterlab_tfcoach.analysis.engine import pause_gc_in_any_thread

    pause_gc_in_any_thread()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
