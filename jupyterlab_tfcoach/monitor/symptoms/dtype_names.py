"""A value whose name states a dtype or precision it does not have.

``H64 = tf.constant(rows)`` next to ``H32 = tf.constant(rows, dtype=tf.float32)``: the
names say one is the float64 copy, but ``tf.constant`` turns Python floats into
TensorFlow's default float32 (NumPy would have given float64), so every "float64" result
is a float32 result and the comparison of the two precisions compares float32 with
itself. ``x_f32 = np.array(values)`` is the mirror slip (NumPy's default is float64).
Nothing raises; the numbers are just not what the name promises.

Read after a completed cell from the names its top-level statements bind (``a = ...``,
``a, b = ...``) whose values then are tensors, variables or arrays of a numeric dtype. A
name states a dtype in either of two ways (its parts split at ``_`` and at a lower-upper
case change):

- a part that spells a dtype: ``f64``, ``fp32``, ``float16``, ``int64``, ``i32``,
  ``uint8``, ``bf16``... (``x_f64``, ``probsFloat16``);
- a part that ends in a bare precision (``H64``, ``ones_32``) when the cell binds a
  sibling name that differs only in that number (``H32``), whose value has the same shape
  and the dtype its own number says: the pair is then two precisions of one quantity. A
  number that is one of the value's sizes (``emb64`` of shape (n, 64)) counts nothing.

Told when the value's dtype is not the stated one: the first such name of the cell, with
the others of the cell (``ones64`` made from ``H64.dtype``) named after it. The fix asks
for the stated dtype where the value is made, when that statement is a call that takes a
dtype (``tf.constant``, ``tf.convert_to_tensor``, ``tf.Variable``, ``tf.zeros``/``ones``,
``tf.cast``, ``np.array``/``asarray``/``zeros``/``ones``/``full``, ``astype``...): the
``dtype`` argument added or replaced, never a cast of a value already rounded. Source
and dtypes only. A value a Keras model or layer gives back (``p16 = model.predict(x)``)
whose layers compute in the stated dtype is silent: the name states the model's
precision, and a mixed-precision model's output is float32 by design.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import keras_layers, library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name, parsed_source

SECTION = "dtype-casting"
MAX_CELL_CHARS = 30_000
_HELD = frozenset({"tensor", "variable", "array"})
# A name part that ends in a precision: its letters before the number, and the number.
_PART = re.compile(r"^([a-z]*?)(8|16|32|64)$")
_FAMILIES = {
    "float": "float",
    "fp": "float",
    "f": "float",
    "int": "int",
    "i": "int",
    "uint": "uint",
    "u": "uint",
    "bf": "bfloat",
    "bfloat": "bfloat",
}
_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Digits a name that states a precision ends with (a substring test before the parse,
# which the other checks of the cell share).
_PRECISIONS = ("8", "16", "32", "64")
_BARE = ("16", "32", "64")
_DTYPE_WORD = re.compile(r"^(?:b?float\d+|u?int\d+|double|half|single)$")
# Where a call takes its dtype positionally (the keyword is accepted by all of them).
_DTYPE_AT = {
    "constant": 1,
    "convert_to_tensor": 1,
    "zeros": 1,
    "ones": 1,
    "array": 1,
    "asarray": 1,
    "cast": 1,
    "astype": 0,
    "full": 2,
    "zeros_like": 1,
    "ones_like": 1,
}
# Calls that take ``dtype=`` only as a keyword (or far down their positional list).
_DTYPE_KEYWORD = frozenset({"Variable", "eye", "arange", "linspace", "range"})
# Calls that convert their first argument: a tensor of another dtype makes them raise.
_CONVERTING = frozenset({"constant", "convert_to_tensor", "Variable"})


def _parts(name: str) -> list[str]:
    return [part.lower() for piece in name.split("_") for part in _SPLIT.split(piece) if part]


def stated_dtype(name: str) -> tuple[str | None, str, int] | None:
    """``(family, bits, part index)`` a name states (family None for a bare number); the
    fixes of other checks use it to keep a renamed value's name truthful."""
    parts = _parts(name)
    for index, part in enumerate(parts):
        match = _PART.match(part)
        if match is None:
            continue
        letters, bits = match.groups()
        if letters in _FAMILIES:
            family = _FAMILIES[letters]
            if family == "bfloat" and bits != "16":
                continue
            return family, bits, index
        if bits in _BARE:
            return None, bits, index
    return None


def _sibling_key(name: str, bits: str) -> str | None:
    """The name with its precision number blanked: ``H#`` for ``H64``."""
    found = [m for m in re.finditer(r"(8|16|32|64)", name) if m.group(0) == bits]
    if len(found) != 1:
        return None
    match = found[0]
    return name[: match.start()] + "#" + name[match.end() :]


def _bound(tree: ast.Module) -> list[tuple[str, ast.stmt, ast.expr | None]]:
    """Names bound by the cell's top-level assignments, with the expression that made
    each one when it is known (``a, b = x, y`` pairs them)."""
    found: list[tuple[str, ast.stmt, ast.expr | None]] = []
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            found.append((statement.target.id, statement, statement.value))
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name):
                found.append((target.id, statement, statement.value))
            elif isinstance(target, ast.Tuple):
                values = statement.value
                paired = isinstance(values, ast.Tuple) and len(values.elts) == len(target.elts)
                for position, element in enumerate(target.elts):
                    if isinstance(element, ast.Name):
                        made = values.elts[position] if paired else None  # type: ignore[union-attr]
                        found.append((element.id, statement, made))
    return found


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a name whose stated dtype its value does not have, if any."""
    if len(source) > MAX_CELL_CHARS:
        return []
    if not any(digits in source for digits in _PRECISIONS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    bound = [
        entry
        for entry in _bound(tree)
        if any(digits in entry[0] for digits in _PRECISIONS) and stated_dtype(entry[0]) is not None
    ]
    held: dict[str, tuple[str, tuple[int | None, ...] | None, str]] = {}
    for name, _, _ in bound:
        if name in held:
            continue
        described = describe(name, namespace.get(name))
        if described is None or described.kind not in _HELD or not described.dtype:
            continue
        if not re.match(r"^(b?float|u?int)\d+$", described.dtype):
            continue
        held[name] = (described.dtype, described.shape, described.kind)
    wrong: list[tuple[str, ast.stmt, ast.expr | None, str, str | None]] = []
    seen: set[str] = set()
    for name, statement, made in bound:
        if name not in held or name in seen:
            continue
        seen.add(name)
        stated = stated_dtype(name)
        if stated is None:
            continue
        family, bits, _ = stated
        dtype, shape, _ = held[name]
        sibling = None
        if family is None:
            if shape is not None and int(bits) in shape:
                continue
            sibling = _sibling(name, bits, dtype, shape, held)
            if sibling is None:
                continue
            value_family = re.sub(r"\d+$", "", dtype)
            wanted = f"{value_family}{bits}"
        else:
            wanted = f"{family}{bits}"
        if wanted == dtype:
            continue
        if _model_computes_in(made, wanted, namespace):
            continue
        wrong.append((name, statement, made, wanted, sibling))
    if not wrong:
        return []
    return [_note(source, wrong, held, namespace)]


# The calls that run a Keras model or layer on data and give back its output.
_MODEL_RUNS = frozenset({"predict", "predict_on_batch", "__call__", "call"})
MAX_LAYERS = 200


def _model_computes_in(made: ast.expr | None, wanted: str, namespace: Mapping[str, Any]) -> bool:
    """Whether ``made`` runs a Keras model or layer (``model.predict(x)``, ``model(x)``)
    one of whose layers computes in ``wanted``: the name then states the precision the
    model computes in, not the output's dtype (a mixed-precision model's last layer is
    float32 by design, so ``p16 = model.predict(x)`` is float32 and right)."""
    if not isinstance(made, ast.Call):
        return False
    func = made.func
    if isinstance(func, ast.Attribute) and func.attr in _MODEL_RUNS:
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    described = describe("", namespace.get(func.id))
    if described is None or described.kind not in ("layer", "model"):
        return False
    for layer in keras_layers(described.value, MAX_LAYERS):
        if library_attribute(layer, "compute_dtype") == wanted:
            return True
    return False


def _sibling(
    name: str,
    bits: str,
    dtype: str,
    shape: tuple[int | None, ...] | None,
    held: Mapping[str, tuple[str, tuple[int | None, ...] | None, str]],
) -> str | None:
    """A name of the cell that is ``name`` with another precision number, holding a value
    of the same shape whose dtype is the one its own number says."""
    key = _sibling_key(name, bits)
    if key is None:
        return None
    family = re.sub(r"\d+$", "", dtype)
    for other in _BARE:
        if other == bits:
            continue
        candidate = key.replace("#", other)
        if candidate not in held:
            continue
        other_dtype, other_shape, _ = held[candidate]
        if other_shape == shape and other_dtype == f"{family}{other}":
            return candidate
    return None


def _root(call: ast.Call) -> str | None:
    """``tf`` for ``tf.constant(...)``, ``np`` for ``np.array(...)``."""
    dotted = dotted_name(call.func)
    if dotted is None or "." not in dotted:
        return None
    return dotted.split(".", 1)[0]


def _dtype_text(call: ast.Call, current: ast.expr | None, wanted: str) -> str:
    """How to write ``wanted`` in the call's own style."""
    if isinstance(current, ast.Constant) and isinstance(current.value, str):
        return repr(wanted).replace("'", '"')
    if current is not None:
        dotted = dotted_name(current)
        if dotted is not None and "." in dotted and _DTYPE_WORD.match(dotted.rsplit(".", 1)[1]):
            return f"{dotted.rsplit('.', 1)[0]}.{wanted}"
    root = _root(call)
    if root is not None and call_name(call) != "astype":
        return f"{root}.{wanted}"
    return f'"{wanted}"'


def _plain_data(node: ast.expr, namespace: Mapping[str, Any]) -> bool:
    """Whether ``node`` is Python numbers or a NumPy array, which ``tf.constant`` and
    ``tf.Variable`` convert to any dtype (a tensor of another dtype makes them raise)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp, ast.Constant, ast.UnaryOp)):
        return True
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        if type(value) in (list, tuple, int, float):
            return True
        described = describe(node.id, value)
        return described is not None and described.kind == "array"
    return False


def _fixed_call(
    source: str, made: ast.expr, wanted: str, namespace: Mapping[str, Any]
) -> str | None:
    """The making call's text with ``dtype`` set to ``wanted``."""
    if not isinstance(made, ast.Call):
        return None
    name = call_name(made)
    if name in _CONVERTING and (not made.args or not _plain_data(made.args[0], namespace)):
        return None
    text = ast.get_source_segment(source, made)
    if text is None or "\n" in text or any(isinstance(a, ast.Starred) for a in made.args):
        return None
    if any(k.arg is None for k in made.keywords):
        return None
    keyword = next((k for k in made.keywords if k.arg == "dtype"), None)
    position = _DTYPE_AT.get(name or "")
    if keyword is not None:
        current: ast.expr | None = keyword.value
    elif position is not None and len(made.args) > position:
        current = made.args[position]
    elif position is not None or name in _DTYPE_KEYWORD:
        current = None
    else:
        return None
    dtype = _dtype_text(made, current, wanted)
    if current is None:
        if made.end_col_offset is None or made.col_offset is None:
            return None
        inner = text[:-1].rstrip()
        separator = "" if inner.endswith("(") else ", "
        return f"{inner}{separator}dtype={dtype})"
    piece = ast.get_source_segment(source, current)
    if piece is None or text.count(piece) != 1:
        return None
    return text.replace(piece, dtype)


def _note(
    source: str,
    wrong: list[tuple[str, ast.stmt, ast.expr | None, str, str | None]],
    held: Mapping[str, tuple[str, tuple[int | None, ...] | None, str]],
    namespace: Mapping[str, Any],
) -> Note:
    name, statement, made, wanted, sibling = wrong[0]
    dtype, _, kind = held[name]
    what = {"tensor": "tensor", "variable": "variable", "array": "NumPy array"}[kind]
    line = statement.lineno
    text = f"`{name}` (line {line} of this cell) is a {dtype} {what}, but its name says {wanted}"
    if sibling is not None:
        text += f" (next to `{sibling}`, which does hold {held[sibling][0]})"
    text += ". "
    made_text = ast.get_source_segment(source, made) if made is not None else None
    call = made if isinstance(made, ast.Call) else None
    has_dtype = call is not None and (
        any(k.arg == "dtype" for k in call.keywords)
        or (
            _DTYPE_AT.get(call_name(call) or "") is not None
            and len(call.args) > _DTYPE_AT[call_name(call) or ""]
        )
    )
    takes_dtype = call is not None and (
        _DTYPE_AT.get(call_name(call) or "") is not None or call_name(call) in _DTYPE_KEYWORD
    )
    if made_text is not None and "\n" not in made_text and takes_dtype and not has_dtype:
        default = "float32" if kind != "array" else "float64"
        lib = "TensorFlow" if kind != "array" else "NumPy"
        text += (
            f"`{made_text}` asks for no dtype, so it gets {lib}'s default "
            f"({default} for Python floats) whatever the name says. "
        )
    elif made_text is not None and "\n" not in made_text:
        text += f"`{made_text}` makes it {dtype}. "
    others = [f"`{other}` holds {held[other][0]}" for other, *_ in wrong[1:4]]
    if others:
        text += f"Other names of this cell disagree with their values too: {', '.join(others)}. "
    text += (
        f"Everything computed from it runs in {dtype}, so a result labelled {wanted}, or "
        f"compared with a {dtype} twin, says nothing about {wanted}. Nothing raises."
    )
    fixed = _fixed_call(source, made, wanted, namespace) if made is not None else None
    target = _target_text(source, statement, name)
    if fixed is not None and target is not None:
        text += f" Ask for {wanted} where it is made: `{target} = {fixed}`."
    else:
        text += f" Make it {wanted} where it is created (`dtype=` of the call that makes it)."
    return reports.note(text, SECTION)


def _target_text(source: str, statement: ast.stmt, name: str) -> str | None:
    """The left-hand side to repeat in the fix: the name alone, for a single target."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Name):
            return name
        if isinstance(target, ast.Tuple) and isinstance(statement.value, ast.Tuple):
            return name
    if isinstance(statement, ast.AnnAssign):
        return name
    return None
