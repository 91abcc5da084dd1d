"""tfcoach: a TensorFlow coach for JupyterLab and LSP editors.

Only extension points live here; nothing heavy is imported at module level,
so ``%load_ext jupyterlab_tfcoach`` in a kernel stays cheap and the CLI and
language server never pull in jupyter_server or TensorFlow.
"""

from __future__ import annotations

from typing import Any

from jupyterlab_tfcoach._version import __version__ as __version__


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyterlab_tfcoach"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyterlab_tfcoach"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyterlab_tfcoach.server.extension import load_server_extension

    load_server_extension(serverapp)


def load_ipython_extension(ipython: Any) -> None:
    from jupyterlab_tfcoach.monitor.extension import load_ipython_extension as load

    load(ipython)


def load_for_panel(ipython: Any, quiet_tensorflow_logs: bool = True) -> str:
    """The server extension's kernel bootstrap: load the monitor for the tfcoach panel."""
    from jupyterlab_tfcoach.monitor.extension import load_for_panel as load

    return load(ipython, quiet_tensorflow_logs)


def unload_ipython_extension(ipython: Any) -> None:
    from jupyterlab_tfcoach.monitor.extension import unload_ipython_extension as unload

    unload(ipython)
