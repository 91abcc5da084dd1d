"""A ``tf.Variable`` started far outside the range a clip then keeps it in.

``canvas = tf.Variable(tf.random.uniform(shape, 0, 255))`` optimised as an image and kept
in [0, 1] by ``canvas.assign(tf.clip_by_value(canvas, 0.0, 1.0))``: the first clip sets
almost every value to 1.0, so the run starts from a flat image, not from the noise drawn,
and ends far from what the learner meant. Nothing raises.

After a completed cell holding ``clip`` or ``Variable(`` (two substring tests otherwise):
the ``clip_by_value(V, lo, hi)`` calls (``keras.ops.clip`` too) whose clipped value is a
plain name ``V`` holding a TensorFlow variable and whose bounds are numbers (written, or
names holding numbers), in the cell (its functions included) or in the notebook's own
functions the cell calls by name (their source holding ``clip``). ``V``'s start is the
newest ``V = tf.Variable(init)`` of the cell, else of the earlier cells (newest first); a
``V.assign(...)`` without a clip after it (a rescaling) and before the clip keeps the note
out. The share of the start outside ``[lo, hi]`` is read without running anything:

- a random draw written in ``init`` (TensorFlow, Keras, NumPy or a NumPy ``Generator``:
  ``uniform`` from its bounds, ``normal`` from its mean and spread), through ``* c``,
  ``/ c``, ``+ c``, ``- c`` with numbers and ``tf.cast``/``astype``/``tf.constant``;
- a name holding a float array or eager tensor: its values (at most 5M, one pass).

Told when at least ``OUTSIDE_SHARE`` of the start lies outside the clip's range: a start
that the first clip flattens. A clip kept for a few outliers (a content image plus a little
noise: a few percent outside), a start inside the range, and [-1, 1] images clipped to
[-1, 1] stay silent. Once per variable (weakly).

The note names the variable, the start as written and its range, the clip and its range,
the share outside and the bound it collapses to; fix: the statement with the draw made in
the clip's range (``tf.random.uniform(shape, 0.0, 1.0)``, ``rng.uniform(lo, hi, size)``),
or, for an array about 255 times the clip's upper bound (8-bit pixels against [0, 1]),
the array divided by 255; else the rule, no code.

Nothing here imports TensorFlow, prints or calls user code; failures are swallowed.
"""

from __future__ import annotations

import ast
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, number_literal, parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.clip_ranges import float_values

SECTION = "creating-slicing-reducing"
MAX_CELL_CHARS = 50_000
MAX_CELLS_SEARCHED = 30
OUTSIDE_SHARE = 0.5  # a start mostly outside the clip: the first clip flattens it
INSIDE_TOLERANCE = 1e-6
_CLIPS = frozenset({"clip_by_value", "clip"})
_WRAPPERS = frozenset({"cast", "constant", "convert_to_tensor", "astype", "float32"})
# Variables told (by id, weakly: a tf.Variable is unhashable).
_TOLD: dict[int, weakref.ReferenceType[Any]] = {}
MAX_TOLD = 256


@dataclass(frozen=True)
class Clip:
    name: str
    low: float
    high: float
    text: str  # the clip call as written
    place: str  # where, as the learner finds it


@dataclass(frozen=True)
class Start:
    """What a variable started from: the range and the share outside the clip."""

    low: float
    high: float
    outside: float  # share of the start outside [clip.low, clip.high]
    above: float  # share above clip.high
    fixed: str | None  # the creating statement fixed, or None


def _is_variable(value: Any) -> bool:
    cls = type(value)
    return "Variable" in cls.__name__ and cls.__module__.startswith("tensorflow")


def _number(node: ast.AST, namespace: Mapping[str, Any]) -> float | None:
    found = number_literal(node)
    if found is not None:
        return found
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        if type(value) in (int, float) and math.isfinite(value):
            return float(value)
    return None


def _text(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def _clips_in(
    source: str, tree: ast.AST, namespace: Mapping[str, Any], place: Any
) -> list[tuple[Clip, ast.Call]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or call_name(node) not in _CLIPS:
            continue
        if len(node.args) < 3 or not isinstance(node.args[0], ast.Name):
            continue
        low, high = _number(node.args[1], namespace), _number(node.args[2], namespace)
        if low is None or high is None or not low < high:
            continue
        name = node.args[0].id
        if not _is_variable(namespace.get(name)):
            continue
        text = _text(source, node)
        if not text or "\n" in text:
            continue
        found.append((Clip(name, low, high, text, place(node.lineno)), node))
    return found


# ------------------------------------------------------------------ the start
def _module_of(node: ast.AST, namespace: Mapping[str, Any]) -> str | None:
    """``numpy`` or ``tensorflow`` (Keras too) for the root of a draw's callee."""
    while isinstance(node, ast.Attribute | ast.Call):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    if not isinstance(node, ast.Name):
        return None
    value = namespace.get(node.id)
    module = value.__name__ if isinstance(value, ModuleType) else type(value).__module__
    if module.startswith("numpy"):
        return "numpy"
    if module.startswith(("tensorflow", "keras")):
        return "tensorflow"
    return None


def _argument(call: ast.Call, index: int, *names: str) -> ast.AST | None:
    for keyword in call.keywords:
        if keyword.arg in names:
            return keyword.value
    return call.args[index] if len(call.args) > index else None


def _normal_share(mean: float, spread: float, low: float, high: float) -> tuple[float, float]:
    """(share outside [low, high], share above high) of a normal draw."""

    def below(x: float) -> float:
        return 0.5 * (1.0 + math.erf((x - mean) / (spread * math.sqrt(2.0))))

    above = 1.0 - below(high)
    return below(low) + above, above


def _uniform_share(a: float, b: float, low: float, high: float) -> tuple[float, float]:
    width = b - a
    if width <= 0:
        inside = low <= a <= high
        return (0.0, 0.0) if inside else (1.0, 1.0 if a > high else 0.0)
    above = max(0.0, b - max(a, high)) / width
    below = max(0.0, min(b, low) - a) / width
    return above + below, above


@dataclass(frozen=True)
class Draw:
    call: ast.Call
    kind: str  # "uniform" or "normal"
    module: str  # "numpy" or "tensorflow"
    first: float  # uniform: low; normal: mean
    second: float  # uniform: high; normal: spread
    shape: ast.AST | None


def _draw(call: ast.Call, namespace: Mapping[str, Any]) -> Draw | None:
    kind = call_name(call)
    if kind not in ("uniform", "normal", "rand", "random"):
        return None
    module = _module_of(call.func, namespace)
    if module is None:
        return None
    numbers = []
    if module == "tensorflow":
        if kind not in ("uniform", "normal"):
            return None
        shape = _argument(call, 0, "shape")
        names = (("minval",), ("maxval",)) if kind == "uniform" else (("mean",), ("stddev",))
        defaults = (0.0, 1.0)
        for index, (keywords, default) in enumerate(zip(names, defaults, strict=True)):
            node = _argument(call, index + 1, *keywords)
            numbers.append(default if node is None else _number(node, namespace))
    else:
        if kind in ("rand", "random"):
            return Draw(call, "uniform", module, 0.0, 1.0, None)
        names = (("low",), ("high",)) if kind == "uniform" else (("loc",), ("scale",))
        shape = _argument(call, 2, "size")
        for index, (keywords, default) in enumerate(zip(names, (0.0, 1.0), strict=True)):
            node = _argument(call, index, *keywords)
            numbers.append(default if node is None else _number(node, namespace))
    first, second = numbers
    if first is None or second is None or (kind == "normal" and second <= 0):
        return None
    return Draw(call, kind, module, first, second, shape)


def _affine(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[ast.AST, float, float]:
    """(the inner expression, scale, offset) of ``inner * c + d`` and the like, under
    ``tf.cast``/``astype``/``tf.constant`` wrappers: value = inner * scale + offset."""
    scale, offset = 1.0, 0.0
    while True:
        if isinstance(node, ast.Call) and call_name(node) in _WRAPPERS:
            if not isinstance(node.func, ast.Attribute):
                return node, scale, offset
            if call_name(node) == "astype":
                node = node.func.value
            elif node.args:
                node = node.args[0]
            else:
                return node, scale, offset
            continue
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, ast.Mult | ast.Div | ast.Add | ast.Sub
        ):
            right = _number(node.right, namespace)
            left = _number(node.left, namespace)
            if right is not None:
                inner, c = node.left, right
            elif left is not None and isinstance(node.op, ast.Mult | ast.Add):
                inner, c = node.right, left
            else:
                return node, scale, offset
            # Read from the outside in: value = scale * (inner op c) + offset.
            if isinstance(node.op, ast.Mult):
                scale *= c
            elif isinstance(node.op, ast.Div):
                if c == 0:
                    return node, scale, offset
                scale /= c
            elif isinstance(node.op, ast.Add):
                offset += scale * c
            else:
                offset -= scale * c
            node = inner
            continue
        return node, scale, offset


def _drawn_start(
    init: ast.AST, source: str, statement: ast.Assign, clip: Clip, namespace: Mapping[str, Any]
) -> Start | None:
    inner, scale, offset = _affine(init, namespace)
    if not isinstance(inner, ast.Call) or scale == 0:
        return None
    draw = _draw(inner, namespace)
    if draw is None:
        return None
    # The affine map is read from the outside in: value = draw * scale + offset.
    low, high = (clip.low - offset) / scale, (clip.high - offset) / scale
    flipped = scale < 0
    if flipped:
        low, high = high, low
    if draw.kind == "uniform":
        outside, above = _uniform_share(draw.first, draw.second, low, high)
        start_low = draw.first * scale + offset
        start_high = draw.second * scale + offset
    else:
        outside, above = _normal_share(draw.first, draw.second, low, high)
        start_low = (draw.first - 2 * draw.second) * scale + offset
        start_high = (draw.first + 2 * draw.second) * scale + offset
    if flipped:
        above = outside - above
        start_low, start_high = start_high, start_low
    target = draw.call if (scale, offset) == (1.0, 0.0) else _scaled_part(init)
    return Start(
        start_low, start_high, outside, above, _fixed_draw(draw, source, statement, target, clip)
    )


def _fixed_draw(
    draw: Draw, source: str, statement: ast.Assign, target: ast.AST, clip: Clip
) -> str | None:
    """The creating statement with ``target`` (the draw, with its scaling) replaced by a
    draw made uniformly in the clip's range."""
    func = draw.call.func
    if not isinstance(func, ast.Attribute):
        return None
    callee = f"{_text(source, func.value)}.uniform"
    low, high = _bound(clip.low), _bound(clip.high)
    shape = _text(source, draw.shape) if draw.shape is not None else None
    if draw.module == "tensorflow":
        if not shape:
            return None
        kept = [
            _text(source, k)
            for k in draw.call.keywords
            if k.arg in ("dtype", "seed") and _text(source, k)
        ]
        fixed_draw = f"{callee}({', '.join([shape, low, high, *kept])})"
    elif call_name(draw.call) in ("rand", "random"):
        return None
    else:
        fixed_draw = f"{callee}({low}, {high}{', ' + shape if shape else ''})"
    return _replace(source, statement, target, fixed_draw)


def _scaled_part(init: ast.AST) -> ast.AST:
    """The scaled expression under any wrappers (``tf.cast(u * 255, ...)``: ``u * 255``)."""
    node = init
    while isinstance(node, ast.Call) and call_name(node) in _WRAPPERS:
        if call_name(node) == "astype" and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif node.args:
            node = node.args[0]
        else:
            break
    return node


def _replace(source: str, statement: ast.Assign, node: ast.AST, text: str) -> str | None:
    written = _text(source, statement)
    if not written or "\n" in written or node.lineno != statement.lineno:
        return None
    raw = written.encode("utf-8")
    start = node.col_offset - statement.col_offset
    end = (node.end_col_offset or 0) - statement.col_offset
    return (raw[:start] + text.encode() + raw[end:]).decode("utf-8")


def _bound(value: float) -> str:
    return f"{value:.1f}" if value == int(value) else f"{value:g}"


def _array_start(
    init: ast.AST, source: str, statement: ast.Assign, clip: Clip, namespace: Mapping[str, Any]
) -> Start | None:
    if not isinstance(init, ast.Name):
        return None
    values = float_values(namespace.get(init.id))
    if values is None:
        return None
    low, high = float(values.min()), float(values.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    size = values.size
    above = float((values > clip.high + INSIDE_TOLERANCE).sum()) / size
    below = float((values < clip.low - INSIDE_TOLERANCE).sum()) / size
    fixed = None
    if clip.low == 0.0 and low >= 0.0 and abs(high / clip.high - 255.0) <= 0.15 * 255.0:
        fixed = _replace(source, statement, init, f"{init.id} / {255.0 * clip.high:g}.0")
    return Start(low, high, above + below, above, fixed)


# ------------------------------------------------------------------ finding
def _creation(
    name: str, sources: list[str], counts: list[int | None]
) -> tuple[ast.Assign, str, int | None, int] | None:
    """The newest ``name = tf.Variable(...)`` of the cells: (statement, source, count,
    index of its cell in ``sources``); None when the newest assignment is anything else."""
    for index, source in enumerate(sources):
        if name not in source:
            continue
        tree = parsed_source(source)
        statements = [
            s
            for s in (tree.body if tree is not None else ())
            if isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id == name
        ]
        if not statements:
            continue
        statement = statements[-1]
        value = statement.value
        if isinstance(value, ast.Call) and call_name(value) == "Variable" and value.args:
            return statement, source, counts[index], index
        return None
    return None


def _rescaled(name: str, tree: ast.AST, after: int = 0) -> bool:
    """Whether ``name.assign(...)`` without a clip in it appears (after line ``after``)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "assign"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and node.lineno > after
            and not any(isinstance(n, ast.Call) and call_name(n) in _CLIPS for n in ast.walk(node))
        ):
            return True
    return False


def _clip_sites(source: str, namespace: Mapping[str, Any]) -> list[Clip]:
    clips: list[Clip] = []
    if "clip" in source:
        tree = parsed_source(source)
        if tree is not None:
            found = _clips_in(source, tree, namespace, lambda line: f"line {line} of this cell")
            clips.extend(clip for clip, _node in found)
    if "Variable(" in source or "clip" in source:
        for name, text in user_code.called_function_sources(source, namespace, "clip"):
            tree = user_code.parse(text)
            if tree is None:
                continue
            found = _clips_in(text, tree, namespace, lambda _line, n=name: f"in `{n}`")
            clips.extend(clip for clip, _node in found)
    return clips


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first variable of the cell's clips that started mostly outside."""
    if len(source) > MAX_CELL_CHARS or ("clip" not in source and "Variable(" not in source):
        return []
    clips = _clip_sites(source, namespace)
    if not clips:
        return []
    sources, counts = user_code.cell_sources(namespace, source)
    sources, counts = sources[:MAX_CELLS_SEARCHED], counts[:MAX_CELLS_SEARCHED]
    for clip in clips:
        variable = namespace.get(clip.name)
        told = _TOLD.get(id(variable))
        if told is not None and told() is variable:
            continue
        note = _note(clip, sources, counts, namespace)
        if note is not None:
            if len(_TOLD) >= MAX_TOLD:
                _TOLD.clear()
            try:
                _TOLD[id(variable)] = weakref.ref(variable)
            except TypeError:
                pass
            return [note]
    return []


def _note(
    clip: Clip, sources: list[str], counts: list[int | None], namespace: Mapping[str, Any]
) -> Note | None:
    made = _creation(clip.name, sources, counts)
    if made is None:
        return None
    statement, source, count, index = made
    # A rescaling assign between the start and the clip: the clip meets other values.
    later = [sources[i] for i in range(index)]
    tree = parsed_source(source)
    if tree is None or _rescaled(clip.name, tree, statement.lineno):
        return None
    if any((t := parsed_source(s)) is not None and _rescaled(clip.name, t) for s in later):
        return None
    init = statement.value.args[0]  # type: ignore[attr-defined]
    start = _drawn_start(init, source, statement, clip, namespace) or _array_start(
        init, source, statement, clip, namespace
    )
    if start is None or start.outside < OUTSIDE_SHARE:
        return None
    written = _text(source, init)
    if not written or len(written) > 120:
        return None
    where = user_code.cell_place(count, statement.lineno)
    share = f"{100 * start.outside:.0f}%" if start.outside < 0.995 else "almost all"
    if start.above >= 0.9 * start.outside:
        bound = f"{_bound(clip.high)} (the clip's upper bound)"
    elif start.above <= 0.1 * start.outside:
        bound = f"{_bound(clip.low)} (the clip's lower bound)"
    else:
        bound = f"{_bound(clip.low)} or {_bound(clip.high)}"
    drawn = "about " if isinstance(init, ast.Call | ast.BinOp) and start.low != start.high else ""
    text = (
        f"`{clip.name}` starts from `{written}` ({where}), values from {drawn}"
        f"{_short(start.low)} to {_short(start.high)}, but `{clip.text}` ({clip.place}) keeps "
        f"it in [{_bound(clip.low)}, {_bound(clip.high)}]: {share} of the starting values "
        f"lie outside that range, so the first clip sets them to {bound}: the run starts "
        f"from values piled on the bounds, not from the start you made. Nothing raises."
    )
    if start.fixed is not None:
        text += f" Make the start in the clip's range: `{start.fixed}`."
    else:
        text += (
            " Make the start in the clip's range (draw it between the clip's bounds, or scale "
            "the array you start from into them)."
        )
    return reports.note(text, SECTION)


def _short(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.3g}"
