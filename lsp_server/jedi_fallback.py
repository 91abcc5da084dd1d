"""jedi as a last resort for hover: names the file's own imports cannot resolve
(``from helpers import tf``). Runs on its own thread with a deadline; a late
answer is cached for the next hover at the same place. Never used for
diagnostics. jedi inspects compiled modules in its own subprocess, so this
process still never imports TensorFlow.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jupyterlab_tfcoach.course.api_cards import api_card, methods_of

log = logging.getLogger(__name__)

# jedi reports where TF defines things, not the public alias.
_INTERNAL_NAMES = {
    "function": "tf.function",
    "Variable": "tf.Variable",
    "ResourceVariable": "tf.Variable",
    "constant": "tf.constant",
    "GradientTape": "tf.GradientTape",
    "cast": "tf.cast",
    "print_v2": "tf.print",
    "print": "tf.print",
    "TensorSpec": "tf.TensorSpec",
}


def card_key_from_full_name(full_name: str | None) -> str | None:
    """``tensorflow.python.eager.backprop.GradientTape.gradient`` -> ``GradientTape.gradient``
    (the canonical name of an API card), or None."""
    if not full_name or not full_name.startswith("tensorflow."):
        return None
    parts = full_name.split(".")
    if len(parts) >= 2:
        cls, method = parts[-2], parts[-1]
        cls = "Variable" if cls in {"ResourceVariable", "BaseResourceVariable"} else cls
        if method in methods_of(cls):
            return f"{cls}.{method}"
    card = api_card(_INTERNAL_NAMES.get(parts[-1]))
    return card.name if card is not None else None


def is_user_module(module: str, level: int, document: Path | None, root: Path | None) -> bool:
    """Relative imports, and modules found next to the document or in the workspace."""
    if level:
        return True
    head = module.split(".", 1)[0]
    if not head or head in sys.stdlib_module_names:
        return False
    for base in {p for p in (document.parent if document else None, root) if p is not None}:
        if (base / f"{head}.py").is_file() or (base / head / "__init__.py").is_file():
            return True
    return False


class JediFallback:
    def __init__(self, deadline_s: float = 0.2) -> None:
        self.deadline_s = deadline_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfcoach-jedi")
        self._cache: dict[tuple[int, str | None, int, int], str | None] = {}

    def _goto(
        self, source: str, path: str | None, root: str | None, line: int, column: int
    ) -> str | None:
        import jedi

        project = jedi.Project(root) if root else None
        script = jedi.Script(source, path=path, project=project)
        for name in script.goto(line, column, follow_imports=True):
            key = card_key_from_full_name(name.full_name)
            if key is not None:
                return key
        return None

    def _run(self, cache_key: tuple[int, str | None, int, int], *args: object) -> str | None:
        try:
            result = self._goto(*args)  # type: ignore[arg-type]
        except Exception:
            log.exception("jedi fallback failed")
            result = None
        self._cache[cache_key] = result
        return result

    async def card_key(
        self, source: str, path: str | None, root: str | None, line: int, column: int
    ) -> str | None:
        """``line`` 1-based, ``column`` 0-based code points (jedi's convention)."""
        cache_key = (hash(source), path, line, column)
        if cache_key in self._cache:
            return self._cache[cache_key]
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(
            self._executor, self._run, cache_key, source, path, root, line, column
        )
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.deadline_s)
        except TimeoutError:
            log.info("jedi fallback missed its %.0f ms deadline", self.deadline_s * 1000)
            return None

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
