"""jupyter_lsp (JupyterLab-LSP) server spec, registered as entry point
``jupyter_lsp_spec_v1: tfcoach-lsp``.

jupyter_lsp calls ``spec(manager)`` and validates the returned mapping against
its schema (spec version 2). The server runs with the same interpreter as the
Jupyter server, so no PATH lookup is needed, and nothing is imported from the
working directory jupyter_lsp starts it in (a user's folder, which may hold an
``lsp_server/`` or an ``argparse.py``): see ``server_command``. jupyterlab-lsp
sends a notebook as one Python text document at its ``.ipynb`` path; the server
leaves those to the tfcoach JupyterLab extension (``--notebooks-in-jupyterlab``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lsp_server import DEFAULT_MAX_DOCUMENT_CHARACTERS, SERVER_NAME

SPEC_VERSION = 2
CONSOLE_SCRIPTS = ("tfcoach-lsp", "tfcoach-lsp.exe")

# A rule code or a prefix of codes, in any case: what the core's code lists accept.
CODE_OR_PREFIX = r"^\s*[Tt][Ff][Cc][0-9]{0,3}\s*$"
CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "tfcoach language server",
    "type": "object",
    "properties": {
        "tfcoach.select": {
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": CODE_OR_PREFIX},
            "default": None,
            "description": "Only report these rule codes or prefixes (default: all rules).",
        },
        "tfcoach.ignore": {
            "type": "array",
            "items": {"type": "string", "pattern": CODE_OR_PREFIX},
            "default": [],
            "description": "Never report these rule codes or prefixes (TFC00: TFC001-TFC009).",
        },
        "tfcoach.courseBaseUrl": {
            "type": ["string", "null"],
            "default": None,
            "description": "Base URL of the course; links become <base>/<module>#<section>.",
        },
        "tfcoach.maxDocumentCharacters": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_MAX_DOCUMENT_CHARACTERS,
            "description": (
                "Files larger than this many characters are not checked (one note says so); "
                "hovers in them show nothing."
            ),
        },
    },
}


def console_script(python: str) -> str | None:
    """The ``tfcoach-lsp`` script installed next to ``python`` (a venv's or conda env's
    ``bin/`` or ``Scripts\\``), or None."""
    folder = Path(python).parent
    for name in CONSOLE_SCRIPTS:
        candidate = folder / name
        if candidate.is_file():
            return str(candidate)
    return None


def module_command(python: str) -> list[str]:
    """``python -m lsp_server`` without the working directory on ``sys.path``.

    ``-m`` alone puts the working directory first on ``sys.path``, so its
    ``lsp_server/`` or ``argparse.py`` would be imported instead of the installed
    ones. ``-P`` (Python 3.11+, which ``requires-python`` asks for) leaves it out and
    keeps the user site and ``PYTHONPATH``.
    """
    return [python, "-P", "-m", "lsp_server"]


def server_command(python: str | None = None) -> list[str]:
    """How to start the server with ``python`` (default: this interpreter).

    The console script next to the interpreter when there is one: it is run by the
    interpreter named in its first line, with its own folder (not the working
    directory) first on ``sys.path``. Otherwise ``module_command``.
    """
    python = python or sys.executable
    script = console_script(python)
    return [script] if script is not None else module_command(python)


def spec(manager: Any = None) -> dict[str, dict[str, Any]]:
    """Return ``{"tfcoach-lsp": <spec>}`` for jupyter_lsp's LanguageServerManager."""
    return {
        SERVER_NAME: {
            # The tfcoach JupyterLab extension already shows notebook findings and
            # cards: the server leaves notebooks to it (one card per name, one mark per
            # finding) and still serves .py files in Lab's file editor.
            "argv": [*server_command(), "--notebooks-in-jupyterlab"],
            "languages": ["python"],
            "version": SPEC_VERSION,
            "display_name": "tfcoach (TensorFlow coach)",
            "mime_types": ["text/python", "text/x-ipython"],
            "requires_documents_on_disk": False,
            "install": {"pip": "pip install jupyterlab-tfcoach"},
            "config_schema": CONFIG_SCHEMA,
            "env": {"PYTHONUNBUFFERED": "1"},
        }
    }
