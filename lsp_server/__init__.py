"""tfcoach-lsp: the tfcoach knowledge core (``jupyterlab_tfcoach``) served over LSP.

Importing this package is cheap: it never imports TensorFlow, jupyter_server or
jedi (jedi is loaded lazily, only for the hover fallback).
"""

from __future__ import annotations

from jupyterlab_tfcoach._version import __version__

SERVER_NAME = "tfcoach-lsp"
# Default of the setting ``maxDocumentCharacters`` (see ``size_limit.py``); here so that the
# jupyter_lsp spec's schema can name it without importing the analysis.
DEFAULT_MAX_DOCUMENT_CHARACTERS = 1_048_576

__all__ = ["DEFAULT_MAX_DOCUMENT_CHARACTERS", "SERVER_NAME", "__version__"]
