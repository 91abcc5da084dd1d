"""Updates of a float16 variable that round away: the weights the learner trains do not move.

float16 keeps about 3 significant digits: near 2.0 its numbers are 0.002 apart. A
variable stored in float16 and updated by hand (``w.assign_sub(lr * g)``) with steps
smaller than half that spacing gets the same number back at every step: no error, no
NaN, the loss just stops going down (or never starts). Mixed precision avoids it by
keeping the variables in float32 (the "master weights", where small steps add up) and
computing in float16 from a cast of them.

A hook on ``ResourceVariable.assign_sub`` and ``assign_add`` (``hooks.py``; the original
runs as it is) looks at eager calls on float16 variables only (the first test is the
variable's dtype, read through TensorFlow's own descriptor): for at most ``MAX_CALLS``
calls per variable and cell, of variables of at most ``MAX_ELEMENTS`` entries, it copies
the value before and after and the update as float16 holds it, and counts the entries
whose update was non-zero but whose value did not change. Calls inside a
``tf.function``'s trace (symbolic values) are not looked at.

After the cell, a variable updated at least ``MIN_CALLS`` times from a line of this cell
is told when most of its non-zero updates changed nothing and it moved less than half of
what its updates add up to. The fix keeps the variable in float32 and casts it to float16
where the cell's computation reads it; a name that states float16 (``w16``) is written
with 32 (``w32``), so that it says what it holds (``symptoms/dtype_names.py``). Silent:
a float32 variable, float16 updates large enough to move it, an update of zeros.
Nothing is kept but weak references, the learner's file name and line, and copies of the
values of the variables looked at.
"""

from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.dtype_names import stated_dtype
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

SECTION = "mixed-precision"
VARIABLE_MODULE = "tensorflow.python.ops.resource_variable_ops"
CONTEXT_MODULE = "tensorflow.python.eager.context"
MAX_CALLS = 200
MAX_ELEMENTS = 100_000
MAX_VARIABLES = 8
MIN_CALLS = 5
MAX_CELL_CHARS = 30_000
MAX_FIXED_STATEMENTS = 6
# Calls that take the variable itself, not its value: its reads there keep the variable.
_TAKES_VARIABLE = frozenset(
    {"gradient", "jacobian", "batch_jacobian", "watch", "apply_gradients", "apply", "minimize"}
)
_UPDATES = frozenset({"assign_sub", "assign_add", "assign"})
# The training symptoms' note for a loop whose variables never moved, when it names no
# cause (``variables/training_symptoms.py``): replaced by this check's note.
_STALL_HEAD = "Nothing trained:"
_UNCAUSED_STALL = "The gradients were given to an update, but it changed nothing"


@dataclass
class _Updates:
    """What the hook saw of one float16 variable's updates in this cell."""

    ref: weakref.ReferenceType[Any]
    first: Any  # the value before the first update looked at
    last: Any  # the value after the last one
    wanted: Any  # the sum of the updates (float64), signed as they were applied
    site: tuple[str, int]  # the file (cell) and line of the first update
    calls: int = 0
    nonzero: int = 0  # entries of the updates that were not 0
    lost: int = 0  # of those, the ones whose entry kept its value
    last_update: Any = None  # the last update, as float16 holds it


def _executing_eagerly() -> bool:
    context = sys.modules.get(CONTEXT_MODULE)
    eager = getattr(context, "executing_eagerly", None)
    try:
        return bool(eager()) if eager is not None else False
    except Exception:
        return False


def _float16(variable: Any) -> bool:
    dtype = library_attribute(variable, "dtype")
    return dtype is not None and library_attribute(dtype, "name") == "float16"


def _variable_values(variable: Any) -> Any | None:
    """A NumPy copy of a variable's value, read with TensorFlow's own ``numpy``."""
    numpy = sys.modules.get("numpy")
    to_numpy = library_attribute(variable, "numpy")
    if numpy is None or to_numpy is None:
        return None
    held = to_numpy()
    return held if type(held) is numpy.ndarray else None


def _numpy_of(value: Any) -> Any | None:
    """A NumPy copy of an eager tensor or variable, a NumPy array or a Python number."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if type(value) in (int, float) or isinstance(value, numpy.generic):
        return numpy.asarray(value, dtype=numpy.float64)
    if type(value) is numpy.ndarray:
        return value
    described = describe("", value)
    if described is None or described.kind not in ("tensor", "variable"):
        return None
    to_numpy = library_attribute(value, "numpy")
    if to_numpy is None:
        return None
    held = to_numpy()
    return numpy.asarray(held) if isinstance(held, (numpy.ndarray, numpy.generic)) else None


class Float16UpdateWatcher:
    """The hook on float16 variables' ``assign_sub``/``assign_add``, and its notes."""

    def __init__(self, locator: CellLocator) -> None:
        self._hooks = MethodHooks()
        self._locator = locator
        self.installed = False
        self._updates: dict[int, _Updates] = {}
        self._told: set[str] = set()  # the variables told this cell, by name

    def install(self) -> bool:
        if self.installed:
            return True
        variable_class = loaded_class(VARIABLE_MODULE, "ResourceVariable")
        if variable_class is None:
            return False
        subtracted = self._hooks.install(variable_class, "assign_sub", self._hook_for(-1.0))
        added = self._hooks.install(variable_class, "assign_add", self._hook_for(1.0))
        self.installed = subtracted or added
        return self.installed

    def uninstall(self) -> None:
        self._hooks.restore()
        self.installed = False

    def begin_cell(self) -> None:
        self._updates = {}
        self._told = set()

    def _hook_for(self, sign: float) -> Callable[[Any], Callable[..., Any]]:
        watcher = self

        def make_hook(original: Any) -> Callable[..., Any]:
            def assign_hook(variable: Any, delta: Any, *args: Any, **kwargs: Any) -> Any:
                __tracebackhide__ = True  # hidden in IPython tracebacks
                before = None
                try:
                    before = watcher._before(variable, delta, sys._getframe(1))
                except Exception:
                    before = None
                result = original(variable, delta, *args, **kwargs)
                if before is not None:
                    try:
                        watcher._after(variable, before, sign)
                    except Exception:
                        pass
                return result

            return assign_hook

        return make_hook

    def _before(self, variable: Any, delta: Any, caller: Any) -> tuple[Any, Any, Any] | None:
        """(the value, the update as float16 holds it, the caller's site) of a call worth
        looking at; None for any other."""
        if not _float16(variable) or not _executing_eagerly():
            return None
        known = self._updates.get(id(variable))
        if known is not None and (known.calls >= MAX_CALLS or known.ref() is not variable):
            return None
        if known is None:
            # The variable's size, read once from its stored shape before any copy.
            if len(self._updates) >= MAX_VARIABLES:
                return None
            described = describe("", variable)
            if described is None or described.shape is None or None in described.shape:
                return None
            size = 1
            for dim in described.shape:
                size *= int(dim)  # type: ignore[arg-type]
            if size == 0 or size > MAX_ELEMENTS:
                return None
        numpy = sys.modules.get("numpy")
        value, update = _variable_values(variable), _numpy_of(delta)
        if numpy is None or value is None or update is None or update.size > value.size:
            return None
        update16 = numpy.broadcast_to(update.astype(numpy.float16), value.shape)
        site = (caller.f_code.co_filename, caller.f_lineno) if caller is not None else ("", 0)
        # A copy: the value read may share its buffer with the variable being updated.
        return value.copy(), update16, site

    def _after(self, variable: Any, before: tuple[Any, Any, Any], sign: float) -> None:
        numpy = sys.modules.get("numpy")
        value = _variable_values(variable)
        if numpy is None or value is None:
            return
        old, update16, site = before
        if value.shape != old.shape:
            return
        known = self._updates.get(id(variable))
        if known is None:
            known = self._updates[id(variable)] = _Updates(
                ref=weakref.ref(variable),
                first=old,
                last=value,
                wanted=numpy.zeros(old.shape, dtype=numpy.float64),
                site=site,
            )
        moving = update16 != 0
        known.calls += 1
        known.last = value
        known.wanted += sign * update16.astype(numpy.float64)
        known.nonzero += int(numpy.count_nonzero(moving))
        known.lost += int(numpy.count_nonzero(moving & (value == old)))
        known.last_update = update16

    def without_uncaused_stalls(self, notes: list[Note]) -> list[Note]:
        """``notes`` without the training symptom's "nothing trained" note that names no
        cause for a variable this check told this cell: its cause is the rounding told
        here, and its advice (a learning rate of 0? gradients of 0?) would mislead."""
        told, self._told = self._told, set()
        if not told:
            return notes
        return [
            n
            for n in notes
            if not (
                str(n.get("text", "")).startswith(_STALL_HEAD)
                and _UNCAUSED_STALL in str(n.get("text", ""))
                and any(f"`{name}`" in str(n.get("text", "")) for name in told)
            )
        ]

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        updates, self._updates = self._updates, {}
        self._told = set()
        numpy = sys.modules.get("numpy")
        if not updates or numpy is None or len(source) > MAX_CELL_CHARS:
            return []
        files = self._locator.cell_files()
        running = max(files.values()) if files else None
        found: list[Note] = []
        for known in updates.values():
            filename, line = known.site
            if running is None or files.get(filename) != running:
                continue  # an update made outside this cell's own lines (an optimizer's)
            if known.calls < MIN_CALLS or known.nonzero == 0 or known.lost * 2 < known.nonzero:
                continue
            wanted = float(numpy.abs(known.wanted).sum())
            moved = float(numpy.abs(known.last.astype(numpy.float64) - known.first).sum())
            if wanted == 0.0 or moved * 2 >= wanted:
                continue
            variable = known.ref()
            note = _note(numpy, known, variable, line, wanted, moved, source, namespace)
            if note is not None:
                found.append(note)
                name = name_bound_to(id(variable), namespace) if variable is not None else None
                if name:
                    self._told.add(name)
        return found[:1]


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost simple statement written on ``line``."""
    found: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or 0):
            if not hasattr(node, "body"):
                found = node
    return found


def _simple_statements(tree: ast.Module) -> list[ast.stmt]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and not hasattr(node, "body")
        and not isinstance(node, (ast.FunctionDef, ast.ClassDef))
    ]


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _keeps_variable(node: ast.Name, parents: Mapping[int, ast.AST]) -> bool:
    """Whether a read of the variable's name stays a read of the variable in the fix: its
    attribute (``w.assign_sub``, ``w.numpy()``) or an argument of a call that takes
    variables (``tape.gradient(loss, [w, b])``) or updates one (``w.assign_sub(lr * w)``)."""
    if isinstance(parents.get(id(node)), ast.Attribute):
        return True
    current: ast.AST = node
    parent = parents.get(id(current))
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.Call) and current is not parent.func:
            if call_name(parent) in _TAKES_VARIABLE | _UPDATES:
                return True
        current, parent = parent, parents.get(id(parent))
    return False


def _float32_name(name: str) -> str:
    """``w32`` for ``w16``: a name that states float16 made to state float32; other names
    as they are (the note's fix keeps the learner's name)."""
    stated = stated_dtype(name)
    if stated is None or stated[1] != "16" or stated[0] not in (None, "float"):
        return name
    if name.count("16") != 1:
        return name
    return name.replace("16", "32")


def _replaced(
    source_lines: list[str], statement: ast.stmt, edits: list[tuple[ast.AST, str]]
) -> str | None:
    """The one-line ``statement`` with each node replaced by its text, stripped."""
    if statement.lineno != statement.end_lineno or not 0 < statement.lineno <= len(source_lines):
        return None
    raw = source_lines[statement.lineno - 1].encode("utf-8")
    raw = raw[: statement.end_col_offset]
    for node, text in sorted(edits, key=lambda edit: edit[0].col_offset, reverse=True):  # type: ignore[attr-defined]
        if getattr(node, "lineno", 0) != statement.lineno:
            return None
        start, stop = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        raw = raw[:start] + text.encode("utf-8") + raw[stop:]
    return raw.decode("utf-8").strip()


def _made_float32(
    source: str, statement: ast.stmt, call: ast.Call, tf: str
) -> list[tuple[ast.AST, str]]:
    """The edits that make ``tf.Variable(...)`` create a float32 variable: its float16
    dtypes written float32, else its initial value cast."""
    edits: list[tuple[ast.AST, str]] = []
    for node in ast.walk(call):
        if isinstance(node, ast.Attribute) and node.attr in ("float16", "half"):
            owner = ast.get_source_segment(source, node.value) or tf
            edits.append((node, f"{owner}.float32"))
        elif isinstance(node, ast.Constant) and node.value in ("float16", "half"):
            edits.append((node, '"float32"'))
    if edits or not call.args:
        return edits
    initial = ast.get_source_segment(source, call.args[0])
    if initial is None:
        return []
    return [(call.args[0], f"{tf}.cast({initial}, {tf}.float32)")]


def _fix(
    source: str, tree: ast.Module, name: str, update: ast.stmt, namespace: Mapping[str, Any]
) -> str | None:
    """The cell's statements that make and read ``name``, rewritten for float32 master
    weights: the creation in float32, the computation's reads cast to float16, the
    update and the gradient on the float32 variable (renamed when the name said 16)."""
    tf_module = sys.modules.get("tensorflow")
    tf = next((alias for alias in ("tf", "tensorflow") if namespace.get(alias) is tf_module), None)
    if tf is None:
        return None
    new = _float32_name(name)
    lines = source.splitlines()
    parents = _parents(tree)
    creation: ast.stmt | None = None
    for statement in _simple_statements(tree):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
            and isinstance(statement.value, ast.Call)
            and call_name(statement.value) == "Variable"
        ):
            creation = statement
    if creation is None or creation.lineno > update.lineno:
        return None
    assert isinstance(creation, ast.Assign) and isinstance(creation.value, ast.Call)
    fixed: list[tuple[int, str]] = []
    for statement in sorted(_simple_statements(tree), key=lambda s: (s.lineno, s.col_offset)):
        edits: list[tuple[ast.AST, str]] = []
        if statement is creation:
            edits = _made_float32(source, statement, creation.value, tf)
            if not edits:
                return None
            if new != name:
                edits.append((creation.targets[0], new))
        for node in ast.walk(statement):
            if not (
                isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id == name
            ):
                continue
            if _keeps_variable(node, parents):
                if new != name:
                    edits.append((node, new))
            else:
                edits.append((node, f"{tf}.cast({new}, {tf}.float16)"))
        if not edits:
            continue
        written = _replaced(lines, statement, edits)
        if written is None:
            return None
        fixed.append((statement.lineno, written))
    if not fixed or len(fixed) > MAX_FIXED_STATEMENTS:
        return None
    return ", ".join(f"line {line} as `{text}`" for line, text in fixed)


def _note(
    numpy: Any,
    known: _Updates,
    variable: Any,
    line: int,
    wanted: float,
    moved: float,
    source: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    tree = parsed_source(source)
    if tree is None:
        return None
    update = _statement_at(tree, line)
    written = ast.get_source_segment(source, update) if update is not None else None
    if update is None or written is None or "\n" in written:
        return None
    name = name_bound_to(id(variable), namespace) if variable is not None else None
    who = f"`{name}`" if name else "the variable it updates"
    entries = int(known.first.size)
    typical = float(numpy.median(numpy.abs(known.last.astype(numpy.float64))))
    spacing = float(numpy.spacing(numpy.float16(typical))) if typical > 0 else 0.0
    per_entry = wanted / entries
    sizes = numpy.abs(numpy.asarray(known.last_update, dtype=numpy.float64))
    step = float(numpy.median(sizes[sizes != 0])) if bool(numpy.any(sizes != 0)) else 0.0
    owner = f" of {who}" if name else ""
    text = (
        f"`{written}` (line {line} of this cell) ran {known.calls} times, and "
        f"{known.lost} of the {known.nonzero} non-zero updates it made to an entry{owner} "
        f"were lost: {who} is a float16 variable, and float16 keeps about 3 significant "
        f"digits. Near its values (about {typical:.3g}) float16 numbers are {spacing:.2g} "
        f"apart, and an update smaller than half of that (the last ones were about "
        f"{step:.2g}) rounds back to the same number. The updates add up to "
        f"{per_entry:.2g} per entry on average; {who} moved {moved / entries:.2g} per entry: "
        "it does not learn, and nothing raises. Mixed precision keeps the variables in "
        "float32, where small steps add up, and computes in float16 from a cast of them."
    )
    fix = _fix(source, tree, name, update, namespace) if name else None
    if fix is not None:
        text += f" Fix: {fix}."
    return reports.note(text, SECTION)
