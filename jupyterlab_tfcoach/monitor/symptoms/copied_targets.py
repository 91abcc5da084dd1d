"""A forecasting target that is a copy of a value the input window already holds.

A window of ``W`` steps ``s[i:i + W]`` forecasts the next step ``s[i + W]``. Written
``s[i + W - 1]`` (or ``targets=s[W - 1:]`` for ``keras.utils.
timeseries_dataset_from_array``, which pairs the window starting at ``i`` with
``targets[i]``), the target is the window's own last step: the model learns to copy its
last input, its error looks excellent, and it forecasts nothing. Nothing raises.

Found after a cell that completed (a cell without ``[`` and ``timeseries_dataset`` or a
loop costs a few substring tests), from its source alone (functions it defines
included):

* ``timeseries_dataset_from_array(data=A..., targets=A[k:], sequence_length=L)`` (also
  ``sampling_rate=r``) with the same array ``A`` for data and targets: the window starting
  at ``i`` holds ``A[i]`` ... ``A[i + (L - 1) r]``, so an offset ``k`` of at most ``(L -
  1) r`` (a multiple of ``r``) makes each target one of its window's steps. ``k`` and
  ``L`` are read from numbers, the notebook's ``int`` names and ``+ - * //``.
* windows cut by hand with a loop variable (``for i in range(...)`` or a comprehension):
  a slice ``A[a:b]`` and an index ``A[c]`` of the same array, each naming a loop
  variable, where ``c`` (with the loop variables at 0) falls in ``[a + 1, b)``; or, in
  one returned pair (``lambda w: (w[:-1], w[-2])``), an index inside the pair's slice.

The note names the statement and the step copied; fix: the target one step after the
window (``targets=A[L:]``, ``A[i + W]``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import whole_number
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
_TIMESERIES = "timeseries_dataset_from_array"


# The split readers' reading of a whole number (``len(x) - k`` and ``int(...)`` too).
_integer = whole_number


def _base(node: ast.AST) -> str | None:
    """``A`` of ``A``, ``A[:, None]``, ``A[:-k]``, ``A.reshape(-1, 1)``, ``A[..., None]``."""
    for _ in range(4):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return None
    return None


def _first_axis(node: ast.Subscript) -> ast.expr:
    index = node.slice
    if isinstance(index, ast.Tuple) and index.elts:
        return index.elts[0]
    return index


def _keyword(call: ast.Call, name: str, position: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def _timeseries_note(call: ast.Call, source: str, names: Mapping[str, Any]) -> str | None:
    data, targets = _keyword(call, "data", 0), _keyword(call, "targets", 1)
    length_node = _keyword(call, "sequence_length", 2)
    if data is None or not isinstance(targets, ast.Subscript) or length_node is None:
        return None
    base = _base(data)
    if base is None or _base(targets) != base:
        return None
    bounds = _first_axis(targets)
    if not isinstance(bounds, ast.Slice) or bounds.step is not None:
        return None
    offset = _integer(bounds.lower, names) if bounds.lower is not None else 0
    length = _integer(length_node, names)
    rate_node = next((k.value for k in call.keywords if k.arg == "sampling_rate"), None)
    rate = _integer(rate_node, names) if rate_node is not None else 1
    if offset is None or length is None or rate is None or length < 1 or rate < 1:
        return None
    last = (length - 1) * rate
    if not (0 <= offset <= last and offset % rate == 0):
        return None
    written = ast.get_source_segment(source, targets)
    length_text = ast.get_source_segment(source, length_node)
    if written is None or length_text is None:
        return None
    shift = (
        length_text if rate == 1 else f"{length_text} * {ast.get_source_segment(source, rate_node)}"
    )  # type: ignore[arg-type]
    if rate == 1 and not length_text.isidentifier() and _integer(length_node, {}) is None:
        shift = f"({length_text})"
    lower = bounds.lower
    if lower is None:
        fixed = written.replace("[:", f"[{shift}:", 1)
    else:
        lower_text = ast.get_source_segment(source, lower)
        if lower_text is None or written.count(lower_text) < 1:
            return None
        fixed = written.replace(lower_text, shift, 1)
    step = offset // rate
    which = "last" if offset == last else f"step {step + 1} of {length}"
    return (
        f"`targets={written}` (line {targets.lineno}) with `sequence_length={length_text}`: "
        f"`{_TIMESERIES}` pairs the window starting at step i with `targets[i]`, here "
        f"`{base}[i + {offset}]`, which is the window's own {which} input step, not the "
        f"step after it. The model learns to copy a value it is given, its error looks "
        f"excellent, and it forecasts nothing. Nothing raises. Start the targets one step "
        f"after the window: `targets={fixed}`."
    )


def _loop_names(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.For | ast.comprehension):
            target = node.target
        if target is not None:
            found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return found


def _mentions(node: ast.AST, loop: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in loop for n in ast.walk(node))


def _inside(window: tuple[int, int], index: int, same_pair: bool) -> bool:
    start, stop = window
    if same_pair:
        if index < 0 and stop <= 0:
            return index < stop if stop < 0 else False
        return start <= index < stop
    return start + 1 <= index < stop


class _Integers(Mapping[str, Any]):
    """The notebook's ``int`` names, read on demand, with each loop variable at 0."""

    def __init__(self, namespace: Mapping[str, Any], loop: set[str]) -> None:
        self._namespace = namespace
        self._loop = loop

    def __getitem__(self, key: str) -> Any:
        if key in self._loop:
            return 0
        value = self._namespace.get(key)
        if type(value) is not int:
            raise KeyError(key)
        return value

    def __iter__(self) -> Any:
        return iter(self._loop)

    def __len__(self) -> int:
        return len(self._loop)


def _hand_note(tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> str | None:
    loop = _loop_names(tree)
    env = _Integers(namespace, loop)
    # Returned or built pairs first: ``(w[:-1], w[-2])``.
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and len(node.elts) == 2:
            first, second = node.elts
            if not (isinstance(first, ast.Subscript) and isinstance(second, ast.Subscript)):
                continue
            if _base(first) is None or _base(first) != _base(second):
                continue
            text = _pair_note(first, second, source, env, True)
            if text is not None:
                return text
    if not loop:
        return None
    slices: list[ast.Subscript] = []
    indexes: list[ast.Subscript] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
            continue
        if not _mentions(node.slice, loop):
            continue
        axis = _first_axis(node)
        (slices if isinstance(axis, ast.Slice) else indexes).append(node)
    for window in slices:
        for index in indexes:
            if _base(window) != _base(index):
                continue
            text = _pair_note(window, index, source, env, False)
            if text is not None:
                return text
    return None


def _pair_note(
    window: ast.Subscript, index: ast.Subscript, source: str, env: Mapping[str, Any], pair: bool
) -> str | None:
    bounds = _first_axis(window)
    position = _first_axis(index)
    if not isinstance(bounds, ast.Slice) or isinstance(position, ast.Slice):
        return None
    if bounds.step is not None or bounds.upper is None:
        return None
    start = _integer(bounds.lower, env) if bounds.lower is not None else 0
    stop = _integer(bounds.upper, env)
    at = _integer(position, env)
    if start is None or stop is None or at is None or not _inside((start, stop), at, pair):
        return None
    written_window = ast.get_source_segment(source, window)
    written_index = ast.get_source_segment(source, index)
    stop_text = ast.get_source_segment(source, bounds.upper)
    if written_window is None or written_index is None or stop_text is None:
        return None
    base = _base(window)
    fixed = f"{base}[{stop_text}]" if stop >= 0 or pair else None
    if stop < 0:
        fixed = f"{base}[{stop_text}]"
    if fixed is None:
        return None
    last = at == stop - 1 or (at < 0 and at == stop - 1)
    which = "its last step" if last else "one of its steps"
    return (
        f"`{written_index}` (line {index.lineno}) is the target of the window "
        f"`{written_window}` (line {window.lineno}), but it is {which}, not the step after "
        f"the window: the model learns to copy a value it is given, its error looks "
        f"excellent, and it forecasts nothing. Nothing raises. Take the step right after "
        f"the window as the target: `{fixed}`."
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "[" not in source or len(source) > MAX_CELL_CHARS:
        return []
    series = _TIMESERIES in source
    if not series and "for " not in source and "lambda" not in source and "return" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    names = _Integers(namespace, set())
    if series:
        owners: dict[int, str] = {}  # the function each call is written in
        for scope in ast.walk(tree):
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(scope):
                    owners.setdefault(id(inner), scope.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and call_name(node) == _TIMESERIES:
                text = _timeseries_note(node, source, names)
                if text is not None:
                    owner = owners.get(id(node))
                    if owner is not None:
                        text = f"In `{owner}`, {text}"
                    return [reports.note(text, SECTION)]
    text = _hand_note(tree, source, namespace)
    return [reports.note(text, SECTION)] if text is not None else []
