"""An exponential passed to a library parameter that takes a logarithm.

Some library functions take a value on the log scale, and say so in the parameter's name:
``tf.nn.log_poisson_loss(targets, log_input)`` takes the log of the Poisson mean (a linear
predictor as it is), TensorFlow Probability's ``log_rate``, ``log_scale``... Given
``tf.exp(eta)``, the function exponentiates it again: the model fitted is
``log(mean) = exp(eta)``, a different model, and the coefficients do not estimate what the
learner wrote. Training runs and the loss goes down; nothing raises.

Read from the source after a completed cell holding ``exp(`` and ``log_`` (two substring
tests otherwise), in every scope of the cell (a ``tf.function`` step's body too): a call of
a library function (its module is TensorFlow's, Keras's, TensorFlow Probability's, JAX's or
NumPy's; found through the namespace, its parameters read with ``inspect.signature``) whose
argument, by position or keyword, for a parameter named ``log_*`` is an ``exp`` call
(``tf.exp``, ``tf.math.exp``, ``np.exp``, ``keras.ops.exp``). The fix is the statement
with the ``exp``'s own argument in its place.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    parsed_source,
    reference_path,
    source_segment,
)

SECTION = "creating-slicing-reducing"
WANTED = re.compile(r"\bexp\s*\(")
_LIBRARIES = ("tensorflow", "keras", "tf_keras", "tensorflow_probability", "jax", "numpy")
_EXP_HEADS = frozenset({"tf", "np", "numpy", "jnp", "keras", "ops", "math", "tensorflow"})
MAX_NOTES = 1


def _library_parameters(func: ast.AST, namespace: dict[str, Any]) -> list[str] | None:
    """The parameter names of the library function ``func`` names; None otherwise."""
    path = reference_path(func)
    if path is None or len(path) < 2:
        return None
    value = namespace.get(path[0])
    for attribute in path[1:]:
        # Only modules are walked (``tf.nn``): their attributes are the library's own.
        if not isinstance(value, types.ModuleType):
            return None
        value = getattr(value, attribute, None)
    if type(value) is not types.FunctionType:
        return None
    module = value.__module__
    if type(module) is not str or not module.startswith(_LIBRARIES):
        return None
    try:
        return list(inspect.signature(value).parameters)
    except (TypeError, ValueError):
        return None


def _is_exp(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and call_name(node) == "exp" and len(node.args) == 1):
        return False
    path = reference_path(node.func)
    return path is not None and len(path) >= 2 and path[0] in _EXP_HEADS


def _statement_of(tree: ast.AST, node: ast.AST) -> ast.stmt | None:
    found = None
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt) and not isinstance(
            statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.With
        ):
            if any(n is node for n in ast.walk(statement)):
                if found is None or statement.lineno >= found.lineno:
                    found = statement
    return found


def _scope_name(tree: ast.AST, node: ast.AST) -> str | None:
    name = None
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(n is node for n in ast.walk(function)):
                name = function.name
    return name


def log_parameter_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    source = code.source
    if "log_" not in source or WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    notes: list[Note] = []
    for node in ast.walk(tree):
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call):
            continue
        candidates = [k for k in node.keywords if k.arg and k.arg.startswith("log_")]
        positional = any(_is_exp(a) for a in node.args)
        if not positional and not any(_is_exp(k.value) for k in candidates):
            continue
        parameters = _library_parameters(node.func, namespace)
        if parameters is None:
            continue
        pairs = [(k.arg, k.value) for k in node.keywords if k.arg]
        pairs += list(zip(parameters, node.args, strict=False))
        for parameter, argument in pairs:
            if parameter is None or not parameter.startswith("log_") or not _is_exp(argument):
                continue
            note = _note(tree, source, node, parameter, argument)
            if note is not None:
                notes.append(note)
            break
    return notes


def _note(
    tree: ast.AST, source: str, call: ast.Call, parameter: str, argument: ast.AST
) -> Note | None:
    if not isinstance(argument, ast.Call):
        return None
    statement = _statement_of(tree, call)
    written = source_segment(source, call)
    given = source_segment(source, argument)
    inner = source_segment(source, argument.args[0])
    whole = source_segment(source, statement) if statement is not None else None
    if written is None or given is None or inner is None or whole is None:
        return None
    if "\n" in whole or whole.count(given) != 1:
        return None
    fixed = whole.replace(given, inner)
    scope = _scope_name(tree, call)
    where = f"line {call.lineno} of this cell" + (f", in `{scope}`" if scope else "")
    text = (
        f"`{written}` ({where}) passes `{given}` as `{parameter}`, a parameter that takes "
        f"the logarithm of the value (its name says so): the function applies the "
        f"exponential itself, so it works with the exponential of an exponential, and what "
        f"it fits or computes is another model than the one `{inner}` describes. Nothing "
        f"raises. Pass the log itself. Fix: `{fixed.strip()}`."
    )
    return reports.note(text, SECTION)
