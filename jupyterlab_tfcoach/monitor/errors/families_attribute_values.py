"""A tensor given where an op takes a Python number: one family (issue "explain code it
has never seen").

Some arguments of TensorFlow's ops are *attributes*: Python values (a float, an int, a
bool) fixed when the op is created, not tensors the op reads when it runs
(``tf.nn.leaky_relu``'s ``alpha``, ``fake_quant_with_min_max_args``'s ``min`` and
``max``). Given a tensor, TensorFlow raises ``Expected float for argument 'min' not
<tf.Tensor ...>``, which names neither the reason nor the way out. The reading takes the
argument from the failing call (by keyword, else by the callee's signature), every other
argument of the call that the op (read from TensorFlow's op registry,
``op_def_registry``, by the function's name) also takes as an attribute and that holds a
tensor, and gives the fix:

- an op of the same module whose name differs by one word and that takes those arguments
  as tensor inputs (``fake_quant_with_min_max_vars``): the call written with it, which
  also works inside a ``tf.function`` and keeps the values in TensorFlow;
- else, outside a ``tf.function`` (the message shows the tensor's value), each such
  argument given as its Python value, ``alpha=float(slope)``;
- inside a ``tf.function`` (a symbolic tensor has no Python value while tracing): the
  rule alone, with where to compute the number instead.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import types
from typing import Any

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    rewrite,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "frozen-python-values"
_EXPECTED = re.compile(
    r"Expected (?P<kind>float|int|bool) for argument '(?P<argument>\w+)' not "
    r"(?P<got><(?:tf\.Tensor|tf\.Variable|Variable|KerasVariable)\b[^>]*>?)"
)
_PYTHON_TYPES = {"float": "float", "int": "int", "bool": "bool"}
_TENSOR_KINDS = ("tensor", "variable", "keras_variable", "symbolic")
_MAX_MODULE_NAMES = 600
_MIN_WORDS = 3
_MAX_CHAIN = 8
_Call = ast.Call


def _op_def(name: str) -> Any | None:
    """TensorFlow's registered op for a Python op function's name (``leaky_relu`` ->
    ``LeakyRelu``), read from the registry TensorFlow already loaded."""
    registry = sys.modules.get("tensorflow.python.framework.op_def_registry")
    get = getattr(registry, "get", None)
    if get is None or not name:
        return None
    for candidate in (name, name.removesuffix("_v2")):
        camel = "".join(part[:1].upper() + part[1:] for part in candidate.split("_") if part)
        try:
            found = get(camel)
        except Exception:
            found = None
        if found is not None:
            return found
    return None


def _attributes(op: Any) -> dict[str, str]:
    try:
        return {str(attr.name): str(attr.type) for attr in op.attr}
    except Exception:
        return {}


def _inputs(op: Any) -> set[str]:
    try:
        return {str(arg.name) for arg in op.input_arg}
    except Exception:
        return set()


def _parameters(function: Any) -> list[str] | None:
    try:
        return list(inspect.signature(function).parameters)
    except Exception:
        return None


def _argument(call: _Call, name: str, callee: Any) -> ast.expr | None:
    """The expression the call gives for parameter ``name``."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    parameters = _parameters(callee)
    if parameters is None or name not in parameters:
        return None
    index = parameters.index(name)
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[index]
    return None


def _holds_tensor(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    operand = line.operand(line.frame.segment(node) or "")
    if operand is not None:
        return operand.kind in _TENSOR_KINDS
    found, value = value_of(node, line.frame, context)
    if found:
        return value_kind(value) in _TENSOR_KINDS
    # ``-m``: an expression over a name that holds a tensor.
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            found, value = value_of(inner, line.frame, context)
            if found and value_kind(value) in _TENSOR_KINDS:
                return True
    return False


def _outputs(op: Any) -> int | None:
    try:
        return len(op.output_arg)
    except Exception:
        return None


def _sibling(module: Any, written: str, callee: Any, needed: list[str]) -> str | None:
    """A function of ``module`` named like ``written`` but for one word (of three or
    more: a one-word name would make every op a sibling), with the same parameters and
    as many results, whose op takes every name of ``needed`` as a tensor input."""
    words = written.split("_")
    parameters = _parameters(callee)
    op = _op_def(written)
    if len(words) < _MIN_WORDS or parameters is None or op is None:
        return None
    try:
        names = [n for n in dir(module) if not n.startswith("_")][:_MAX_MODULE_NAMES]
    except Exception:
        return None
    for name in names:
        other = name.split("_")
        if name == written or len(other) != len(words):
            continue
        if sum(1 for a, b in zip(words, other, strict=True) if a != b) != 1:
            continue
        twin = _op_def(name)
        if twin is None or not set(needed) <= _inputs(twin) or _outputs(twin) != _outputs(op):
            continue
        try:
            candidate = getattr(module, name)
        except Exception:
            continue
        if _parameters(candidate) != parameters:
            continue
        return name
    return None


def _library_module(node: ast.expr, line: FailingLine, context: ErrorContext) -> Any | None:
    """The TensorFlow module ``node`` names (``tf.quantization``), found statically from a
    library module bound in the user's names, else None."""
    chain: list[str] = []
    while isinstance(node, ast.Attribute) and len(chain) < _MAX_CHAIN:
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    found, value = context.lookup(node.id, line.frame)
    for name in reversed(chain):
        if not found or not isinstance(value, types.ModuleType):
            return None
        try:
            value = inspect.getattr_static(value, name)
        except AttributeError:
            return None
    if not isinstance(value, types.ModuleType) or not value.__name__.startswith("tensorflow"):
        return None
    return value


def _read_attribute_value(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    statement = line.statement
    if not isinstance(call, ast.Call) or statement is None:
        return None
    callee = library_callee(call.func, line.frame, context)
    if callee is None:
        return None
    argument = str(error.group("argument"))
    node = _argument(call, argument, callee)
    written_argument = line.frame.segment(node) if node is not None else None
    if node is None or not written_argument:
        return None
    function_name = getattr(callee, "__name__", "")
    written_name = call.func.attr if isinstance(call.func, ast.Attribute) else function_name
    if type(function_name) is not str or type(written_name) is not str:
        return None
    op = _op_def(function_name)
    attributes = _attributes(op) if op is not None else {}
    # Every argument of the call the op takes as a Python number and that holds a tensor:
    # fixing the refused one alone would only move the error to the next.
    refused: list[tuple[str, ast.expr, str]] = [(argument, node, str(error.group("kind")))]
    for keyword in call.keywords:
        kind = attributes.get(keyword.arg or "")
        if (
            keyword.arg
            and keyword.arg != argument
            and kind in _PYTHON_TYPES
            and _holds_tensor(keyword.value, line, context)
        ):
            refused.append((keyword.arg, keyword.value, kind))
    names = [name for name, _node, _kind in refused]
    shown = ", ".join(code(name) for name in names)
    holders = ", ".join(
        f"{code(name)} is {code(line.frame.segment(value) or '')}" for name, value, _ in refused
    )
    symbolic = "numpy=" not in str(error.group("got")) and "value=" not in str(error.group("got"))
    several = len(names) > 1
    rule = (
        f"{code(written_name)} takes {shown} as {'attributes' if several else 'an attribute'} "
        f"of its op: a Python {error.group('kind')} fixed when the op is created, not a "
        f"tensor it reads while it runs ({holders} here, {'tensors' if several else 'a tensor'})"
    )
    sibling = None
    if isinstance(call.func, ast.Attribute):
        module = _library_module(call.func.value, line, context)
        if module is not None:
            sibling = _sibling(module, written_name, callee, names)
    if sibling is not None:
        owner = line.frame.segment(call.func.value)  # type: ignore[union-attr]
        fixed = rewrite(line.frame, statement, call.func, f"{owner}.{sibling}")
        said = (
            f"{rule}. {code(sibling)} does the same with {shown} as tensor inputs, so a range "
            "computed from the data can be given as it is"
        )
        if not symbolic:
            said += (
                f" (or pass Python values: {code(f'float({written_argument})')} works outside "
                "a tf.function)"
            )
        return Finding(said + ".", code(fixed) if fixed and "\n" not in fixed else None)
    if symbolic:
        return Finding(
            f"{rule}. Inside a tf.function a tensor has no Python value while it is traced, "
            f"so compute {shown} outside the function as Python numbers and pass them in "
            "(each new number traces the function again), or use an op that takes them as "
            "tensors.",
            None,
        )
    replacements = [
        (value, f"{_PYTHON_TYPES[kind]}({line.frame.segment(value)})")
        for _name, value, kind in refused
    ]
    fixed = rewrite_all(line.frame, statement, replacements)
    return Finding(
        f"{rule}. Outside a tf.function the tensor's value is known: pass it as a Python "
        f"{error.group('kind')}.",
        code(fixed) if fixed and "\n" not in fixed else None,
    )


ATTRIBUTE_VALUE = ErrorFamily(
    "a tensor given where an op takes a Python number (an op attribute)",
    messages=(Message(_EXPECTED),),
    read=_read_attribute_value,
    section=SECTION,
    exception_type="TypeError",
)
