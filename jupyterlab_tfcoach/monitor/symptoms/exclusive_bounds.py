"""An integer draw whose upper bound is one above its lower bound: always the same number.

NumPy's ``np.random.randint(low, high)``, a Generator's ``rng.integers(low, high)``,
Python's ``random.randrange(low, high)`` and TensorFlow's ``tf.random.uniform(shape,
low, high, dtype=tf.int32)`` never draw ``high``. Written ``randint(0, 1)`` (or
``randint(1)``), the only number left is 0: the "random" choice (an action, a coin, a
class, an augmentation's flip) is always the same, and nothing raises. Python's
``random.randint(0, 1)`` includes its upper bound, which is where the habit comes from.

Read after a completed cell (a cell naming none of those functions costs a few
substring tests), inside its functions too: a call whose callee is one of them (the root
name holds the ``numpy``, ``random`` or ``tensorflow`` module, or a NumPy ``Generator``
for ``integers``; TensorFlow's ``uniform`` only with an integer ``dtype``), with both
bounds written (``high`` alone: ``low`` is 0) as integer literals, or as ``k`` and
``k + 1``, and ``high - low == 1``; ``endpoint=True`` keeps its bound. The note names
the call, the one value it can return, and the fix: the call with ``high`` one larger,
which draws both numbers.
"""

from __future__ import annotations

import ast
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import int_literal, parsed_source, source_segment

SECTION = "reproducibility"
MAX_NOTES = 2
MAX_CELL_CHARS = 50_000
_WORDS = ("randint", "integers", "randrange", "uniform")
# Function name -> (library of the root module, positional index of low, of high, of dtype).
_FUNCTIONS: dict[str, tuple[str, int, int, int | None]] = {
    "randint": ("numpy", 0, 1, 3),
    "randrange": ("random", 0, 1, None),
    "integers": ("numpy", 0, 1, 3),
    "uniform": ("tensorflow", 1, 2, 3),
}


def _root_library(node: ast.expr, namespace: dict[str, Any]) -> str | None:
    """``numpy`` for ``np.random``, or for a name holding a NumPy Generator."""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    held = namespace.get(root.id)
    if isinstance(held, ModuleType):
        return str(vars(held).get("__name__") or "").partition(".")[0]
    if root is node:
        for cls in class_mro(held):
            if cls.__name__ == "Generator" and cls.__module__.startswith("numpy.random"):
                return "numpy"
    return None


def _argument(call: ast.Call, index: int | None, keywords: tuple[str, ...]) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in keywords:
            return keyword.value
    if index is not None and index < len(call.args):
        return call.args[index]
    return None


def _integer_dtype(node: ast.expr | None) -> bool:
    if node is None:
        return False
    if isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Constant) and type(node.value) is str:
        name = node.value
    else:
        return False
    return name.startswith(("int", "uint"))


def _one_apart(low: ast.expr | None, high: ast.expr, source: str) -> str | None:
    """The one value ``[low, high)`` holds, as written, when the bounds are one apart."""
    high_value = int_literal(high)
    if low is None:
        return "0" if high_value == 1 else None
    low_value = int_literal(low)
    if low_value is not None and high_value is not None:
        return str(low_value) if high_value - low_value == 1 else None
    if (
        isinstance(high, ast.BinOp)
        and isinstance(high.op, ast.Add)
        and int_literal(high.right) == 1
        and ast.dump(high.left) == ast.dump(low)
    ):
        return source_segment(source, low)
    return None


def _read(call: ast.Call, namespace: dict[str, Any], source: str) -> tuple[str, str] | None:
    """(the value the call always returns, the call with its bound raised)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _FUNCTIONS:
        return None
    library, low_at, high_at, dtype_at = _FUNCTIONS[func.attr]
    if _root_library(func.value, namespace) != library:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    if func.attr == "uniform" and not _integer_dtype(_argument(call, dtype_at, ("dtype",))):
        return None
    if func.attr == "integers":
        endpoint = _argument(call, None, ("endpoint",))
        if endpoint is not None and not (
            isinstance(endpoint, ast.Constant) and endpoint.value is False
        ):
            return None
    low = _argument(call, low_at, ("low", "minval", "start"))
    high = _argument(call, high_at, ("high", "maxval", "stop"))
    if high is None and func.attr != "uniform" and low is not None and low_at == 0:
        # ``randint(1)``: the one bound given is the upper one, from 0.
        low, high = None, low
    if high is None:
        return None
    value = _one_apart(low, high, source)
    if value is None:
        return None
    high_text = source_segment(source, high)
    written = source_segment(source, call)
    if not high_text or not written or "\n" in written:
        return None
    raised = _raised(high, high_text)
    start = high.col_offset - call.col_offset
    if high.lineno != call.lineno or written[start : start + len(high_text)] != high_text:
        return None
    fixed = written[:start] + raised + written[start + len(high_text) :]
    return value, fixed


def _raised(high: ast.expr, text: str) -> str:
    value = int_literal(high)
    if value is not None:
        return str(value + 1)
    if isinstance(high, ast.BinOp) and int_literal(high.right) == 1:
        return text[: text.rstrip().rfind("1")] + "2"
    return f"{text} + 1"


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or not any(w in source for w in _WORDS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    functions = [
        node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    found: list[Note] = []
    for node in ast.walk(tree):
        if len(found) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call):
            continue
        read = _read(node, namespace, source)
        if read is None:
            continue
        value, fixed = read
        if not value.lstrip("-").isdigit():
            value = f"`{value}`"
        written = source_segment(source, node) or ""
        inside = [f for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
        where = f"line {node.lineno} of this cell" + (
            f", in `{max(inside, key=lambda f: f.lineno).name}`" if inside else ""
        )
        found.append(
            reports.note(
                f"`{written}` ({where}) always returns {value}: the upper bound of NumPy's "
                "and TensorFlow's integer draws (and of `random.randrange`) is excluded, so "
                f"the range holds the one number {value} and nothing random is drawn, "
                "without any error. (Python's `random.randint` includes its upper bound; "
                f"these do not.) To draw {value} or the next number too, raise the bound "
                f"by one: `{fixed}`.",
                SECTION,
            )
        )
    return found
