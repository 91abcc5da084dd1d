"""Features scaled by one number for the whole array, where each feature needed its own.

``X = (X - X.mean()) / X.std()`` (also ``np.mean(X)``, ``tf.reduce_mean(X)``,
``tf.math.reduce_std(X)``, ``keras.ops.mean(X)``, a min-max ``(X - X.min()) / (X.max() -
X.min())`` or ``X / X.max()``) reduces over every value of an ``(N, F)`` table: one mean
and one spread for all its columns. When the columns are on very different scales (a
price in tens of thousands next to a rate in hundredths), the result keeps those scales:
the large column comes out near mean 0 and spread 1, the small ones as near-constants
that barely move the model's first layer. Nothing raises and the model trains, badly.

Told on the symptom, after a cell that completed: a top-level ``name = <expression>``
whose value after the cell is a float ``(N, F)`` tensor or array (2 <= F <= 100: image
pixels flattened into hundreds of columns share one scale and are scaled as a whole on
purpose; at most a million values) whose columns' spreads differ by a factor of
``SPREAD_RATIO`` or more, and whose expression scales data by statistics of a whole array:
``(A - M) / S`` or ``A / S``, ``S`` (and ``M``) built from reductions without ``axis``
(``A.std()``, ``np.max(A)``, ``tf.math.reduce_std(A)``, ``sd + 1e-8``, ``np.sqrt(v)``),
directly, through a name the cell or the helper's body assigned, or through a name
holding a single number after the cell (statistics computed in an earlier cell, a
training set's applied to a test set: the cell history ``In`` gives the statement that
computed them). A plain number (``X / 255.0``) is the learner's choice and is not told.
The same form in the ``return`` of a notebook function (``def standardize(a): return (a -
a.mean()) / a.std()``) is remembered when its cell runs, and a later ``Z =
standardize(X)`` is told the same way (the function's name in the cell's text is the only
test a cell without a division pays).

Columns on one scale but each offset differently (a blob of points around (2, -1)) are
told too when the scaling subtracts a whole-array mean (``(A - A.mean()) / A.std()``):
the centring was meant per feature, and after it a column's mean is still at least its
own spread (``CENTRE_SPREADS``, and ``CENTRE_MINIMUM``) away from 0. Columns of one
distribution scaled as a whole come out centred and are not told.
The centring may be a statement of its own before the scaling (``a = a - tf.reduce_mean(a)``
then ``return a / tf.reduce_max(tf.norm(a, axis=-1))`` in a helper): it is read as part of
the scaling, and when only the centring shows the symptom only its mean gets ``axis=0``
(one scale for a whole example, such as its largest norm, is meant).

The note names the statement, the columns' spreads after it and gives the statement (or
the helper's, or the statistics') with ``axis=0``: one statistic per feature, over the
examples. Reads shapes and a NumPy copy's column spreads only (``cell_reading``).
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import weakref
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import numpy_values, value_at
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    history_assignments,
    parsed_source,
    subtree_nodes,
)

SECTION = "class-axis"
MAX_NOTES = 2
MAX_FEATURES = 100
# The widest column spread over the narrowest (non-zero) one: past this, one scale for
# the table leaves the narrow columns nearly constant.
SPREAD_RATIO = 20.0
# A column left this many of its own spreads (and at least CENTRE_MINIMUM) from 0 by a
# centring on one mean for the whole table is not centred.
CENTRE_SPREADS = 1.0
CENTRE_MINIMUM = 0.25
_MEANS = frozenset({"mean", "nanmean", "reduce_mean", "median"})
MAX_ROWS_READ = 10_000
_MAX_HELPERS = 16
_HISTORY_CELLS = 50
_MAX_CHARS = 50_000
# Reductions that give one number for a whole array when called without an axis.
_STATISTICS = frozenset(
    {
        "mean",
        "std",
        "var",
        "max",
        "min",
        "sum",
        "ptp",
        "median",
        "nanmean",
        "nanstd",
        "nanmax",
        "nanmin",
        "amax",
        "amin",
        "norm",
        "reduce_mean",
        "reduce_std",
        "reduce_variance",
        "reduce_max",
        "reduce_min",
        "reduce_sum",
        "variance",
    }
)
_ELEMENTWISE = frozenset({"sqrt", "abs", "float", "float32", "float64"})
_MODULES = frozenset({"np", "numpy", "tf", "tensorflow", "keras", "ops", "math", "linalg"})
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


@dataclass
class _Statistic:
    """A reduction without axis found in a scaling: the call and the statement holding
    it (rewritten with ``axis=0`` for the fix)."""

    call: ast.Call
    statement: ast.stmt
    source: str


@dataclass
class _Scaling:
    """``(A - M) / S`` over whole-array statistics: the expression, its data ``A`` and
    the statistics it reads (calls found, and names holding a number from earlier)."""

    node: ast.expr
    data: ast.expr
    calls: list[_Statistic]
    earlier_names: list[str]
    # ``A - A.mean()``: a centring was meant, each column should come out around 0.
    centred: bool = False
    # The centring is a statement of its own (``a = a - a.mean()`` before ``a / s``): when
    # only the centring shows a symptom, only its means are rewritten (the scale after it,
    # such as a largest norm, is one number for the whole example on purpose).
    centring_apart: bool = False


@dataclass
class _Helper:
    """A notebook function whose ``return`` scales its parameter by whole-array stats."""

    function: weakref.ReferenceType[Any] | None
    name: str
    parameter: str
    scaling: _Scaling
    statement: ast.stmt  # the return


def _is_module_call(call: ast.Call) -> bool:
    func = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
        if isinstance(func, ast.Name) and func.id in _MODULES:
            return True
    return False


def _has_axis(call: ast.Call, module_call: bool) -> bool:
    if any(k.arg in ("axis", "dim", "dims") for k in call.keywords):
        return True
    return len(call.args) > (1 if module_call else 0)


def _reduced_data(call: ast.Call) -> ast.expr | None:
    """``X`` for ``X.mean()``, ``np.mean(X)``, ``tf.reduce_mean(X)``: a reduction
    over every value (no axis); None otherwise."""
    if call_name(call) not in _STATISTICS or not isinstance(call.func, ast.Attribute):
        return None
    module_call = _is_module_call(call)
    if _has_axis(call, module_call):
        return None
    if module_call:
        return call.args[0] if call.args else None
    return call.func.value


def _same_text(source: str, a: ast.AST, b: ast.AST) -> bool:
    left, right = ast.get_source_segment(source, a), ast.get_source_segment(source, b)
    return left is not None and left == right


class _Reader:
    """Reads one scope's statistics: its earlier assignments followed by name."""

    def __init__(self, source: str, scope: list[ast.stmt], namespace: dict[str, Any]) -> None:
        self.source = source
        self.namespace = namespace
        self.assigned: dict[str, list[tuple[int, ast.stmt, ast.expr]]] = {}
        for statement in scope:
            for node in subtree_nodes(statement):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    continue
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(
                            (node.lineno, node, node.value)
                        )

    def _assignment(self, name: str, line: int) -> tuple[ast.stmt, ast.expr] | None:
        found = None
        for assigned_line, statement, value in self.assigned.get(name, ()):
            if assigned_line < line or (assigned_line == line and found is None):
                found = (statement, value)
        return found

    def statistics(
        self, node: ast.expr, statement: ast.stmt, data: ast.expr | None, depth: int = 0
    ) -> tuple[list[_Statistic], list[str]] | None:
        """The whole-array reductions and earlier names ``node`` is built from (numbers
        allowed besides), or None when it reads anything else (an axis, another array)."""
        if depth > 6:
            return None
        if isinstance(node, ast.Constant):
            return ([], []) if isinstance(node.value, int | float) else None
        if isinstance(node, ast.UnaryOp):
            return self.statistics(node.operand, statement, data, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            left = self.statistics(node.left, statement, data, depth + 1)
            right = self.statistics(node.right, statement, data, depth + 1)
            if left is None or right is None:
                return None
            return left[0] + right[0], left[1] + right[1]
        if isinstance(node, ast.Call):
            reduced = _reduced_data(node)
            if reduced is not None:
                if data is not None and not _same_text(self.source, reduced, data):
                    return None
                return [_Statistic(node, statement, self.source)], []
            if call_name(node) in _ELEMENTWISE and len(node.args) == 1 and not node.keywords:
                return self.statistics(node.args[0], statement, data, depth + 1)
            return None
        if isinstance(node, ast.Name):
            assigned = self._assignment(node.id, getattr(statement, "lineno", 0))
            if assigned is not None and assigned[0] is not statement:
                return self.statistics(assigned[1], assigned[0], data, depth + 1)
            if _single_number(self.namespace.get(node.id, None)):
                return [], [node.id]
            return None
        return None

    def scaling(self, node: ast.expr, statement: ast.stmt) -> _Scaling | None:
        """``(A - M) / S`` or ``A / S`` with whole-array statistics read from data."""
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Div):
            return None
        numerator = node.left
        data: ast.expr = numerator
        pieces: list[tuple[list[_Statistic], list[str]]] = []
        centred = False
        centring_apart = False
        if isinstance(numerator, ast.BinOp) and isinstance(numerator.op, ast.Sub):
            data = numerator.left
            centre = self.statistics(numerator.right, statement, None)
            if centre is None:
                return None
            pieces.append(centre)
            centred = any(call_name(c.call) in _MEANS for c in centre[0])
        if isinstance(data, ast.Constant | ast.BinOp):
            return None
        if not centred and isinstance(data, ast.Name):
            # ``a = a - tf.reduce_mean(a)`` on a line of its own, then ``return a / s``.
            centring = self._centring(data.id, statement)
            if centring is not None:
                pieces.append(centring)
                centred = centring_apart = True
        spread = self.statistics(node.right, statement, None)
        if spread is None:
            return None
        pieces.append(spread)
        calls = [c for found, _ in pieces for c in found]
        names = [n for _, found in pieces for n in found]
        if not calls and not names:
            return None  # plain numbers: the learner's own scale
        return _Scaling(node, data, calls, names, centred, centring_apart)

    def _centring(
        self, name: str, statement: ast.stmt
    ) -> tuple[list[_Statistic], list[str]] | None:
        """The whole-array means of ``name = <data> - <mean>``, the newest assignment of
        ``name`` before ``statement``; None for any other assignment."""
        assigned = self._assignment(name, getattr(statement, "lineno", 0))
        if assigned is None or assigned[0] is statement:
            return None
        centring, value = assigned
        if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Sub):
            return None
        centre = self.statistics(value.right, centring, None)
        if centre is None or not centre[0] or centre[1]:
            return None
        if not all(call_name(c.call) in _MEANS for c in centre[0]):
            return None
        return centre


def _single_number(value: Any) -> bool:
    if type(value) in (float, int) and type(value) is not bool:
        return type(value) is float
    shape = getattr(type(value), "shape", None)
    if shape is None:
        return False
    try:
        module = type(value).__module__ or ""
        if not module.startswith(("numpy", "tensorflow")):
            return False
        dtype = str(getattr(value, "dtype", ""))
        return tuple(value.shape) == () and "float" in dtype
    except Exception:
        return False


def _column_spreads(operand: Any) -> list[float] | None:
    """Each column's standard deviation of a float ``(N, F)`` value (NumPy copy)."""
    found = _column_statistics(operand)
    return found[1] if found is not None else None


def _column_statistics(operand: Any) -> tuple[list[float], list[float]] | None:
    """Each column's mean and standard deviation of a float ``(N, F)`` value (NumPy
    copy; every k-th row of a long one)."""
    numpy = sys.modules.get("numpy")
    values = numpy_values(operand)
    if numpy is None or values is None or values.ndim != 2:
        return None
    if values.dtype.kind != "f":
        return None
    if values.shape[0] > MAX_ROWS_READ:  # every k-th row: the spreads' sizes, not digits
        values = values[:: values.shape[0] // MAX_ROWS_READ + 1]
    with numpy.errstate(all="ignore"):
        means, spreads = values.mean(axis=0), values.std(axis=0)
    return [float(m) for m in means], [float(s) for s in spreads]


def off_centre(means: list[float], spreads: list[float]) -> list[int]:
    """The columns whose mean is at least ``CENTRE_SPREADS`` of their own spreads and
    ``CENTRE_MINIMUM`` from 0: after a centring meant for each feature, not centred."""
    return [
        i
        for i, (mean, spread) in enumerate(zip(means, spreads, strict=True))
        if spread == spread and abs(mean) >= max(CENTRE_SPREADS * spread, CENTRE_MINIMUM)
    ]


def uneven_spreads(spreads: list[float]) -> tuple[float, int, float, int] | None:
    """The narrowest positive column spread, its column, the widest, its column, when the
    widest is ``SPREAD_RATIO`` times the narrowest or more (NaN spreads left out)."""
    positive = [(s, i) for i, s in enumerate(spreads) if s > 0 and s == s]
    if len(positive) < 2:
        return None
    (low, low_at), (high, high_at) = min(positive), max(positive)
    if high < SPREAD_RATIO * low:
        return None
    return low, low_at, high, high_at


def _symptom(
    target: str, namespace: dict[str, Any], centred: bool = False
) -> tuple[str, str, bool] | None:
    """The result's shape and its columns' spreads, said, when they differ
    ``SPREAD_RATIO`` times or more in a float ``(N, F)`` value; after a centring
    (``centred``), its columns' means when some are far from 0 for their spreads."""
    result = value_at(ast.Name(target, ast.Load()), namespace, target)
    if result is None or len(result.shape or ()) != 2:
        return None
    examples, features = result.shape or (None, None)
    if features is None or examples is None or not 2 <= features <= MAX_FEATURES:
        return None
    if examples < 2:
        return None
    statistics = _column_statistics(result)
    if statistics is None:
        return None
    means, spreads = statistics
    uneven = uneven_spreads(spreads)
    if uneven is None:
        away = off_centre(means, spreads) if centred else []
        if not away:
            return None
        shown = ", ".join(f"{means[i]:.2g} (column {i}, spread {spreads[i]:.2g})" for i in away[:3])
        symptom = (
            f"its {features} columns (features) are each offset differently, and one mean "
            f"for the whole table leaves each column's own offset in place: after it, "
            f"`{target}`'s columns are not centred, with means {shown}, far from 0 for "
            "their spread. Nothing raises."
        )
        return show_shape((examples, features)), symptom, True
    low, low_at, high, high_at = uneven
    symptom = (
        f"its {features} columns (features) are on very different scales: after it, "
        f"`{target}`'s columns spread from {low:.2g} (column {low_at}) to {high:.2g} "
        f"(column {high_at}), {high / low:,.0f} times as much, so the small-scale "
        "features stay nearly constant next to the others and barely train. Nothing "
        "raises."
    )
    return show_shape((examples, features)), symptom, False


def _with_axis(statistic: _Statistic) -> str | None:
    """The statistic's statement with ``axis=0`` in each whole-array reduction of it."""
    statement = statistic.statement
    if statement.lineno != statement.end_lineno:
        return None
    text = ast.get_source_segment(statistic.source, statement)
    if text is None:
        return None
    edits: list[int] = []
    for node in subtree_nodes(statement):
        if isinstance(node, ast.Call) and _reduced_data(node) is not None:
            if node.end_col_offset is None or node.lineno != statement.lineno:
                return None
            edits.append(node.end_col_offset - 1)
    raw = text.encode("utf-8")
    base = statement.col_offset
    for closing in sorted(set(edits), reverse=True):
        at = closing - base
        opened = raw[:at].rstrip()
        insert = b"axis=0" if opened.endswith(b"(") else b", axis=0"
        raw = raw[:at] + insert + raw[at:]
    return raw.decode("utf-8")


def _history_statistic(name: str, namespace: dict[str, Any]) -> _Statistic | None:
    """The statement of an earlier cell (``In``, newest first) that assigned ``name`` a
    whole-array reduction (``mu = X_train.mean()``)."""
    latest = next(history_assignments(name, namespace, _HISTORY_CELLS, _MAX_CHARS), None)
    if latest is None:
        return None
    statement, source = latest
    for node in subtree_nodes(statement.value):
        if isinstance(node, ast.Call) and _reduced_data(node) is not None:
            return _Statistic(node, statement, source)
    return None


def _top_statements(tree: ast.Module) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    pending = list(reversed(tree.body))
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        found.append(statement)
        for name in ("body", "orelse", "finalbody"):
            pending.extend(reversed(getattr(statement, name, None) or []))
    return found


class WholeArrayScalingCheck:
    """The check, with the notebook's helper functions that scale their parameter by
    whole-array statistics (weakly: a function redefined or deleted is dropped)."""

    def __init__(self) -> None:
        self._helpers: dict[str, _Helper] = {}

    def notes(self, source: str, namespace: dict[str, Any]) -> list[Note]:
        if not source or len(source) > _MAX_CHARS:
            return []
        helpers = [name for name in self._helpers if name in source]
        if "/" not in source and not helpers:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        if "def " in source:
            self._remember_helpers(tree, source, namespace)
        statements = _top_statements(tree)
        reader = _Reader(source, statements, namespace)
        found: list[Note] = []
        for index, statement in enumerate(statements):
            if len(found) >= MAX_NOTES:
                break
            if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Div):
                text = self._augmented(reader, statements, index, source, namespace)
                if text is not None:
                    found.append(reports.note(text, SECTION))
                continue
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
            ):
                continue
            target = statement.targets[0].id
            if any(line > statement.lineno for line, _, _ in reader.assigned.get(target, ())):
                continue  # bound again later in the cell: its value now is another one
            text = self._statement_note(reader, statement, target, source, namespace)
            if text is not None:
                found.append(reports.note(text, SECTION))
        return found

    def _augmented(
        self,
        reader: _Reader,
        statements: list[ast.stmt],
        index: int,
        source: str,
        namespace: dict[str, Any],
    ) -> str | None:
        statement = statements[index]
        assert isinstance(statement, ast.AugAssign)
        target = statement.target
        if not isinstance(target, ast.Name):
            return None
        later = statements[index + 1 :]
        if any(
            isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Store)
            for part in later
            for n in subtree_nodes(part)
        ):
            return None  # bound again later: its value now is another one
        earlier = [
            part
            for part in statements[:index]
            if isinstance(part, ast.AugAssign)
            and isinstance(part.op, ast.Sub)
            and isinstance(part.target, ast.Name)
            and part.target.id == target.id
        ]
        return self._augmented_note(reader, statement, earlier, source, namespace)

    # ------------------------------------------------------------ helpers
    def _remember_helpers(self, tree: ast.Module, source: str, namespace: dict[str, Any]) -> None:
        for statement in tree.body:
            if not isinstance(statement, ast.FunctionDef) or not statement.args.args:
                continue
            parameter = statement.args.args[0].arg
            reader = _Reader(source, statement.body, namespace={})
            for node in subtree_nodes(statement):
                if not isinstance(node, ast.Return) or node.value is None:
                    continue
                scaling = reader.scaling(node.value, node)
                if scaling is None or scaling.earlier_names:
                    continue
                if ast.get_source_segment(source, scaling.data) != parameter:
                    continue
                function = namespace.get(statement.name)
                try:
                    reference = weakref.ref(function) if function is not None else None
                except TypeError:
                    reference = None
                if len(self._helpers) >= _MAX_HELPERS and statement.name not in self._helpers:
                    self._helpers.pop(next(iter(self._helpers)))
                self._helpers[statement.name] = _Helper(
                    reference, statement.name, parameter, scaling, node
                )
                break

    def _helper_call(self, value: ast.expr, namespace: dict[str, Any]) -> _Helper | None:
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return None
        helper = self._helpers.get(value.func.id)
        if helper is None or not value.args:
            return None
        current = namespace.get(helper.name)
        if helper.function is not None and helper.function() is not current:
            return None  # redefined since
        return helper

    # ------------------------------------------------------------- a statement
    def _statement_note(
        self,
        reader: _Reader,
        statement: ast.Assign,
        target: str,
        source: str,
        namespace: dict[str, Any],
    ) -> str | None:
        helper = self._helper_call(statement.value, namespace)
        scaling = None if helper is not None else reader.scaling(statement.value, statement)
        if helper is None and scaling is None:
            return None
        read = helper.scaling if helper is not None else scaling
        centred = read is not None and read.centred
        found = _symptom(target, namespace, centred)
        written = ast.get_source_segment(source, statement)
        if found is None or written is None or "\n" in written:
            return None
        shape, symptom, offset = found
        means_only = offset and read is not None and read.centring_apart
        if helper is not None:
            fixed = self._helper_fix(helper, means_only)
            head = (
                f"`{written}` (line {statement.lineno} of this cell) scales a {shape} "
                f"table with `{helper.name}`, which uses one statistic for all its columns "
                f"(`{_source_of(helper, means_only)}`), but "
            )
            fix = (
                f" In `{helper.name}`, compute each statistic per feature, over the "
                f"examples (axis 0): `{fixed}`, then run this cell again."
                if fixed
                else f" In `{helper.name}`, give each statistic `axis=0`."
            )
            return head + symptom + fix
        assert scaling is not None
        expression = ast.get_source_segment(source, scaling.node) or written
        data = ast.get_source_segment(source, scaling.data) or "the data"
        head = (
            f"`{expression}` (line {statement.lineno} of this cell) scales `{data}` with "
            f"one statistic for all the columns of a {shape} table (a mean, spread or "
            "range over every value at once), but "
        )
        before: list[str] = []  # statements of the statistics, in their order
        inline: list[str] = []
        for statistic in scaling.calls:
            if means_only and call_name(statistic.call) not in _MEANS:
                continue
            rewritten = _with_axis(statistic)
            if rewritten is None:
                return None
            chosen = inline if statistic.statement is statement else before
            if rewritten not in chosen:
                chosen.append(rewritten)
        earlier: list[str] = []
        for name in scaling.earlier_names:
            found = _history_statistic(name, namespace)
            rewritten = _with_axis(found) if found is not None else None
            if rewritten is None:
                earlier.append(name)
            elif rewritten not in before:
                before.append(rewritten)
        fixes = before + inline[:1]
        if earlier:
            names = ", ".join(f"`{n}`" for n in earlier)
            return (
                head
                + symptom
                + f" Compute {names} per feature over the training examples (`axis=0` in "
                f"each mean, std, min or max), then run `{written}` again."
            )
        code = "`, then `".join(fixes)
        again = "" if inline else f", then run `{written}` again"
        return (
            head
            + symptom
            + " Compute each statistic per feature, over the examples (axis 0): "
            + f"`{code}`{again}."
        )

    def _augmented_note(
        self,
        reader: _Reader,
        statement: ast.AugAssign,
        earlier: list[ast.AugAssign],
        source: str,
        namespace: dict[str, Any],
    ) -> str | None:
        """``X /= X.std()`` (after ``X -= X.mean()``): the statements rewritten."""
        target = statement.target
        if not isinstance(target, ast.Name):
            return None
        spread = reader.statistics(statement.value, statement, None)
        if spread is None or (not spread[0] and not spread[1]) or spread[1]:
            return None
        found = _symptom(target.id, namespace)
        written = ast.get_source_segment(source, statement)
        if found is None or written is None:
            return None
        shape, symptom, _ = found
        fixes: list[str] = []
        for part in [*earlier, statement]:
            statistics = reader.statistics(part.value, part, None)
            if statistics is None or statistics[1] or not statistics[0]:
                continue
            rewritten = _with_axis(statistics[0][0])
            if rewritten is None:
                return None
            fixes.append(rewritten)
        return (
            f"`{written}` (line {statement.lineno} of this cell) scales `{target.id}` with "
            f"one statistic for all the columns of a {shape} table (a mean, spread or "
            "range over every value at once), but "
            + symptom
            + " Compute each statistic per feature, over the examples (axis 0): `"
            + "`, then `".join(fixes)
            + "` (on the data as it was before this cell)."
        )

    def _helper_fix(self, helper: _Helper, means_only: bool = False) -> str | None:
        function = helper.function() if helper.function is not None else None
        source = _function_source(function)
        if source is None:
            return None
        tree = parsed_source(source)
        if tree is None or not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
            return None
        reader = _Reader(source, tree.body[0].body, namespace={})
        fixes: list[str] = []
        for node in ast.walk(tree.body[0]):
            if isinstance(node, ast.Return) and node.value is not None:
                scaling = reader.scaling(node.value, node)
                if scaling is None:
                    continue
                for statistic in scaling.calls:
                    if means_only and call_name(statistic.call) not in _MEANS:
                        continue
                    rewritten = _with_axis(statistic)
                    if rewritten is None:
                        return None
                    if rewritten not in fixes:
                        fixes.append(rewritten)
                break
        return "`, `".join(sorted(fixes, key=lambda t: t.startswith("return"))) or None


def _function_source(function: Any) -> str | None:
    """A notebook function's source, from the cell IPython keeps in ``linecache``."""
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    try:
        return textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return None


def _source_of(helper: _Helper, means_only: bool = False) -> str:
    function = helper.function() if helper.function is not None else None
    source = _function_source(function)
    if source is None:
        return helper.name
    if means_only:
        # The centring statement the symptom is about, not the scale after it.
        centring = next(
            (c.statement for c in helper.scaling.calls if call_name(c.call) in _MEANS), None
        )
        written = (
            ast.get_source_segment(helper.scaling.calls[0].source, centring) if centring else None
        )
        if written and "\n" not in written:
            return written.strip()
    for line in source.splitlines():
        if line.strip().startswith("return"):
            return line.strip()
    return helper.name
