"""Explanations for the TensorFlow errors the course covers.

Only exceptions whose type comes from Python itself or from TensorFlow/Keras
are read (``str(exc)``): a user's own exception class may do anything in its
``__str__``. Errors raised inside a ``tf.function`` arrive wrapped as
``in user code: <frames> <InnerType>: <message>``; the inner part is explained.
Anything not recognised gives ``None``: no explanation, no noise.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.course_links import course_link

MAX_MESSAGE = 2000
_TRUSTED_MODULE_PREFIXES = ("tensorflow.", "keras.")

_INNER_ERROR = re.compile(
    r"^\s*(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<message>.*)$", re.MULTILINE
)
_EAGER_DTYPE = re.compile(
    r"cannot compute (?P<op>\w+) as input #(?P<index>\d+)\(zero-based\) was expected to be "
    r"a (?P<expected>\w+) tensor but is a (?P<actual>\w+) tensor"
)
_GRAPH_DTYPE = re.compile(
    r"Input '(?P<input>\w+)' of '(?P<op>\w+)' Op has type (?P<actual>\w+) that does not match "
    r"type (?P<expected>\w+) of argument '(?P<argument>\w+)'"
)
# Eager kernels name float32 "float" and float64 "double".
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}


@dataclass(frozen=True)
class ParsedError:
    type: str
    message: str
    inside_tf_function: bool


def _is_trusted(exception_type: type) -> bool:
    module = getattr(exception_type, "__module__", "")
    if module == "builtins":
        return getattr(builtins, exception_type.__name__, None) is exception_type
    return type(module) is str and module.startswith(_TRUSTED_MODULE_PREFIXES)


def parse(exception: BaseException) -> ParsedError | None:
    exception_type = type(exception)
    if not _is_trusted(exception_type):
        return None
    message = str(exception)[:MAX_MESSAGE]
    type_name = exception_type.__name__
    if message.lstrip().startswith("in user code:"):
        inner = list(_INNER_ERROR.finditer(message))
        if inner:
            last = inner[-1]
            rest = message[last.end() :].strip()
            text = last.group("message") + (f"\n{rest}" if rest else "")
            return ParsedError(last.group("type").rsplit(".", 1)[-1], text.strip(), True)
        return ParsedError(type_name, message, True)
    return ParsedError(type_name, message, False)


def _dtype(name: str) -> str:
    return _DTYPE_NAMES.get(name, name)


def _where(parsed: ParsedError) -> str:
    return " inside a tf.function" if parsed.inside_tf_function else ""


def _dtype_mismatch(parsed: ParsedError) -> tuple[str, str] | None:
    eager = _EAGER_DTYPE.search(parsed.message)
    if eager:
        op = eager.group("op")
        expected, actual = _dtype(eager.group("expected")), _dtype(eager.group("actual"))
        index = int(eager.group("index"))
        detail = (
            f"The {op} op got operands of different dtypes: input #{index} (zero-based) is "
            f"{actual} but the op expected {expected}, the dtype of its other operand."
        )
    else:
        graph = _GRAPH_DTYPE.search(parsed.message)
        if not graph:
            return None
        op = graph.group("op")
        expected, actual = graph.group("expected"), graph.group("actual")
        detail = (
            f"The {op} op{_where(parsed)} got operands of different dtypes: "
            f"'{graph.group('input')}' is {actual} while '{graph.group('argument')}' is {expected}."
        )
    text = (
        f"{detail} TensorFlow never converts dtypes implicitly between tensors. Cast one side "
        f"first, e.g. tf.cast(x, tf.{expected}), or create both with the same dtype."
    )
    return text, "dtype-casting"


def _tape_reused(parsed: ParsedError) -> tuple[str, str] | None:
    if "non-persistent GradientTape can only be used to compute one set" not in parsed.message:
        return None
    return (
        "A GradientTape releases its recorded operations after the first gradient() (or "
        "jacobian()) call, so a second call fails. Create it with "
        "tf.GradientTape(persistent=True) to take several gradients (then `del tape`), or "
        "pass all sources to one gradient() call.",
        "gradient-tape",
    )


def _variable_in_function(parsed: ParsedError) -> tuple[str, str] | None:
    if "only supports singleton tf.Variables created on the first call" not in parsed.message:
        return None
    return (
        "The tf.function creates a tf.Variable every time it runs. A tf.function traces twice "
        "on its first call when it creates variables, so even the first call fails. Create the "
        "variable once outside the function (or in __init__, or guarded by `if self.v is None`) "
        "and only use or assign it inside.",
        "variables-in-functions",
    )


def _numpy_in_function(parsed: ParsedError) -> tuple[str, str] | None:
    if "'SymbolicTensor' object has no attribute 'numpy'" not in parsed.message:
        return None
    return (
        "Inside a tf.function, tensors are symbolic placeholders while the graph is traced: they "
        "have no value yet, so .numpy() does not exist. Keep the computation in TensorFlow ops "
        "(use tf.print to see values) and call .numpy() on the function's result outside.",
        "numpy-in-graphs",
    )


def _tensor_as_bool(parsed: ParsedError) -> tuple[str, str] | None:
    if parsed.type != "OperatorNotAllowedInGraphError" and (
        "as a Python `bool` is not allowed" not in parsed.message
    ):
        return None
    return (
        "A symbolic tensor was used where Python needs a True/False value (an `if`/`while` "
        "condition, `bool(t)`, `and`/`or`) while the graph was traced, and such a tensor has no "
        "value yet. Let AutoGraph convert the condition (autograph=True, plain `if` on a tensor "
        "inside the tf.function) or use tf.cond / tf.where.",
        "eager-vs-graph",
    )


def _no_gradients(parsed: ParsedError) -> tuple[str, str] | None:
    if "No gradients provided for any variable" not in parsed.message:
        return None
    return (
        "The optimizer got None as the gradient for every variable: the loss does not depend on "
        "the trainable variables it was given. Typical causes: a variable rebound to a tensor "
        "(`w = w - ...` or `self.w = self.w - ...`), the computation done outside the "
        "GradientTape, or a conversion through NumPy that cuts the graph.",
        "trainable-weights",
    )


def _augmented_assignment(parsed: ParsedError) -> tuple[str, str] | None:
    if "with `tf.Variable`s is not supported" not in parsed.message:
        return None
    return (
        "`w -= x` / `w += x` on a tf.Variable is not supported: it would replace the variable with "
        "a new tensor. Update the variable in place with w.assign_sub(x) / w.assign_add(x).",
        "rebinding-variables",
    )


_EXPLAINERS: tuple[Callable[[ParsedError], tuple[str, str] | None], ...] = (
    _dtype_mismatch,
    _tape_reused,
    _variable_in_function,
    _numpy_in_function,
    _tensor_as_bool,
    _no_gradients,
    _augmented_assignment,
)


def explain(exception: BaseException | None) -> dict[str, Any] | None:
    """The report's ``error`` object, or None for no error / an unknown one."""
    if exception is None:
        return None
    try:
        parsed = parse(exception)
        if parsed is None:
            return None
        for explainer in _EXPLAINERS:
            found = explainer(parsed)
            if found is not None:
                explanation, section = found
                return {
                    "type": parsed.type,
                    "message": parsed.message,
                    "explanation": explanation,
                    "course": course_link(section),
                }
    except Exception:
        return None
    return None
