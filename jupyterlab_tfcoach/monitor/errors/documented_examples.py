"""The value a library's own documentation gives a required argument the learner left out.

``tf.distribute.OneDeviceStrategy()`` raises ``missing 1 required positional argument:
'device'``, which says what is missing but not what a value of it looks like. The
callee's docstring usually shows it called (``OneDeviceStrategy(device="/gpu:0")``,
``keras.layers.RepeatVector(3)``): this module reads those example calls (``inspect``
docstrings of the class and its ``__init__``, parsed with ``ast``, no code run) and
returns the literal each missing parameter is given there, by keyword or by position.

Only a literal is returned (``ast.literal_eval``), never a name of the example's own.
The value of the example fits the documentation's data, not the learner's: callers print
it as an example, and print it as a fix only when it does not depend on the data. A
device string is such a value; one naming a GPU is given as ``"/cpu:0"``, which exists on
every machine (the entry says ``"/gpu:0"`` is the one for a GPU).
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

_MAX_DOC_CHARS = 20_000
_MAX_EXAMPLES = 30
_DEVICE = re.compile(r"^/?(?:job:\w+/)?(?:task:\d+/)?(?:device:)?(?P<kind>cpu|gpu|tpu):\d+$", re.I)


def _docstrings(callee: Any) -> list[str]:
    texts: list[str] = []
    for owner in (callee, getattr(callee, "__init__", None)):
        try:
            text = inspect.getdoc(owner) if owner is not None else None
        except Exception:
            text = None
        if text and text not in texts:
            texts.append(text[:_MAX_DOC_CHARS])
    return texts


def _example_calls(text: str, short: str) -> list[ast.Call]:
    """The calls of ``short`` written on one line of ``text`` (``>>>`` prompts dropped)."""
    calls: list[ast.Call] = []
    for raw in text.splitlines():
        if f"{short}(" not in raw:
            continue
        written = raw.strip().removeprefix(">>>").removeprefix("...").strip()
        written = written.removeprefix("with ").rstrip(":")
        try:
            tree = ast.parse(written)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == short:
                calls.append(node)
        if len(calls) >= _MAX_EXAMPLES:
            break
    return calls


def documented_values(
    callee: Any, short: str, missing: list[str], positions: dict[str, int]
) -> dict[str, str] | None:
    """``{parameter: literal source}`` for every name of ``missing``, from the first example
    call of the docstrings that gives them all (by keyword, or at ``positions[name]``);
    None when no example gives them all as literals."""
    for text in _docstrings(callee):
        for call in _example_calls(text, short):
            values: dict[str, str] = {}
            for name in missing:
                node = next((k.value for k in call.keywords if k.arg == name), None)
                index = positions.get(name)
                if node is None and index is not None and index < len(call.args):
                    node = call.args[index]
                if node is None or isinstance(node, ast.Starred):
                    break
                try:
                    ast.literal_eval(node)
                except Exception:
                    break
                values[name] = ast.unparse(node)
            if len(values) == len(missing):
                return values
    return None


def device_value(written: str) -> str | None:
    """A documented device string as a value that runs on any machine: ``"/cpu:0"`` for
    one naming a GPU or TPU (the learner's machine may have none), else itself; None when
    ``written`` is not a device string."""
    try:
        value = ast.literal_eval(written)
    except Exception:
        return None
    if type(value) is not str:
        return None
    found = _DEVICE.match(value)
    if found is None:
        return None
    return written if found.group("kind").lower() == "cpu" else '"/cpu:0"'
