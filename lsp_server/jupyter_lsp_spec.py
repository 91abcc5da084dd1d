"""jupyter_lsp (JupyterLab-LSP) server spec, registered as entry point
``jupyter_lsp_spec_v1: tfcoach-lsp``.

jupyter_lsp calls ``spec(manager)`` and validates the returned mapping against
its schema (spec version 2). The server runs with the same interpreter as the
Jupyter server, so no PATH lookup is needed. jupyterlab-lsp sends a notebook as one
Python text document at its ``.ipynb`` path; the server leaves those to the tfcoach
JupyterLab extension (``--notebooks-in-jupyterlab``).
"""

from __future__ import annotations

import sys
from typing import Any

from lsp_server import SERVER_NAME

SPEC_VERSION = 2

CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "tfcoach language server",
    "type": "object",
    "properties": {
        "tfcoach.select": {
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": "^TFC[0-9]{3}$"},
            "default": None,
            "description": "Only report these rule codes (default: all rules).",
        },
        "tfcoach.ignore": {
            "type": "array",
            "items": {"type": "string", "pattern": "^TFC[0-9]{3}$"},
            "default": [],
            "description": "Never report these rule codes.",
        },
        "tfcoach.courseBaseUrl": {
            "type": ["string", "null"],
            "default": None,
            "description": "Base URL of the course; links become <base>/<module>#<section>.",
        },
    },
}


def spec(manager: Any = None) -> dict[str, dict[str, Any]]:
    """Return ``{"tfcoach-lsp": <spec>}`` for jupyter_lsp's LanguageServerManager."""
    return {
        SERVER_NAME: {
            # The tfcoach JupyterLab extension already shows notebook findings and
            # cards: the server leaves notebooks to it (one card per name, one mark per
            # finding) and still serves .py files in Lab's file editor.
            "argv": [sys.executable, "-m", "lsp_server", "--notebooks-in-jupyterlab"],
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
