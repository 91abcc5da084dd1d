"""tfcoach-lsp: the tfcoach knowledge core (``jupyterlab_tfcoach``) served over LSP.

Importing this package is cheap: it never imports TensorFlow, jupyter_server or
jedi (jedi is loaded lazily, only for the hover fallback).
"""

from __future__ import annotations

from jupyterlab_tfcoach._version import __version__

SERVER_NAME = "tfcoach-lsp"

__all__ = ["SERVER_NAME", "__version__"]
