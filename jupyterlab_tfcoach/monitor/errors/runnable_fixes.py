"""Every fix an error entry prints must run in the learner's notebook as it is.

The explainers write fixes in the conventional spellings (``tf.cast``, ``np.arange``,
``keras.layers.Flatten()``) or in the alias ``ErrorContext.module_alias`` found; a
notebook that never imported TensorFlow under any name (``import keras`` only) would get
``tf.reduce_max(ids)`` and a ``NameError``. ``runnable`` is applied once, in
``errors.explain``, to every entry's text: each code span after ``Fix:`` is parsed, and a
root name the span reads but neither binds itself nor finds in the namespace, the failing
frames' locals or the builtins is, when it is a conventional module alias (``tf``,
``np``, ``keras``, ``layers``, ``ops``):

- spelled with the name the namespace holds that module under (``import tensorflow as
  tflow`` -> ``tflow.cast``);
- else, for TensorFlow's few reductions Keras has too, written with Keras's ops when the
  namespace has ``keras`` (``tf.reduce_max(ids)`` -> ``keras.ops.max(ids)``);
- else the import line is named before the fix (``run `import tensorflow as tf` first``).

Other unknown names are left alone: they may be a function's locals the fix is about.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Iterable
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext

# Conventional alias -> the module it stands for, and the import line that binds it.
_MODULE_ALIASES: dict[str, tuple[str, str]] = {
    "tf": ("tensorflow", "import tensorflow as tf"),
    "np": ("numpy", "import numpy as np"),
    "keras": ("keras", "import keras"),
    "layers": ("keras.layers", "from keras import layers"),
    "ops": ("keras.ops", "from keras import ops"),
}
# TensorFlow functions whose Keras op takes the same first argument (and axis) and gives
# the same result: used when the notebook has Keras but not TensorFlow under any name.
_KERAS_OPS_FOR_TF = {
    "reduce_max": "max",
    "reduce_min": "min",
    "reduce_sum": "sum",
    "reduce_mean": "mean",
    "cast": "cast",
    "argmax": "argmax",
    "reshape": "reshape",
    "transpose": "transpose",
    "expand_dims": "expand_dims",
    "squeeze": "squeeze",
}
_SPAN = re.compile(r"`([^`\n]+)`")
_FIX = "Fix: "
_MAX_SPANS = 12


def runnable(explanation: str, context: ErrorContext) -> str:
    """``explanation`` with every fix's code spans runnable in the user's namespace (the
    text unchanged when anything cannot be read)."""
    try:
        return _runnable(explanation, context)
    except Exception:
        return explanation


def _runnable(explanation: str, context: ErrorContext) -> str:
    namespace = context.namespace
    if not namespace or _FIX not in explanation:
        return explanation
    known = _known_names(context)
    head, _, fixes = explanation.partition(_FIX)
    imports: list[str] = []
    rewritten: list[str] = []
    last = 0
    for count, span in enumerate(_SPAN.finditer(fixes)):
        if count >= _MAX_SPANS:
            break
        text = span.group(1)
        missing = _missing_modules(text, known)
        if not missing:
            continue
        fixed = text
        for alias in missing:
            fixed, needs_import = _respelled(fixed, alias, namespace)
            if needs_import and _MODULE_ALIASES[alias][1] not in imports:
                imports.append(_MODULE_ALIASES[alias][1])
        rewritten.append(fixes[last : span.start(1)] + fixed)
        last = span.end(1)
    if not rewritten and not imports:
        return explanation
    fixes = "".join(rewritten) + fixes[last:]
    if imports:
        lines = "; ".join(imports)
        names = ", ".join(f"`{line.rsplit(' ', 1)[-1]}`" for line in imports)
        fixes = f"(run `{lines}` first: this notebook has no {names}) {fixes}"
    return f"{head}{_FIX}{fixes}"


def _known_names(context: ErrorContext) -> set[str]:
    known = {name for name in context.namespace if type(name) is str}
    for frame in context.frames():
        local_names = frame.local_names
        if isinstance(local_names, dict):
            known.update(name for name in local_names if type(name) is str)
    return known


def _missing_modules(text: str, known: set[str]) -> list[str]:
    """The conventional module aliases ``text`` reads but nothing binds."""
    tree = _parsed(text)
    if tree is None:
        return []
    bound = set(_bound_names(ast.walk(tree)))
    missing: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in _MODULE_ALIASES
            and node.id not in bound
            and node.id not in known
            and not hasattr(builtins, node.id)
            and node.id not in missing
        ):
            missing.append(node.id)
    return missing


def _parsed(text: str) -> ast.Module | None:
    """A span as code: a statement, or a block's header (``with ... as tape:``)."""
    for candidate in (text, f"{text}\n    pass"):
        try:
            return ast.parse(candidate)
        except (SyntaxError, ValueError):
            continue
    return None


def _bound_names(nodes: Iterable[ast.AST]) -> Iterable[str]:
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id
        elif isinstance(node, ast.alias):
            yield (node.asname or node.name).partition(".")[0]
        elif isinstance(node, ast.arg):
            yield node.arg


def _respelled(text: str, alias: str, namespace: dict[str, Any]) -> tuple[str, bool]:
    """``text`` with ``alias`` spelled as the namespace has its module; whether the
    module still has to be imported."""
    module_name = _MODULE_ALIASES[alias][0]
    own = _name_of_module(namespace, module_name)
    reads = re.compile(rf"(?<![\w.]){re.escape(alias)}\.")
    if own is not None:
        return reads.sub(f"{own}.", text), False
    if alias == "tf":
        keras = _name_of_module(namespace, "keras")
        if keras is not None:
            calls = re.compile(r"(?<![\w.])tf\.(\w+)\(")
            found = calls.findall(text)
            # Only when every use of ``tf`` is a call Keras's ops make the same way.
            if (
                found
                and set(found) <= set(_KERAS_OPS_FOR_TF)
                and len(found) == len(reads.findall(text))
            ):
                return calls.sub(
                    lambda m: f"{keras}.ops.{_KERAS_OPS_FOR_TF[m.group(1)]}(", text
                ), False
    return text, True


def _name_of_module(namespace: dict[str, Any], module_name: str) -> str | None:
    """The name the namespace binds the (imported) module ``module_name`` to."""
    module = sys.modules.get(module_name)
    if module is None:
        return None
    for name, value in namespace.items():
        if value is module and type(name) is str and not name.startswith("_"):
            return name
    return None
