"""Data that does not fit what the code declared it to be, read from both sides: two
families (issue #25).

- ``GENERATOR_NESTING``: ``Dataset.from_generator`` checks every element the generator
  yields against ``output_signature``, nesting included. TensorFlow's message prints the
  expected dtypes and the whole yielded arrays; the reading finds the ``from_generator``
  call in the cells, the generator function (named, or called by a lambda) and its
  ``yield``, and the signature (the value a name holds, else the tuple written there), and
  says both nestings side by side. When they hold the same number of parts, the fix is the
  ``yield`` regrouped as the signature is (``yield img, (box, cls)``).
- ``STRING_INPUT``: "Cast string to float is not supported" from a Keras model's fit,
  evaluate or predict: an ``Input`` declared without ``dtype="string"`` (so float32) that
  the data feeds text. The reading lists the model's inputs with their declared dtypes
  (``Input`` keeps them), finds the data given (a dict of arrays, a dataset's
  ``element_spec``, an array; names inside a call such as ``make_ds(small, y)`` are read
  too) and the input whose data holds strings; the fix is that ``keras.Input(...)``
  statement with ``dtype="string"``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    SourceCell,
    cell_frame,
    error_cells,
)
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import stored

_DATA_SECTION = "tf-data"
_MAX_PARTS = 16

# ------------------------------------------------------------------ generator nesting
_NESTING = re.compile(
    r"`generator` yielded an element that did not match the expected structure\. "
    r"The expected structure was (?P<expected>.{1,400}?), but the yielded element was",
    re.S,
)


def _from_generator_calls(context: ErrorContext) -> list[tuple[SourceCell, ast.Call]]:
    found = []
    for cell in error_cells(context):
        if "from_generator" not in cell.source:
            continue
        tree = cell.tree()
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "from_generator"
            ):
                found.append((cell, node))
    return found


def _generator_def(
    call: ast.Call, context: ErrorContext
) -> tuple[SourceCell, ast.FunctionDef] | None:
    """The function whose ``yield`` makes the elements: ``from_generator(gen)`` or
    ``from_generator(lambda: gen(...))``."""
    first = call.args[0] if call.args else None
    for keyword_ in call.keywords:
        if keyword_.arg == "generator":
            first = keyword_.value
    if isinstance(first, ast.Lambda) and isinstance(first.body, ast.Call):
        first = first.body.func
    if not isinstance(first, ast.Name):
        return None
    for cell in error_cells(context):
        tree = cell.tree()
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.FunctionDef) and node.name == first.id:
                return cell, node
    return None


def _structure_of_value(value: Any) -> Any:
    """A signature as nested lists of leaf words (``(4,) float32``), or None."""
    if type(value) in (tuple, list):
        parts = [_structure_of_value(part) for part in value[:_MAX_PARTS]]
        return None if any(part is None for part in parts) else parts
    shape = getattr(value, "shape", None)
    dtype = getattr(getattr(value, "dtype", None), "name", None)
    if shape is None or type(dtype) is not str:
        return None
    try:
        dims = shape.as_list()
    except Exception:
        return f"a {dtype} spec"
    return f"{show_shape(tuple(dims))} {dtype}" if dims is not None else f"a {dtype} spec"


def _element_spec(
    call: ast.Call, cell: SourceCell, line: FailingLine, context: ErrorContext
) -> Any:
    """The ``element_spec`` of the dataset the ``from_generator`` call was assigned to."""
    tree = cell.tree()
    for top in tree.body if tree is not None else []:
        if (
            isinstance(top, ast.Assign)
            and isinstance(top.targets[0], ast.Name)
            and any(inner is call for inner in ast.walk(top))
        ):
            found, dataset = context.lookup(top.targets[0].id, line.frame)
            spec = getattr(type(dataset), "element_spec", None) if found else None
            try:
                return spec.fget(dataset) if isinstance(spec, property) else None
            except Exception:
                return None
    return None


def _structure_of_node(node: ast.expr, cell: SourceCell) -> Any:
    """A signature written in the call: its nesting, each leaf shown as a spec."""
    if isinstance(node, (ast.Tuple, ast.List)):
        parts = [_structure_of_node(part, cell) for part in node.elts[:_MAX_PARTS]]
        return None if any(part is None for part in parts) else parts
    return "a spec"


def _yielded(node: ast.expr, cell: SourceCell) -> Any:
    """What a ``yield`` gives: its nesting, each leaf its source."""
    if isinstance(node, ast.Tuple):
        return [_yielded(part, cell) for part in node.elts[:_MAX_PARTS]]
    return cell.segment(node) or "?"


def _flat(structure: Any) -> list[str]:
    if isinstance(structure, list):
        return [leaf for part in structure for leaf in _flat(part)]
    return [structure]


def _shown(structure: Any) -> str:
    if isinstance(structure, list):
        return "(" + ", ".join(_shown(part) for part in structure) + ")"
    return str(structure)


def _leaves(structure: Any) -> int:
    return sum(_leaves(part) for part in structure) if isinstance(structure, list) else 1


def _regrouped(structure: Any, parts: list[str]) -> str:
    """The yielded parts, in order, nested as ``structure`` is."""
    if not isinstance(structure, list):
        return parts.pop(0)
    inner = [_regrouped(part, parts) for part in structure]
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


def _read_nesting(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    calls = _from_generator_calls(context)
    if not calls:
        return None
    statement_text = line.frame.segment(line.statement) if line.statement else ""
    chosen = calls[0]
    for cell, call in calls:
        tree = cell.tree()
        for top in tree.body if tree is not None else []:
            if (
                isinstance(top, ast.Assign)
                and any(inner is call for inner in ast.walk(top))
                and isinstance(top.targets[0], ast.Name)
                and top.targets[0].id in (statement_text or "")
            ):
                chosen = (cell, call)
                break
    cell, call = chosen
    signature = next(
        (k.value for k in call.keywords if k.arg in ("output_signature", "output_types")), None
    )
    generator = _generator_def(call, context)
    if signature is None or generator is None:
        return None
    structure = None
    if isinstance(signature, ast.Name):
        found, value = value_of(signature, line.frame, context)
        structure = _structure_of_value(value) if found else None
    if structure is None:
        structure = _structure_of_value(_element_spec(call, cell, line, context))
    if structure is None:
        structure = _structure_of_node(signature, cell)
    if not isinstance(structure, list):
        return None
    gen_cell, function = generator
    yields = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Yield) and isinstance(node.value, ast.Tuple)
    ]
    if not yields:
        return None
    yielded = yields[0]
    given = _yielded(yielded.value, gen_cell)  # type: ignore[arg-type]
    leaves = _flat(given)
    signature_text = cell.segment(signature) or ""
    named = f" {code(signature_text)}" if 0 < len(signature_text) <= 40 else ""
    rule = (
        f"The generator {code(function.name)} yields {_shown(given)}, a tuple of "
        f"{len(given)}, while the output_signature{named} is nested as "
        f"{_shown(structure)}: from_generator checks each element against the "
        "signature's nesting, not only its number of parts"
    )
    if _leaves(structure) != len(leaves):
        return Finding(rule + ".", None, section=_DATA_SECTION)
    regrouped = _regrouped(structure, list(leaves))[1:-1]
    fixed = f"yield {regrouped}"
    rule += (
        f". Group what {code(function.name)} yields as the signature is (in the def, line "
        f"{yielded.lineno - function.lineno + 1} of it), then run the cells that build and "
        "read the dataset again"
    )
    return Finding(rule + ".", code(fixed), section=_DATA_SECTION)


GENERATOR_NESTING = ErrorFamily(
    "a generator's elements nested otherwise than from_generator's signature",
    messages=(Message(_NESTING),),
    read=_read_nesting,
    section=_DATA_SECTION,
)


# ------------------------------------------------------------------ strings into a float Input
_CAST_STRING = re.compile(r"Cast string to (?P<dtype>\w+) is not supported")
_MODEL_CALLS = ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch")


def _model_call(line: FailingLine) -> ast.Call | None:
    statement = line.statement
    for node in ast.walk(statement) if statement is not None else ():
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MODEL_CALLS
        ):
            return node
    return None


def _declared_inputs(model: Any) -> dict[str, str] | None:
    """The model's inputs by name -> declared dtype, as its Input tensors store them."""
    structure = stored(model, "_inputs_struct")
    if type(structure) is dict:
        items = list(structure.items())
    elif type(structure) in (list, tuple):
        items = [(stored(each, "name"), each) for each in structure]
    else:
        items = [(stored(structure, "name"), structure)]
    declared = {}
    for key, tensor in items[:_MAX_PARTS]:
        dtype = stored(tensor, "_dtype")
        if type(key) is str and type(dtype) is str:
            declared[key] = dtype
    return declared or None


def _holds_strings(value: Any) -> bool:
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind in ("U", "S"):
        return True
    if kind == "O":
        try:
            first = value.flat[0]
        except Exception:
            return False
        return type(first) in (str, bytes)
    return getattr(getattr(value, "dtype", None), "name", None) == "string"


def _string_keys(value: Any) -> tuple[list[str], bool] | None:
    """The keys of a dict (or a dataset's dict features) that hold strings, and whether the
    data is one unnamed value holding strings."""
    if value_kind(value) == "dataset":
        spec = getattr(type(value), "element_spec", None)
        try:
            value = spec.fget(value) if isinstance(spec, property) else None
        except Exception:
            return None
        if type(value) is tuple and value:
            value = value[0]
    if type(value) is dict:
        keys = [key for key, part in value.items() if type(key) is str and _holds_strings(part)]
        return keys, False
    return ([], True) if _holds_strings(value) else None


def _data_with_strings(call: ast.Call, line: FailingLine, context: ErrorContext) -> Any:
    first = call.args[0] if call.args else None
    for keyword_ in call.keywords:
        if keyword_.arg == "x":
            first = keyword_.value
    if first is None:
        return None
    candidates = [first] + [node for node in ast.walk(first) if isinstance(node, ast.Name)]
    for node in candidates:
        found, value = value_of(node, line.frame, context)
        if not found:
            continue
        read = _string_keys(value)
        if read is not None and (read[0] or read[1]):
            return read
    return None


def _input_statement(
    name: str | None, context: ErrorContext
) -> tuple[SourceCell, ast.stmt, ast.Call] | None:
    """The ``x = keras.Input(..., name=<name>)`` statement in the cells (any name when
    ``name`` is None and the cells hold one Input)."""
    found = []
    for cell in error_cells(context):
        tree = cell.tree()
        for top in tree.body if tree is not None else []:
            if not isinstance(top, ast.Assign) or not isinstance(top.value, ast.Call):
                continue
            call = top.value
            callee = (
                call.func.attr
                if isinstance(call.func, ast.Attribute)
                else getattr(call.func, "id", None)
            )
            if callee != "Input":
                continue
            given = next((k.value for k in call.keywords if k.arg == "name"), None)
            given_name = given.value if isinstance(given, ast.Constant) else None
            if name is None or given_name == name:
                found.append((cell, top, call))
        if found and name is not None:
            break
    return found[0] if len(found) == 1 or (found and name is not None) else None


def _read_string_input(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = _model_call(line)
    if call is None:
        return None
    found, model = value_of(call.func.value, line.frame, context)  # type: ignore[attr-defined]
    if not found or value_kind(model) != "model":
        return None
    declared = _declared_inputs(model)
    data = _data_with_strings(call, line, context)
    if not declared or data is None:
        return None
    keys, unnamed = data
    if unnamed:
        targets = list(declared) if len(declared) == 1 else []
    else:
        targets = [key for key in keys if key in declared and declared[key] != "string"]
    if not targets:
        return None
    target = targets[0]
    model_source = line.frame.segment(call.func.value) or "the model"  # type: ignore[attr-defined]
    listed = ", ".join(f'"{name}" ({dtype})' for name, dtype in declared.items())
    rule = (
        f"{code(model_source)}'s inputs are declared as {listed}, and the data given for "
        f'"{target}" holds strings: an `Input` without `dtype=` is float32, so Keras casts '
        f"what comes in to {declared[target]}, and text cannot be cast to a number. Declare "
        'that input as text (`dtype="string"`), as the layer reading it (a StringLookup) '
        "expects, and build the model again"
    )
    read = _input_statement(None if unnamed else target, context)
    if read is None:
        return Finding(rule + ".", None, section="dtype-casting")
    cell, statement, input_call = read
    frame = cell_frame(cell)
    dtype_keyword = next((k for k in input_call.keywords if k.arg == "dtype"), None)
    if dtype_keyword is not None:
        fixed = rewrite(frame, statement, dtype_keyword.value, '"string"')
    else:
        inside = cell.segment(input_call) or ""
        if not inside.endswith(")"):
            return Finding(rule + ".", None, section="dtype-casting")
        fixed = rewrite(frame, statement, input_call, inside[:-1].rstrip() + ', dtype="string")')
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None, section="dtype-casting")
    return Finding(rule + ".", code(fixed), section="dtype-casting")


STRING_INPUT = ErrorFamily(
    "strings fed to a model input declared as numbers",
    messages=(Message(_CAST_STRING),),
    read=_read_string_input,
    section="dtype-casting",
    exception_type="UnimplementedError",
)
