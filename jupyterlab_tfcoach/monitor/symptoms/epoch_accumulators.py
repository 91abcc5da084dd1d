"""An epoch's mean computed from a running sum that does not sum that epoch.

Four ways a hand-written sum or average in a custom loop reports a wrong number, silently:

- overwritten: ``epoch_loss = 0.0`` before the batch loop, ``epoch_loss = loss`` in it
  (``=`` where ``+=`` was meant), then ``epoch_loss / steps``: the "mean" is the last
  batch's loss divided by the number of batches;
- never reset: ``running = 0.0`` before the epoch loop, ``running += loss`` in the batch
  loop, ``running / steps`` read in the epoch loop: each epoch's figure adds up every
  epoch so far and divides by one epoch's count, so it grows with the epochs even while
  the loss falls;
- reset inside the loop it should span: ``acc = [tf.zeros_like(v) for v in
  model.trainable_variables]`` (or ``total = 0.0``) as a statement of the loop's own body,
  then ``acc = [a + g for a, g in zip(acc, grads)]`` (or ``total += loss``) later in the
  same body, and ``acc`` read after the loop (``optimizer.apply_gradients(zip(acc,
  ...))``): every pass starts the sum again, so after the loop it holds the last pass
  alone (gradient accumulation that applies one micro-batch's gradient);
- a wrong count: ``total += float(loss)`` once per batch, ``loss`` a batch mean
  (``tf.reduce_mean``, ``keras.ops.mean`` or a Keras loss object with its default
  reduction), then ``total / len(x_train)``: the number of examples, not of batches.

Read from the cell's source (``ast``, ``loop_structure``), in one function scope (the
cell, or a function it defines): a name started at zero (``0``, ``0.0``,
``tf.constant(0.0)``) before a loop, then in the loop either bound, unconditionally (not
under an ``if``: a running best is bound so), to a value that does not read it, or added
to; and after the loop divided (``name / count``). The never-reset case also needs the
values after the cell: the epoch loop ran at least twice (``for epoch in range(...)``),
and the sum is not divided by a count that is itself summed over every epoch (``running
/ seen``, ``seen`` never reset either: an average over the whole run, meant as such).
The wrong count needs the values: the batch loop iterates a ``tf.data`` dataset of the
notebook with a known finite cardinality (its passes), and the divisor (a name holding
an int, ``len(x)`` or ``x.shape[0]`` of an array, tensor or dataset) holds another number;
a per-batch sum (``tf.reduce_sum``) divided by the number of examples is right and is not
told. The reset inside the loop is read from the source alone: the zero start (as above, or
``zeros``/``zeros_like`` calls, a list of them or a comprehension over them) and the
addition are both unconditional statements of the same loop body (directly or in a
``with`` block), the addition after the start, and the name is read after the loop, in
the loop's scope. The fix is the user's own statement: ``epoch_loss += loss``, the zero
start moved to the first line of the epoch loop's body or before the loop, or ``total /
len(train_ds)``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import (
    Loop,
    ParsedCell,
    call_name,
    is_zero,
    iterations_ran,
    library_class_names,
)

SECTION = "epoch-figures"
MAX_NOTES = 2


@dataclass
class _Start:
    """``epoch_loss = 0.0``: a name started at zero."""

    name: str
    statement: ast.Assign


def _zero_starts(cell: ParsedCell, before: Loop) -> dict[str, _Start]:
    """Names started at zero before ``before``, outside it, in the same function scope
    (the last such statement for each name)."""
    scope = cell.enclosing_function(before)
    found: dict[str, _Start] = {}
    for node in cell.walk(scope if scope is not None else cell.tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.lineno < before.lineno
            and is_zero(node.value)
            and cell.enclosing_function(node) is scope
        ):
            name = node.targets[0].id
            previous = found.get(name)
            if previous is None or previous.statement.lineno < node.lineno:
                found[name] = _Start(name, node)
    return found


def _reads(cell: ParsedCell, node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in cell.walk(node)
    )


def _bindings(cell: ParsedCell, root: ast.AST, name: str) -> list[ast.Assign | ast.AugAssign]:
    found: list[ast.Assign | ast.AugAssign] = []
    for node in cell.walk(root):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name:
                found.append(node)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            found.append(node)
    return found


def _adds(cell: ParsedCell, binding: ast.Assign | ast.AugAssign, name: str) -> bool:
    """``s += x`` or ``s = s + x``."""
    if isinstance(binding, ast.AugAssign):
        return isinstance(binding.op, ast.Add)
    return _reads(cell, binding.value, name)


def _under_condition(cell: ParsedCell, node: ast.AST, loop: Loop) -> bool:
    current = cell.parents.get(id(node))
    while current is not None and current is not loop:
        if isinstance(current, ast.If | ast.Try | ast.IfExp | ast.While | ast.For):
            return True
        current = cell.parents.get(id(current))
    return False


def _divisions_after(cell: ParsedCell, within: ast.AST, loop: Loop, name: str) -> list[ast.BinOp]:
    """``name / <count>`` in ``within``, after ``loop`` ends."""
    end = getattr(loop, "end_lineno", None) or loop.lineno
    return [
        node
        for node in cell.walk(within)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div)
        and isinstance(node.left, ast.Name)
        and node.left.id == name
        and node.lineno > end
        and not cell.inside(node, loop)
    ]


def _scope_root(cell: ParsedCell, loop: Loop) -> ast.AST:
    scope = cell.enclosing_function(loop)
    return scope if scope is not None else cell.tree


def _overwritten(cell: ParsedCell) -> list[Note]:
    notes: list[Note] = []
    for loop in cell.loops:
        starts = _zero_starts(cell, loop)
        for name, start in starts.items():
            bindings = [b for b in _bindings(cell, loop, name) if cell.inside(b, loop)]
            if len(bindings) != 1 or not isinstance(bindings[0], ast.Assign):
                continue
            binding = bindings[0]
            if _adds(cell, binding, name) or _under_condition(cell, binding, loop):
                continue
            if is_zero(binding.value):
                continue  # a reset: the sum is made elsewhere
            if cell.enclosing_function(binding) is not cell.enclosing_function(loop):
                continue
            if len(binding.targets) != 1:
                continue
            divisions = _divisions_after(cell, _scope_root(cell, loop), loop, name)
            if not divisions:
                continue
            notes.append(
                reports.note(_overwritten_text(cell, loop, start, binding, divisions[0]), SECTION)
            )
            break
    return notes


def _overwritten_text(
    cell: ParsedCell, loop: Loop, start: _Start, binding: ast.Assign, division: ast.BinOp
) -> str:
    name = start.name
    value = cell.text(binding.value)
    header = cell.header(loop)
    return (
        f"A sum that is overwritten, not added to: `{cell.text(start.statement)}` "
        f"(line {start.statement.lineno}) starts a sum, but `{cell.text(binding)}` "
        f"(line {binding.lineno}, in `{header}`) replaces it at every pass. After the "
        f"loop `{name}` holds only the value of the last pass, so "
        f"`{cell.text(division)}` (line {division.lineno}) is not the mean it stands "
        f"for, and no error says so. Add to the sum instead: `{name} += {value}`."
    )


def _never_reset(cell: ParsedCell, namespace: Mapping[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for epochs in cell.loops:
        inner = cell.inner_loops(epochs)
        if not inner:
            continue
        starts = _zero_starts(cell, epochs)
        for name, start in starts.items():
            bindings = _bindings(cell, epochs, name)
            added = [
                b
                for b in bindings
                if _adds(cell, b, name) and any(cell.inside(b, i) for i in inner)
            ]
            if not added or len(added) != len(bindings):
                continue  # not summed in a batch loop, or bound again (a reset) in the epoch
            divisions = _divisions_after(cell, epochs, _last_inner(inner, added[0], cell), name)
            divisions = [d for d in divisions if not _cumulative_count(cell, epochs, starts, d)]
            if not divisions:
                continue
            ran = iterations_ran(cell, epochs, namespace)
            if ran is None or ran < 2:
                continue
            notes.append(
                reports.note(_never_reset_text(cell, epochs, start, divisions[0], ran), SECTION)
            )
            break
    return notes


def _last_inner(inner: list[Loop], binding: ast.AST, cell: ParsedCell) -> Loop:
    """The outermost inner loop that holds the addition (the batch loop)."""
    holding = [loop for loop in inner if cell.inside(binding, loop)]
    return min(holding, key=lambda loop: loop.lineno)


def _cumulative_count(
    cell: ParsedCell, epochs: Loop, starts: dict[str, _Start], division: ast.BinOp
) -> bool:
    """``running / seen`` with ``seen`` also started before the epoch loop and only
    added to inside it: an average over the whole run."""
    count = division.right
    if not isinstance(count, ast.Name) or count.id not in starts:
        return False
    bindings = _bindings(cell, epochs, count.id)
    return bool(bindings) and all(_adds(cell, b, count.id) for b in bindings)


def _never_reset_text(
    cell: ParsedCell, epochs: Loop, start: _Start, division: ast.BinOp, ran: int
) -> str:
    header = cell.header(epochs)
    statement = cell.text(start.statement)
    return (
        f"A running sum never reset between epochs: `{statement}` (line "
        f"{start.statement.lineno}) runs once, before `{header}`, so `{start.name}` keeps "
        f"adding up every epoch, and `{cell.text(division)}` (line {division.lineno}) "
        f"divides the sum of all epochs so far by one epoch's count: over these {ran} "
        f"epochs each figure is too large, more so each epoch, and no error says so. "
        f"Start the sum afresh in each epoch: put `{statement}` as the first line of the "
        f"body of `{header}`."
    )


# ---------------------------------------------------------------- a wrong count
_MEAN_CALLS = frozenset({"reduce_mean", "mean"})
_READS = frozenset({"float", "numpy", "item"})


def _added_value(cell: ParsedCell, binding: ast.AST, name: str) -> str | None:
    """``loss`` for ``s += loss``, ``s += float(loss)``, ``s += loss.numpy()``."""
    value = binding.value if isinstance(binding, ast.AugAssign) else None
    if value is None:
        return None
    if isinstance(value, ast.Call) and not value.keywords:
        if isinstance(value.func, ast.Name) and value.func.id in _READS and len(value.args) == 1:
            value = value.args[0]
        elif isinstance(value.func, ast.Attribute) and value.func.attr in _READS and not value.args:
            value = value.func.value
    return value.id if isinstance(value, ast.Name) and value.id != name else None


def _is_batch_mean(cell: ParsedCell, loop: Loop, name: str, namespace: Mapping[str, Any]) -> bool:
    """``name`` is bound in ``loop`` only to a mean over the batch: ``tf.reduce_mean(...)``,
    ``keras.ops.mean(...)``, or a Keras loss object with Keras's default reduction."""
    bindings = _bindings(cell, loop, name)
    if not bindings:
        return False
    for binding in bindings:
        value = binding.value
        if not isinstance(binding, ast.Assign) or not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _MEAN_CALLS:
            continue
        loss = namespace.get(func.id) if isinstance(func, ast.Name) else None
        if "Loss" in library_class_names(loss):
            attributes = instance_dict(loss)
            if attributes is not None and attributes.get("reduction") == "sum_over_batch_size":
                continue
        return False
    return True


def _passes(loop: Loop, namespace: Mapping[str, Any]) -> tuple[int, str] | None:
    """How many passes ``for ... in <dataset>:`` makes (its cardinality, when finite
    and known) and the expression that counts them (``len(train_ds)``)."""
    if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Name):
        return None
    dataset = namespace.get(loop.iter.id)
    if "DatasetV2" not in library_class_names(dataset):
        return None
    count = _int_of(library_attribute(dataset, "cardinality"))
    if count is None or count <= 0:
        return None  # infinite (-1) or unknown (-2)
    return count, f"len({loop.iter.id})"


def _int_of(method: Any) -> int | None:
    if method is None:
        return None
    try:
        value = method().numpy()
        return int(value) if getattr(value, "shape", None) == () else None
    except Exception:
        return None


def _count_value(node: ast.AST, namespace: Mapping[str, Any]) -> int | None:
    """The value of a count as written: a name holding an int, ``len(x)`` or
    ``x.shape[0]`` of an array, tensor or dataset of the notebook."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return int(value) if type(value) is int else None
    target: ast.AST | None = None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
    ):
        target = node.args[0]
    elif (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == 0
    ):
        target = node.value.value
    if not isinstance(target, ast.Name):
        return None
    value = namespace.get(target.id)
    if "DatasetV2" in library_class_names(value):
        return _int_of(library_attribute(value, "cardinality"))
    described = describe(target.id, value) if target.id in namespace else None
    shape = described.shape if described is not None else None
    first = shape[0] if shape else None
    return first if type(first) is int else None


def _wrong_count(cell: ParsedCell, namespace: Mapping[str, Any]) -> list[Note]:
    """``total += loss`` once per batch (``loss`` a batch mean), ``total / len(x_train)``
    after the batch loop: a count that is not the number of values added."""
    notes: list[Note] = []
    for loop in cell.loops:
        passes = _passes(loop, namespace)
        if passes is None:
            continue
        for name in _zero_starts(cell, loop):
            bindings = [b for b in _bindings(cell, loop, name) if cell.inside(b, loop)]
            if len(bindings) != 1 or _under_condition(cell, bindings[0], loop):
                continue
            added = _added_value(cell, bindings[0], name)
            if added is None or not _is_batch_mean(cell, loop, added, namespace):
                continue
            for division in _divisions_after(cell, _scope_root(cell, loop), loop, name):
                count = _count_value(division.right, namespace)
                if count is None or count == passes[0]:
                    continue
                notes.append(
                    reports.note(
                        _wrong_count_text(cell, loop, bindings[0], added, division, count, passes),
                        SECTION,
                    )
                )
                break
    return notes


def _wrong_count_text(
    cell: ParsedCell,
    loop: Loop,
    binding: ast.AST,
    added: str,
    division: ast.BinOp,
    count: int,
    passes: tuple[int, str],
) -> str:
    header = cell.header(loop)
    fixed = f"{cell.text(division.left)} / {passes[1]}"
    ratio = count / passes[0]
    off = f"{ratio:.3g} times too small" if ratio > 1 else f"{1 / ratio:.3g} times too large"
    return (
        f"A mean divided by the wrong count: `{cell.text(binding)}` (line {binding.lineno}) "
        f"adds one value per pass of `{header}`, each the mean loss of a batch "
        f"(`{added}`), and the loop makes {passes[0]} passes, but "
        f"`{cell.text(division)}` (line {division.lineno}) divides the sum by "
        f"`{cell.text(division.right)}`, which is {count}: the figure is {off}, and no "
        f"error says so. Divide by the number of batches: `{fixed}`."
    )


# ------------------------------------------------------- reset inside the summing loop
_ZERO_CALLS = frozenset({"zeros", "zeros_like"})


def _zero_start(node: ast.AST) -> bool:
    """``0.0``, ``tf.zeros_like(v)``, ``np.zeros(3)``, and a list of them or a
    comprehension making them (``[tf.zeros_like(v) for v in model.trainable_variables]``)."""
    if is_zero(node):
        return True
    if isinstance(node, ast.Call):
        return (call_name(node) or "") in _ZERO_CALLS
    if isinstance(node, ast.ListComp):
        return _zero_start(node.elt)
    if isinstance(node, ast.List | ast.Tuple):
        return bool(node.elts) and all(_zero_start(e) for e in node.elts)
    return False


def _body_statements(loop: Loop) -> list[ast.stmt]:
    """The loop body's statements, those of its ``with`` blocks included: the ones that
    run at every pass."""
    found: list[ast.stmt] = []
    pending = list(reversed(loop.body))
    while pending:
        statement = pending.pop()
        found.append(statement)
        if isinstance(statement, ast.With | ast.AsyncWith):
            pending.extend(reversed(statement.body))
    return found


def _read_after(cell: ParsedCell, loop: Loop, name: str) -> ast.AST | None:
    """The first statement after ``loop``, in its scope, that reads ``name``."""
    end = getattr(loop, "end_lineno", None) or loop.lineno
    root = _scope_root(cell, loop)
    reads = [
        node
        for node in cell.walk(root)
        if isinstance(node, ast.Name)
        and node.id == name
        and isinstance(node.ctx, ast.Load)
        and node.lineno > end
        and not cell.inside(node, loop)
        and cell.enclosing_function(node) is cell.enclosing_function(loop)
    ]
    if not reads:
        return None
    first = min(reads, key=lambda node: (node.lineno, node.col_offset))
    current: ast.AST | None = first
    while current is not None and not isinstance(current, ast.stmt):
        current = cell.parents.get(id(current))
    return current


def _reset_inside(cell: ParsedCell) -> list[Note]:
    found: list[Note] = []
    for loop in cell.loops:
        statements = _body_statements(loop)
        for index, start in enumerate(statements):
            if not (
                isinstance(start, ast.Assign)
                and len(start.targets) == 1
                and isinstance(start.targets[0], ast.Name)
                and _zero_start(start.value)
            ):
                continue
            name = start.targets[0].id
            later = [
                b
                for b in statements[index + 1 :]
                if isinstance(b, ast.Assign | ast.AugAssign)
                and (
                    (isinstance(b, ast.AugAssign) and isinstance(b.target, ast.Name))
                    or (isinstance(b, ast.Assign) and len(b.targets) == 1)
                )
                and name in {t.id for t in _targets(b)}
            ]
            if not later or not _adds(cell, later[0], name):
                continue
            if isinstance(later[0], ast.AugAssign) and not isinstance(later[0].op, ast.Add):
                continue
            used = _read_after(cell, loop, name)
            if used is None:
                continue
            found.append(
                reports.note(_reset_inside_text(cell, loop, start, later[0], used), SECTION)
            )
            break
        if found:
            break
    return found


def _targets(binding: ast.Assign | ast.AugAssign) -> list[ast.Name]:
    if isinstance(binding, ast.AugAssign):
        return [binding.target] if isinstance(binding.target, ast.Name) else []
    return [t for t in binding.targets if isinstance(t, ast.Name)]


def _reset_inside_text(
    cell: ParsedCell, loop: Loop, start: ast.Assign, added: ast.AST, used: ast.AST
) -> str:
    header = cell.header(loop)
    statement = cell.text(start)
    name = _targets(start)[0].id
    return (
        f"A sum started again at every pass: `{statement}` (line {start.lineno}) is in the "
        f"body of `{header}` (line {loop.lineno}), so each pass sets `{name}` back to zero "
        f"before `{cell.text(added)}` (line {added.lineno}) adds to it. After the loop "
        f"`{name}` holds only the last pass's share, and `{cell.text(used)}` (line "
        f"{used.lineno}) uses that as if it were the total; nothing raises. Start the sum "
        f"once, before the loop: move `{statement}` to the line before `{header}`."
    )


def notes(cell: ParsedCell, namespace: Mapping[str, Any]) -> list[Note]:
    found = (
        _overwritten(cell)
        + _reset_inside(cell)
        + _never_reset(cell, namespace)
        + _wrong_count(cell, namespace)
    )
    return found[:MAX_NOTES]
