"""Data scaled by statistics of every row, then split into training and test parts.

``mu, sd = X.mean(), X.std()``, ``Z = (X - mu) / sd``, then ``Z_train, Z_test = Z[tr],
Z[te]`` (or ``Z[:800]``, or ``train_test_split(Z, ...)``): the statistics were computed
with the test rows in, so the numbers the training inputs are placed by have seen the test
data, a leak that makes the test score better than on truly new data. Nothing raises. It is
``whole_data_statistics.py``'s case written in the other order: there the training split
exists when the statistics are taken; here the split is made afterwards, of the scaled data.

Read after a completed cell with a reduction (a regular-expression search otherwise), from
its top-level statements in order: ``s = R(A)`` (or ``s1, s2 = R1(A), R2(A)``), ``R`` a
mean, spread, variance, minimum or maximum over every value or over the first axis
(``whole_data_statistics.over_rows``; a per-example statistic, ``axis=1``, is no leak),
``A`` a name of neither a training nor a held-out word; then a statement binding ``B`` to
an expression that subtracts or divides by ``s`` and reads ``A`` (``B`` may be ``A``);
then statements binding a name with a training word and a name with a held-out word to
subscripts of ``B`` (``B[idx]``, ``B[:n]``), or one ``train_test_split`` call given ``B``
whose targets have both words. The values after the cell must agree: ``A`` and ``B`` hold
arrays or tensors with as many rows, the training part fewer (shapes only). The note names
the statistics' statement, the scaling and the split; the fix is the statistics' statement
on the training part of ``A`` (``A[idx]`` with the training subscript, or the training name
of a split of ``A`` made first with the same call), both parts then scaled with them.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import is_held_out_name, is_training_name
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import value_at
from jupyterlab_tfcoach.monitor.symptoms.whole_data_statistics import over_rows
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, source_segment
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
_REDUCTION = word_gate(r"\b(?:\w*mean|\w*std|var|min|max|reduce_\w+)\s*\(")
# Where a split is made: a subscript's text or a train_test_split call.
_SPLIT_WORDS = ("[", "train_test_split")


def _statistics(statement: ast.Assign) -> list[tuple[str, ast.Name]]:
    """``(name, A)`` for each ``name = R(A)`` of the statement (tuples paired)."""
    target, value = statement.targets[0], statement.value
    pairs: list[tuple[ast.expr, ast.expr]] = [(target, value)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        if len(target.elts) != len(value.elts):
            return []
        pairs = list(zip(target.elts, value.elts, strict=True))
    found: list[tuple[str, ast.Name]] = []
    for name, item in pairs:
        if not isinstance(name, ast.Name):
            continue
        for call in ast.walk(item):
            data = over_rows(call) if isinstance(call, ast.Call) else None
            if data is not None:
                found.append((name.id, data))
                break
    return found


def _scales_by(value: ast.expr, data: str, statistics: set[str]) -> bool:
    """Whether ``value`` reads ``data`` and subtracts or divides by one of ``statistics``."""
    reads = any(isinstance(n, ast.Name) and n.id == data for n in ast.walk(value))
    if not reads:
        return False
    for node in ast.walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub | ast.Div):
            if any(isinstance(n, ast.Name) and n.id in statistics for n in ast.walk(node.right)):
                return True
    return False


def _selection(item: ast.expr, scaled: str) -> tuple[ast.Name, ast.expr] | None:
    """``(B, index)`` for ``B[index]``, ``tf.gather(B, index)`` or ``np.take(B, index, 0)``."""
    if isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name):
        if item.value.id == scaled:
            return item.value, item.slice
    if isinstance(item, ast.Call) and call_name(item) in ("gather", "take"):
        if len(item.args) >= 2 and isinstance(item.args[0], ast.Name):
            if item.args[0].id == scaled:
                return item.args[0], item.args[1]
    return None


def _subscripts(statement: ast.Assign, scaled: str) -> list[tuple[str, ast.expr]]:
    """``(target, B[...])`` for each name the statement binds to a selection of rows of
    ``scaled`` (a subscript, a ``gather`` or a ``take``)."""
    target, value = statement.targets[0], statement.value
    pairs: list[tuple[ast.expr, ast.expr]] = [(target, value)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        if len(target.elts) != len(value.elts):
            return []
        pairs = list(zip(target.elts, value.elts, strict=True))
    return [
        (name.id, item)
        for name, item in pairs
        if isinstance(name, ast.Name) and _selection(item, scaled) is not None
    ]


def _split_call(statement: ast.Assign, scaled: str) -> tuple[str, str] | None:
    """``(training, held-out)`` targets of ``a, b, ... = train_test_split(B, ...)``."""
    value, target = statement.value, statement.targets[0]
    if not isinstance(value, ast.Call) or call_name(value) != "train_test_split":
        return None
    if not value.args or not isinstance(value.args[0], ast.Name) or value.args[0].id != scaled:
        return None
    if not isinstance(target, ast.Tuple) or len(target.elts) < 2:
        return None
    first, second = target.elts[0], target.elts[1]
    if not isinstance(first, ast.Name) or not isinstance(second, ast.Name):
        return None
    return first.id, second.id


def _rows(name: str, namespace: dict[str, Any]) -> int | None:
    held = value_at(ast.Name(id=name), namespace, name)
    if held is None or not held.shape or held.shape[0] is None:
        return None
    return int(held.shape[0])


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or _REDUCTION.search(source) is None:
        return []
    if not any(word in source for word in _SPLIT_WORDS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    statements = [s for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1]
    # data -> the statements computing statistics of it, each with the names it binds
    made: dict[str, list[tuple[ast.Assign, set[str]]]] = {}
    for index, statement in enumerate(statements):
        bound = {n.id for n in ast.walk(statement.targets[0]) if isinstance(n, ast.Name)}
        target = statement.targets[0]
        if isinstance(target, ast.Name):
            for data, computed in made.items():
                names = {name for _, found in computed for name in found}
                if not _scales_by(statement.value, data, names):
                    continue
                used = [
                    made_here
                    for made_here, found in computed
                    if any(
                        isinstance(n, ast.Name) and n.id in found for n in ast.walk(statement.value)
                    )
                ]
                later = statements[index + 1 :]
                # Names made after the statistics (an index the fix needs made first).
                bound_after = {
                    n.id
                    for s in statements[statements.index(used[0]) + 1 :]
                    for n in ast.walk(s.targets[0])
                    if isinstance(n, ast.Name)
                }
                note = _split(
                    source, used, statement, later, data, target.id, namespace, bound_after
                )
                if note is not None:
                    return [note]
        # A name bound again no longer holds the statistics (or the data) read so far.
        for data in list(made):
            if data in bound:
                del made[data]
                continue
            made[data] = [(m, found - bound) for m, found in made[data] if found - bound]
        for name, data in _statistics(statement):
            if not is_training_name(data.id) and not is_held_out_name(data.id):
                computed = made.setdefault(data.id, [])
                if computed and computed[-1][0] is statement:
                    computed[-1][1].add(name)
                else:
                    computed.append((statement, {name}))
    return []


def _split(
    source: str,
    made: list[ast.Assign],
    scaling: ast.Assign,
    later: list[ast.Assign],
    data: str,
    scaled: str,
    namespace: dict[str, Any],
    bound_after: set[str],
) -> Note | None:
    training: tuple[str, ast.expr | None, ast.stmt] | None = None
    held_out: tuple[str, ast.expr | None] | None = None
    for statement in later:
        bound = {n.id for n in ast.walk(statement.targets[0]) if isinstance(n, ast.Name)}
        called = _split_call(statement, scaled)
        if called is not None and is_training_name(called[0]) and is_held_out_name(called[1]):
            training, held_out = (called[0], None, statement), (called[1], None)
            break
        for name, subscript in _subscripts(statement, scaled):
            if training is None and is_training_name(name):
                training = (name, subscript, statement)
            elif held_out is None and is_held_out_name(name):
                held_out = (name, subscript)
        if training is not None and held_out is not None:
            break
        if scaled in bound or data in bound:
            return None
    if training is None or held_out is None:
        return None
    rows = _rows(data, namespace)
    scaled_rows = _rows(scaled, namespace)
    kept = _rows(training[0], namespace)
    if rows is None or scaled_rows != rows or kept is None or not 0 < kept < rows:
        return None
    return _note(source, made, scaling, data, scaled, training, held_out, rows, kept, bound_after)


def _replaced(source: str, statement: ast.Assign, data: str, new: str) -> str | None:
    """The statement's text with every use of ``data`` replaced by ``new``."""
    written = source_segment(source, statement)
    if written is None or "\n" in written:
        return None
    raw = written.encode("utf-8")
    uses = sorted(
        (n for n in ast.walk(statement.value) if isinstance(n, ast.Name) and n.id == data),
        key=lambda n: n.col_offset,
        reverse=True,
    )
    for use in uses:
        if use.lineno != statement.lineno or use.end_col_offset is None:
            return None
        begin = use.col_offset - statement.col_offset
        end = use.end_col_offset - statement.col_offset
        raw = raw[:begin] + new.encode("utf-8") + raw[end:]
    return raw.decode("utf-8")


def _note(
    source: str,
    made: list[ast.Assign],
    scaling: ast.Assign,
    data: str,
    scaled: str,
    training: tuple[str, ast.expr | None, ast.stmt],
    held_out: tuple[str, ast.expr | None],
    rows: int,
    kept: int,
    bound_after: set[str],
) -> Note | None:
    written_each = [source_segment(source, statement) for statement in made]
    if any(text is None or "\n" in text for text in written_each):
        return None
    written = "`, `".join(text for text in written_each if text is not None)
    lines = ", ".join(str(statement.lineno) for statement in made)
    train_name, train_subscript, split_statement = training
    held_name, held_subscript = held_out
    if train_subscript is not None and held_subscript is not None:
        selected = _selection(train_subscript, scaled)
        held_text = source_segment(source, held_subscript)
        train_text = source_segment(source, train_subscript)
        if selected is None or held_text is None or train_text is None:
            return None
        rows_of, index_node = selected
        # The same selection of the unscaled data: ``B[idx]`` -> ``A[idx]``.
        begin = rows_of.col_offset - train_subscript.col_offset
        end = begin + len(scaled)
        if rows_of.lineno != train_subscript.lineno:
            return None
        part = f"{train_text[:begin]}{data}{train_text[end:]}"
        split = (
            f"`{train_name}` (`{train_text}`, {kept:,} rows) and `{held_name}` "
            f"(`{held_text}`) on line {split_statement.lineno}"
        )
        made_later = sorted(
            {n.id for n in ast.walk(index_node) if isinstance(n, ast.Name) and n.id in bound_after}
        )
        first = "compute the statistics on the training rows only"
        if made_later:
            listed = ", ".join(f"`{name}`" for name in made_later)
            first = f"make {listed} first, then {first}"
    else:
        part = f"{data}_train"
        split = (
            f"`{train_name}` ({kept:,} rows) and `{held_name}` by the `train_test_split` of "
            f"line {split_statement.lineno}"
        )
        first = (
            f"split `{data}` first with the same `train_test_split` call (`{part}, "
            f"{data}_test, ... = train_test_split({data}, ...)`, the same `random_state` "
            "keeps the same rows), then compute the statistics on its training part"
        )
    fixes = [_replaced(source, statement, data, part) for statement in made]
    if any(fix is None for fix in fixes):
        return None
    fixed = "`, `".join(fix for fix in fixes if fix is not None)
    plural = "s" if len(made) > 1 else ""
    text = (
        f"`{written}` (line{plural} {lines}) compute{'' if plural else 's'} statistics "
        f"over all {rows:,} rows of `{data}`; `{scaled}`, scaled by them (line "
        f"{scaling.lineno}), is then split into "
        f"{split}. The test rows are part of the numbers every input is scaled by, a leak: "
        "the test score comes out better than it would on truly new data. Nothing raises. "
        f"Split before computing statistics: {first}: `{fixed}`, and scale both parts "
        "with them."
    )
    return reports.note(text, SECTION)
