"""Error families of a TFLite interpreter's inputs (see ``family_record.py``).

A TFLite interpreter runs on buffers sized once, by ``allocate_tensors()``: an input
declared ``[None, n]`` is allocated ``[1, n]`` (``get_input_details()[i]["shape"]``, with
``-1`` kept in ``"shape_signature"`` for the axes that may change), and ``set_tensor``
copies an array into that buffer without converting anything. The learner sees
"Dimension mismatch" or "Got value of type FLOAT64"; what a teacher reads is the allocated
shape and dtype against the array's:

- a shape that differs from the allocated one: the entry names the allocated shape (read
  from the interpreter's ``get_input_details()``) and the array's; on an axis the model
  leaves free (``-1``) the fix resizes the input to the array's shape and allocates again
  (``resize_tensor_input`` then ``allocate_tensors``), else (or one row at a time) the
  array must take the allocated shape; a missing leading axis of size 1 gets ``[None]``;
- a dtype that differs (``set_tensor`` or a signature runner): the fix converts the array
  with ``.astype`` to the input's dtype;
- a signature runner (``interpreter.get_signature_runner(...)``) called with a keyword its
  signature does not have ("Invalid Input name"), or positionally: its inputs are named
  by the converted model (``runner.get_input_details()``; a Keras export names its input
  ``keras_tensor``), and the fix calls it with that name.

The interpreter and the runner are read only through their library's own methods
(``get_input_details``), on objects whose class is TFLite's.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    is_postfix_safe,
    rewrite_all,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_signatures import keras_export_name
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)

_TFLITE_MODULES = ("tensorflow.lite.", "ai_edge_litert.", "tflite_runtime.")
_MAX_INPUTS = 20
_MAX_RANK = 8
_MAX_FRAMES = 60

_DIMENSION = re.compile(
    r"Cannot set tensor: Dimension mismatch\. Got (?P<got>\d+) but expected (?P<expected>\d+) "
    r"for (?:dimension (?P<axis>\d+) of )?input (?P<index>\d+)\."
)
_TYPE = re.compile(
    r"Cannot set tensor: Got value of type (?P<got>\w+) but expected type (?P<expected>\w+) "
    r"for input (?P<index>\d+)"
)
_INPUT_NAME = re.compile(r"Invalid Input name \((?P<name>[^)\n]{1,80})\) for SignatureDef")
_POSITIONAL = re.compile(r"SignatureRunner\.__call__\(\) takes 1 positional argument")


def _tflite(value: Any, kind: str) -> bool:
    """Whether ``value`` is TFLite's ``Interpreter`` or ``SignatureRunner`` (``kind``)."""
    cls = type(value)
    module = getattr(cls, "__module__", "")
    return (
        type(module) is str
        and module.startswith(_TFLITE_MODULES)
        and getattr(cls, "__name__", "") == kind
    )


def _input_details(owner: Any) -> Any:
    """``owner.get_input_details()`` when it is TFLite's own method, else None."""
    method = getattr(type(owner), "get_input_details", None)
    if not str(getattr(method, "__module__", "")).startswith(_TFLITE_MODULES):
        return None
    try:
        return owner.get_input_details()
    except Exception:
        return None


def _ints(array: Any) -> tuple[int, ...] | None:
    try:
        found = tuple(int(item) for item in list(array)[:_MAX_RANK])
    except Exception:
        return None
    return found if found else None


def _allocated(interpreter: Any, index: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(the allocated shape, the shape signature with -1 for free axes) of input ``index``."""
    details = _input_details(interpreter)
    if type(details) is not list:
        return None
    for detail in details[:_MAX_INPUTS]:
        if type(detail) is dict and detail.get("index") == index:
            shape = _ints(detail.get("shape"))
            signature = _ints(detail.get("shape_signature")) or shape
            if shape is None or signature is None or len(signature) != len(shape):
                return None
            return shape, signature
    return None


def _set_value(context: ErrorContext) -> tuple[tuple[int, ...], str] | None:
    """(shape, dtype) of the NumPy array TFLite's ``set_tensor(self, tensor_index, value)``
    received, read from its frame of the traceback (already computed; nothing is run):
    the argument as written may be a slice the monitor does not evaluate."""
    numpy = sys.modules.get("numpy")
    traceback = context.exception.__traceback__
    for _ in range(_MAX_FRAMES):
        if traceback is None or numpy is None:
            return None
        frame = traceback.tb_frame
        module = frame.f_globals.get("__name__") if type(frame.f_globals) is dict else None
        if (
            type(module) is str
            and module.startswith(_TFLITE_MODULES)
            and frame.f_code.co_name == "set_tensor"
        ):
            value = frame.f_locals.get("value")
            if type(value) is not numpy.ndarray:
                return None
            shape = tuple(int(size) for size in value.shape[:_MAX_RANK])
            return shape, str(value.dtype)
        traceback = traceback.tb_next
    return None


def _shown(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(size) for size in shape) + "]"


def _set_tensor_call(line: FailingLine, context: ErrorContext) -> tuple[ast.Call, Any] | None:
    """The failing ``interpreter.set_tensor(index, array)`` call and the interpreter."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "set_tensor"
        and len(call.args) == 2
        and not call.keywords
    ):
        return None
    found, interpreter = value_of(call.func.value, line.frame, context)
    if not found or not _tflite(interpreter, "Interpreter"):
        return None
    return call, interpreter


def _statement_with(line: FailingLine, replacements: list[tuple[ast.AST, str]]) -> str | None:
    outer = line.statement if line.statement is not None else line.call
    if outer is None:
        return None
    fixed = rewrite_all(line.frame, outer, replacements)
    return fixed if fixed and "\n" not in fixed else None


# ------------------------------------------------------------------ shape
def _read_dimension(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    found = _set_tensor_call(line, context)
    if found is None:
        return None
    call, interpreter = found
    allocated = _allocated(interpreter, int(error.group("index")))
    received = _set_value(context)
    interpreter_name = line.frame.segment(call.func.value)  # type: ignore[attr-defined]
    index_source = line.frame.segment(call.args[0])
    array_source = line.frame.segment(call.args[1])
    if allocated is None or received is None or not interpreter_name or not array_source:
        return None
    shape, signature = allocated
    given = received[0]
    if given == shape or not index_source or "\n" in array_source:
        return None
    rule = (
        f"`{interpreter_name}`'s input {error.group('index')} was allocated with shape "
        f"{_shown(shape)} (its `get_input_details()`; `allocate_tensors()` sizes each input "
        f"once, a free batch axis as 1), and `set_tensor` copies an array into that buffer "
        f"as it is: `{array_source}` has shape {_shown(given)}."
    )
    if len(given) == len(shape):
        differing = [axis for axis in range(len(shape)) if given[axis] != shape[axis]]
        if all(signature[axis] == -1 for axis in differing):
            statement = line.frame.segment(line.statement) if line.statement else None
            if not statement or "\n" in statement:
                return Finding(rule, None)
            resize = (
                f"{interpreter_name}.resize_tensor_input({index_source}, {_shown(given)}); "
                f"{interpreter_name}.allocate_tensors(); {statement}"
            )
            return Finding(
                rule + " The model leaves that axis free: resize the input to the array's "
                "shape and allocate again (or feed arrays of the allocated shape, one row at "
                "a time; resize back before feeding single rows again).",
                code(resize),
            )
        return Finding(
            rule + f" The converted model fixes that axis: feed arrays of shape {_shown(shape)}.",
            None,
        )
    if len(given) + 1 == len(shape) and shape[0] == 1 and tuple(shape[1:]) == given:
        if not is_postfix_safe(call.args[1]):
            return Finding(rule + " Add the batch axis of size 1.", None)
        fixed = _statement_with(line, [(call.args[1], f"{array_source}[None]")])
        return Finding(
            rule + " It lacks the batch axis: add it, of size 1.", code(fixed) if fixed else None
        )
    return Finding(rule, None)


TFLITE_INPUT_SHAPE = ErrorFamily(
    "an array of another shape than a TFLite input's allocated one",
    messages=(Message(_DIMENSION),),
    exception_type="ValueError",
    read=_read_dimension,
    section="input-signature",
)


# ------------------------------------------------------------------ dtype
_NUMPY_DTYPES = {
    "FLOAT32": "float32",
    "FLOAT64": "float64",
    "FLOAT16": "float16",
    "INT32": "int32",
    "INT64": "int64",
    "INT8": "int8",
    "UINT8": "uint8",
    "INT16": "int16",
    "BOOL": "bool",
}


def _array_argument(line: FailingLine, context: ErrorContext) -> tuple[str, ast.expr] | None:
    """(what was called, the array argument) of a ``set_tensor`` or a runner's call with
    one keyword argument."""
    found = _set_tensor_call(line, context)
    if found is not None:
        return line.frame.segment(found[0].func) or "", found[0].args[1]
    call = line.call
    if not isinstance(call, ast.Call) or call.args or len(call.keywords) != 1:
        return None
    ok, runner = value_of(call.func, line.frame, context)
    if not ok or not _tflite(runner, "SignatureRunner"):
        return None
    return line.frame.segment(call.func) or "", call.keywords[0].value


def _read_type(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    given = _NUMPY_DTYPES.get(error.group("got"))
    wanted = _NUMPY_DTYPES.get(error.group("expected"))
    found = _array_argument(line, context)
    if given is None or wanted is None or found is None:
        return None
    called, node = found
    source = line.frame.segment(node)
    received = _set_value(context)
    if received is not None:
        dtype: str | None = received[1]
    else:
        array = operand_of(node, line, context)
        dtype = array.dtype if array is not None and array.kind == "array" else None
    if dtype != given or not called or not source or "\n" in source:
        return None
    rule = (
        f"The TFLite input {error.group('index')} holds {wanted} values and `{called}` copies "
        f"the array into it without converting: `{source}` is {given} (NumPy's "
        f"default for floats is float64)."
    )
    if not is_postfix_safe(node):
        return Finding(rule + f' Convert it with `.astype("{wanted}")` first.', None)
    fixed = _statement_with(line, [(node, f'{source}.astype("{wanted}")')])
    return Finding(rule, code(fixed) if fixed else None)


TFLITE_INPUT_DTYPE = ErrorFamily(
    "an array of another dtype than a TFLite input's",
    messages=(Message(_TYPE),),
    exception_type="ValueError",
    read=_read_type,
    section="input-signature",
)


# ------------------------------------------------------------------ runner keywords
def _runner_inputs(runner: Any) -> list[str] | None:
    details = _input_details(runner)
    if type(details) is not dict:
        return None
    names = [name for name in list(details)[:_MAX_INPUTS] if type(name) is str]
    return names if names and len(names) == len(details) else None


def _read_runner(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    ok, runner = value_of(call.func, line.frame, context)
    called = line.frame.segment(call.func)
    if not ok or not _tflite(runner, "SignatureRunner") or not called or "\n" in called:
        return None
    names = _runner_inputs(runner)
    if names is None:
        return None
    listed = ", ".join(f"`{name}`" for name in names)
    rule = (
        f"`{called}` is a TFLite signature runner: it takes its inputs as keyword "
        f"arguments named by the converted model's signature ({listed}, as "
        f"`{called}.get_input_details()` lists them"
        f"{keras_export_name(names)})"
    )
    if error.matched(_POSITIONAL):
        if len(names) != 1 or len(call.args) != 1 or call.keywords:
            return Finding(rule + ", never positionally.", None)
        argument = line.frame.segment(call.args[0])
        fixed = _statement_with(line, [(call.args[0], f"{names[0]}={argument}")])
        return Finding(rule + ", never positionally.", code(fixed) if fixed else None)
    wrong = error.group("name")
    keyword = next((item for item in call.keywords if item.arg == wrong), None)
    if keyword is None:
        return None
    rule += f", and `{wrong}` is not one of them."
    unused = [name for name in names if name not in {item.arg for item in call.keywords}]
    if len(unused) != 1 or call.args:
        return Finding(rule, None)
    value = line.frame.segment(keyword.value)
    if not value:
        return Finding(rule, None)
    fixed = _statement_with(line, [(keyword, f"{unused[0]}={value}")])
    return Finding(rule, code(fixed) if fixed else None)


TFLITE_RUNNER_INPUTS = ErrorFamily(
    "a TFLite signature runner called with a name its signature does not have",
    messages=(Message(_INPUT_NAME), Message(_POSITIONAL)),
    read=_read_runner,
    section="input-signature",
    without_library=True,  # Python refuses the positional call before TFLite runs
)
