"""A key asked of a dict TensorFlow or Keras made, which it does not have: two families.

- ``DICT_KEY``: Python's ``KeyError`` in the learner's own line, on a dict that holds
  tensors or arrays or that a library call returned: ``preds[0]`` when ``preds =
  model.predict(x)`` of a model whose outputs were given as a dict (predict then returns a
  dict keyed by the output names, not a list), ``batch["pixels"]`` on an element of a
  dataset built from a dict with other keys. The traceback never enters TensorFlow, so
  the message is only the key. The reading names the dict, its keys and what each holds,
  where the dict came from (the call that assigned it, read from the cells), and the key
  meant: the nearest one by spelling, or for a number the key at that position.
- ``OUTPUT_KEYS``: Keras's ``KeyError`` "The path: ('name',) in the `loss` argument, can't
  be found in either the model's output or in the labels": a ``loss``/``metrics``/
  ``loss_weights`` dict of ``compile`` keyed by other names than the model's outputs. The
  reading lists the outputs' names (Keras's ``output_names``), the labels' keys when fit
  got a dict, and rewrites the compile call with each unknown key renamed to the output it
  is nearest to (by spelling, else by position when the counts agree).

A ``KeyError`` on a learner's dict of plain Python values gets no entry.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    string_literal,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    rewrite,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import stored

_MAX_KEYS = 12
_MAX_KEY_CHARS = 40
_TENSOR_KINDS = ("array", "tensor", "variable", "symbolic", "keras_tensor")
_PREDICT_CALLS = ("predict", "predict_on_batch")
_SECTION = "keras-model-api"
_DATA_SECTION = "tf-data"


def _asked_key(message: str) -> Any:
    """The key of a ``KeyError``: its message is the key's repr (``0``, ``'scores'``)."""
    try:
        key = ast.literal_eval(message.strip())
    except Exception:
        return None
    return key if type(key) in (str, int) else None


def _subscript_asking(line: FailingLine, key: Any) -> ast.Subscript | None:
    """The ``x[key]`` read of the failing statement whose constant index is the key."""
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is type(key)
            and node.slice.value == key
        ):
            return node
    return None


def _library_values(held: dict[Any, Any]) -> bool:
    """Whether a dict holds tensors, arrays or specs (a dict of plain values is not ours)."""
    for value in list(held.values())[:_MAX_KEYS]:
        if value_kind(value) in _TENSOR_KINDS:
            return True
        if type(value).__name__ in ("TensorSpec", "RaggedTensorSpec", "SparseTensorSpec"):
            return True
    return False


def _keys_text(held: dict[Any, Any]) -> str:
    parts = []
    for key, value in list(held.items())[:_MAX_KEYS]:
        described = describe("", value, nested=True)
        shown = f'"{key}"' if type(key) is str else repr(key) if type(key) is int else "?"
        parts.append(f"{shown} ({described.description})" if described else shown)
    more = ", ..." if len(held) > _MAX_KEYS else ""
    return ", ".join(parts) + more


def _meant(key: Any, keys: list[str]) -> str | None:
    """The key the learner meant: the one at a number's position, else the nearest."""
    if type(key) is int:
        return keys[key] if -len(keys) <= key < len(keys) else None
    near = difflib.get_close_matches(str(key), keys, n=1, cutoff=0.5)
    return near[0] if near else None


def _other_positions(
    asked: ast.Subscript, keys: list[str], line: FailingLine
) -> tuple[str, list[tuple[int, str]]]:
    """The cell's other reads of the same dict by position (``preds[1]`` a line below),
    each with its key: the fix of the failing line alone would fail on the next one. Also
    each other one-line statement rewritten with the keys, as (line, fixed statement)."""
    tree = line.frame.tree()
    if tree is None or not isinstance(asked.value, ast.Name):
        return "", []
    said = []
    by_statement: dict[int, list[tuple[ast.AST, str]]] = {}
    statements_by_id: dict[int, ast.stmt] = {}
    statements = {
        id(child): statement
        for statement in ast.walk(tree)
        if isinstance(statement, ast.stmt) and not hasattr(statement, "body")
        for child in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if (
            node is not asked
            and isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == asked.value.id
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int
            and -len(keys) <= node.slice.value < len(keys)
        ):
            written = line.frame.segment(node)
            if written and len(said) < 4:
                meant = f'{asked.value.id}["{keys[node.slice.value]}"]'
                said.append(f"line {node.lineno}'s {code(written)} is {code(meant)}")
                statement = statements.get(id(node))
                if statement is not None and statement is not line.statement:
                    literal = f'"{keys[node.slice.value]}"'
                    by_statement.setdefault(id(statement), []).append((node.slice, literal))
                    statements_by_id[id(statement)] = statement
    fixed_lines = []
    for key, parts in by_statement.items():
        statement = statements_by_id[key]
        fixed = rewrite_all(line.frame, statement, parts)
        if fixed and "\n" not in fixed:
            fixed_lines.append((statement.lineno, fixed))
    text = (" Read the others by key too: " + "; ".join(said) + ".") if said else ""
    return text, sorted(fixed_lines)


def _origin(receiver: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[str, str] | None:
    """Where the dict came from: (the sentence, the course section)."""
    if not isinstance(receiver, ast.Name):
        return None
    for cell, statement in assignments_in_cells(receiver.id, context):
        value = statement.value
        shown = cell.segment(value) or ""
        if "\n" in shown or len(shown) > 120:
            shown = ""
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in _PREDICT_CALLS
        ):
            model = cell.segment(value.func.value) or "the model"
            return (
                f"{code(receiver.id)} was made by {code(shown or model + '.predict(...)')}: "
                f"{code(model)}'s outputs were given as a dict, so {value.func.attr} returns a "
                "dict keyed by the output names, not a list in their order",
                _SECTION,
            )
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "next"
        ):
            return (
                f"{code(receiver.id)} is an element of the dataset read by {code(shown)}; a "
                "dataset built from a dict gives each element as a dict with the same keys",
                _DATA_SECTION,
            )
        return None
    return None


def _read_dict_key(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    key = _asked_key(error.parsed.message)
    if key is None:
        return None
    node = _subscript_asking(line, key)
    if node is None:
        return None
    found, held = value_of(node.value, line.frame, context)
    if not found or type(held) is not dict or not held:
        return None
    origin = _origin(node.value, line, context)
    if origin is None and not _library_values(held):
        return None
    receiver = line.frame.segment(node.value) or ""
    keys = [each for each in held if type(each) is str and len(each) <= _MAX_KEY_CHARS]
    asked = repr(key) if type(key) is str else str(key)
    described = describe(receiver, held)
    rule = f"{described.sentence() if described else code(receiver)}: {_keys_text(held)}"
    rule += f"; it has no key {code(asked)}"
    rule += ": a dict is read by key, not by position." if type(key) is int else "."
    if origin is not None:
        rule += f" {origin[0]}."
    if not keys:
        return Finding(rule, None, section=origin[1] if origin else GENERAL_SECTION)
    meant = _meant(key, keys) if keys and len(keys) == len(held) else None
    fix = None
    if meant is not None:
        written = line.frame.segment(node.slice)
        literal = string_literal(written if type(key) is str else None, meant)
        statement = line.statement
        fixed = rewrite(line.frame, statement, node.slice, literal) if statement else None
        if fixed and "\n" not in fixed:
            where = "at position" if type(key) is int else "nearest to"
            rule += f" The key {where} {code(asked)} is {code(literal)}."
            fix = code(fixed)
    if fix is None:
        rule += " Read it by one of the keys it has."
    elif type(key) is int:
        others, fixed_lines = _other_positions(node, keys, line)
        rule += others
        # Every line that reads the dict by position is fixed, not the failing one alone.
        fix += "".join(f" and, on line {number}, {code(text)}" for number, text in fixed_lines)
    section = origin[1] if origin else GENERAL_SECTION
    return Finding(rule, fix, section=section)


DICT_KEY = ErrorFamily(
    "a key a library dict does not have",
    messages=(),
    exception_type="KeyError",
    read=_read_dict_key,
    section=GENERAL_SECTION,
    # Python raises it in the user's line, after the library returned the dict.
    without_library=True,
)


# ------------------------------------------------------------------ compile dict keys
_PATH = re.compile(
    r"The path: \((?P<path>[^)]*)\) in the `(?P<argument>\w+)` argument, can't be found in "
    r"either the model's output"
)
_TRAINING = ("fit", "evaluate", "train_on_batch", "test_on_batch")


def _output_names(model: Any) -> list[str] | None:
    """The names Keras matches compile's dict keys against: the keys of the dict the
    model's outputs were given as, else its output layers' names (read as stored)."""
    if value_kind(model) != "model":
        return None
    structure = stored(model, "_outputs_struct")
    names = list(structure) if type(structure) is dict else stored(model, "output_names")
    try:
        names = [name for name in names][:_MAX_KEYS]
    except Exception:
        return None
    return names if names and all(type(name) is str for name in names) else None


def _training_call(line: FailingLine) -> ast.Call | None:
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _TRAINING
        ):
            return node
    return None


def _labels(call: ast.Call, line: FailingLine, context: ErrorContext) -> Any:
    """What the training call was given as labels: its second argument, else the labels
    part of a dataset named in its first (``train_ds.take(2)`` reads ``train_ds``)."""
    if len(call.args) > 1:
        found, held = value_of(call.args[1], line.frame, context)
        return held if found else None
    if not call.args:
        return None
    for node in ast.walk(call.args[0]):
        if not isinstance(node, ast.Name):
            continue
        found, dataset = value_of(node, line.frame, context)
        if not found or value_kind(dataset) != "dataset":
            continue
        spec = getattr(type(dataset), "element_spec", None)
        try:
            element = spec.fget(dataset) if isinstance(spec, property) else None
        except Exception:
            return None
        return element[1] if type(element) is tuple and len(element) > 1 else None
    return None


def _compile_dict(
    model: str, argument: str, line: FailingLine, context: ErrorContext
) -> tuple[CellFrame, ast.stmt, ast.Dict] | None:
    """The newest ``<model>.compile(..., <argument>={...})`` statement in the cells."""
    from jupyterlab_tfcoach.monitor.errors.families_keras_api import compile_calls

    for cell, call, receiver in compile_calls(context):
        if receiver != model:
            continue
        for keyword_ in call.keywords:
            if keyword_.arg == argument and isinstance(keyword_.value, ast.Dict):
                frame = cell_frame(cell)
                tree = frame.tree()
                statement = next(
                    (
                        top
                        for top in (tree.body if tree else [])
                        if any(inner is call for inner in ast.walk(top))
                    ),
                    None,
                )
                return (frame, statement, keyword_.value) if statement else None
        return None
    return None


def _joined(text: str) -> str:
    """A statement written over several lines, on one (each line's indentation dropped)."""
    joined = ""
    for part in (piece.strip() for piece in text.splitlines()):
        if not part:
            continue
        tight = not joined or joined[-1] in "([{" or part[0] in ")]}"
        joined += part if tight else " " + part
    return re.sub(r",\s*([)\]}])", r"\1", joined)


def _renamed(keys: list[str], names: list[str]) -> dict[str, str] | None:
    """Each key that is not an output name -> the output it stands for."""
    unknown = [key for key in keys if key not in names]
    free = [name for name in names if name not in keys]
    renames: dict[str, str] = {}
    for key in unknown:
        near = difflib.get_close_matches(key, free, n=1, cutoff=0.4)
        if near:
            renames[key] = near[0]
            free.remove(near[0])
    left = [key for key in unknown if key not in renames]
    if left and len(left) == len(free):
        renames.update(zip(left, free, strict=True))
    return renames if len(renames) == len(unknown) else None


def _read_output_keys(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = _training_call(line)
    if call is None:
        return None
    found, model = value_of(call.func.value, line.frame, context)  # type: ignore[attr-defined]
    names = _output_names(model) if found else None
    model_source = line.frame.segment(call.func.value)  # type: ignore[attr-defined]
    if not names or not model_source:
        return None
    argument = error.group("argument")
    path = [part.strip().strip("'\"") for part in error.group("path").split(",") if part.strip()]
    listed = ", ".join(f'"{name}"' for name in names)
    asked = ", ".join(f'"{part}"' for part in path)
    rule = (
        f"{code(model_source)}'s outputs are named {listed}, and Keras matches each key of "
        f"the {code(argument)} dict given to compile to the output (and the labels' key) of "
        f"that name: {asked} names none of them."
    )
    held = _labels(call, line, context)
    if type(held) is dict:
        keys = ", ".join(f'"{key}"' for key in list(held)[:_MAX_KEYS] if type(key) is str)
        rule += f" The labels are a dict keyed by {keys}."
    read = _compile_dict(model_source, argument, line, context)
    if read is None:
        return Finding(rule + f" Key the {code(argument)} dict by {listed}.", None)
    frame, statement, given = read
    literals = [
        key for key in given.keys if isinstance(key, ast.Constant) and type(key.value) is str
    ]
    renames = _renamed([key.value for key in literals], names)  # type: ignore[misc]
    if not renames:
        return Finding(rule + f" Key the {code(argument)} dict by {listed}.", None)
    parts = [
        (key, string_literal(frame.segment(key), renames[key.value]))
        for key in literals
        if key.value in renames
    ]
    fixed = rewrite_all(frame, statement, parts)
    if not fixed:
        return Finding(rule, None)
    fixed = _joined(fixed)
    said = ", ".join(f'"{old}" -> "{new}"' for old, new in renames.items())
    return Finding(
        rule + f" Rename the keys to the outputs' names ({said}), then run the cell again.",
        code(fixed),
    )


OUTPUT_KEYS = ErrorFamily(
    "a compile dict keyed by other names than the model's outputs",
    messages=(Message(_PATH),),
    exception_type="KeyError",
    read=_read_output_keys,
    section=_SECTION,
)
