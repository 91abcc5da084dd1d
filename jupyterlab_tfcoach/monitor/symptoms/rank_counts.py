"""A rank counted the wrong way round for a distance (or for a score).

The rank of the right answer among candidates is 1 plus how many candidates BEAT it. For
a distance, an error or a loss a smaller value is better, so the ones that beat it are
the smaller ones: ``np.sum(dists < true_dist) + 1``. Counting ``dists > true_dist``
counts the worse candidates instead: the ranking is upside down, a perfect model gets the
worst rank and every metric made from the ranks (mean rank, MRR, hits@k) is wrong.
Nothing raises. The same slip the other way: ``np.sum(scores < true_score)`` for a
score, a similarity or a probability, where larger is better.

Read from the cell's source (a cell without ``rank`` and a comparison costs two
substring tests): a count (``np.sum``, ``np.count_nonzero``, ``tf.reduce_sum``,
``.sum()``, through casts) of a comparison ``A > B`` or ``A < B`` in a statement whose
target, or whose ``def`` when it returns it, is named a rank. One side is the true
answer's value (named ``true``/``target``/``gold``/``correct``/``pos``..., or taken from
the other side by indexing in the same scope, ``true_d = d[cands == t][0]``); the
other holds the candidates. Whether smaller is better is told by the candidates' or the
true value's name (``dist``, ``error``, ``loss``; ``score``, ``sim``, ``prob``:
``intent_words.quantity_polarity``), else by where the candidates came from in that
scope: a call whose name says so (``euclidean_distance(...)``), a ``norm`` call, or the
learner's own function (from the namespace) whose ``return`` is a norm or a distance
call, or its negation (a score). Told when the count keeps the worse side; the fix is
the statement with the comparison turned (``<`` for ``>``, ``<=`` for ``>=``).
"""

from __future__ import annotations

import ast
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    enclosing_functions,
    identifier_words,
    quantity_polarity,
    segment,
    target_names,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_definition,
    line_with_replacement,
    parsed_source,
)

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_CELL_CHARS = 30_000
_MAX_FUNCTION_CHARS = 50_000
_COUNTS = frozenset({"sum", "nansum", "count_nonzero", "reduce_sum"})
_CASTS = frozenset({"cast", "astype", "int", "float", "asarray", "array"})
_RANK_WORDS = frozenset({"rank", "ranks", "ranking"})
_TRUE_WORDS = frozenset(
    {"true", "target", "gold", "correct", "pos", "positive", "answer", "label", "actual", "gt"}
)
# Calls whose result is a distance (smaller is better) whatever the learner names it.
_DISTANCE_CALLS = frozenset(
    {"norm", "cdist", "pdist", "euclidean", "pairwise_distances", "euclidean_distances"}
)
_TURNED: dict[type[ast.cmpop], str] = {ast.Gt: "<", ast.GtE: "<=", ast.Lt: ">", ast.LtE: ">="}
_SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)


def _counted(node: ast.Call) -> ast.Compare | None:
    operand: ast.AST | None = None
    if node.args:
        operand = node.args[0]
    elif isinstance(node.func, ast.Attribute):
        operand = node.func.value  # (d > true_d).sum()
    for _ in range(4):
        if isinstance(operand, ast.Compare):
            return operand if len(operand.ops) == 1 else None
        if isinstance(operand, ast.Call) and call_name(operand) in _CASTS:
            if operand.args and call_name(operand) != "astype":
                operand = operand.args[0]
            elif isinstance(operand.func, ast.Attribute):
                operand = operand.func.value
            else:
                return None
        else:
            return None
    return None


def _ranks(statement: ast.stmt, function: ast.AST | None) -> bool:
    """Whether the statement's target, or the ``def`` it returns from, is named a rank."""
    words = [w for name in target_names(statement) for w in identifier_words(name)]
    if isinstance(statement, ast.Return) and isinstance(
        function, (ast.FunctionDef, ast.AsyncFunctionDef)
    ):
        words += identifier_words(function.name)
    return any(word in _RANK_WORDS for word in words)


def _assigned(scope: ast.AST, name: str, before: int) -> list[ast.expr]:
    """What the scope's statements before line ``before`` assign to ``name`` (a tuple
    assignment ``d, c = d[keep], c[keep]`` gives its matching element)."""
    found: list[ast.expr] = []
    body = scope.body if isinstance(scope, (ast.Module, ast.FunctionDef)) else []
    for statement in body:
        if statement.lineno >= before or not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name) and target.id == name:
                found.append(statement.value)
            elif isinstance(target, ast.Tuple) and isinstance(statement.value, ast.Tuple):
                for element, value in zip(target.elts, statement.value.elts, strict=False):
                    if isinstance(element, ast.Name) and element.id == name:
                        found.append(value)
    return found


def _base_name(node: ast.expr) -> str | None:
    """``d`` for ``d[mask][0]``, ``d.numpy()``, ``float(d[i])``."""
    for _ in range(6):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and call_name(node) in (*_CASTS, "numpy", "item"):
            if node.args and call_name(node) not in ("numpy", "item", "astype"):
                node = node.args[0]
            elif isinstance(node.func, ast.Attribute):
                node = node.func.value
            else:
                return None
        else:
            return None
    return None


def _returned_polarity(function: types.FunctionType) -> str | None:
    """ "cost" when the learner's function returns a norm or distance call, "score" when
    it returns one negated; None otherwise (read from its cell's source)."""
    found = function_definition(function.__code__, _MAX_FUNCTION_CHARS)
    if found is None:
        return None
    polarities: set[str] = set()
    for node in ast.walk(found[1]):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value, negated = node.value, False
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            value, negated = value.operand, True
        if isinstance(value, ast.Call) and _call_polarity(value) == "cost":
            polarities.add("score" if negated else "cost")
        else:
            return None
    return polarities.pop() if len(polarities) == 1 else None


def _call_polarity(call: ast.Call) -> str | None:
    name = call_name(call) or ""
    if name in _DISTANCE_CALLS:
        return "cost"
    return quantity_polarity(identifier_words(name))


def _origin_polarity(value: ast.expr, namespace: dict[str, Any]) -> tuple[str | None, str | None]:
    """(polarity, the call that tells) for an assigned value: ``f(...)`` or
    ``f(...).numpy()``."""
    for _ in range(4):
        if isinstance(value, ast.Call) and call_name(value) in ("numpy", "astype", "asarray"):
            if call_name(value) == "asarray" and value.args:
                value = value.args[0]
            elif isinstance(value.func, ast.Attribute):
                value = value.func.value
            else:
                break
        elif isinstance(value, ast.Subscript):
            value = value.value
        else:
            break
    if not isinstance(value, ast.Call):
        return None, None
    name = call_name(value)
    polarity = _call_polarity(value)
    if polarity is not None or not isinstance(value.func, ast.Name):
        return polarity, name
    held = namespace.get(value.func.id)
    if type(held) is types.FunctionType:
        return _returned_polarity(held), name
    return None, None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "rank" not in source.lower():
        return []
    if "<" not in source and ">" not in source:
        return []
    if "sum" not in source and "count_nonzero" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    owner = enclosing_functions(tree)
    lines = cell_lines(source)
    found: list[Note] = []
    for statement in ast.walk(tree):
        if len(found) >= MAX_NOTES:
            break
        if not isinstance(statement, _SIMPLE_STATEMENTS) or statement.value is None:
            continue
        function = owner.get(id(statement))
        if not _ranks(statement, function):
            continue
        for call in ast.walk(statement.value):
            if not (isinstance(call, ast.Call) and call_name(call) in _COUNTS):
                continue
            compare = _counted(call)
            if compare is None or type(compare.ops[0]) not in _TURNED:
                continue
            note = _note(compare, statement, function, tree, lines, namespace)
            if note is not None:
                found.append(note)
                break
    return found


def _note(
    compare: ast.Compare,
    statement: ast.stmt,
    function: ast.AST | None,
    tree: ast.Module,
    lines: list[str],
    namespace: dict[str, Any],
) -> Note | None:
    left, right = compare.left, compare.comparators[0]
    left_name, right_name = _base_name(left), _base_name(right)
    if left_name is None or right_name is None or left_name == right_name:
        return None
    scope: ast.AST = function if function is not None else tree
    line = statement.lineno

    def is_true_side(name: str, other: str) -> bool:
        if any(w in _TRUE_WORDS for w in identifier_words(name)):
            return True
        return any(_base_name(value) == other for value in _assigned(scope, name, line))

    left_true, right_true = is_true_side(left_name, right_name), is_true_side(right_name, left_name)
    if left_true == right_true:
        return None
    candidates, true_name = (right_name, left_name) if left_true else (left_name, right_name)
    polarity = quantity_polarity(identifier_words(candidates)) or quantity_polarity(
        identifier_words(true_name)
    )
    told_by = f"`{candidates}`" if polarity else ""
    if polarity is None:
        for value in _assigned(scope, candidates, line):
            polarity, call = _origin_polarity(value, namespace)
            if polarity is not None:
                told_by = f"`{call}`"
                break
    if polarity is None:
        return None
    op = type(compare.ops[0])
    # Which side the count keeps: candidates above the true value, or below it.
    counts_larger = (op in (ast.Gt, ast.GtE)) != left_true
    better = "smaller" if polarity == "cost" else "larger"
    if counts_larger == (polarity == "score"):
        return None  # the count keeps the better candidates: right
    written = segment(lines, statement)
    left_text, right_text = segment(lines, left), segment(lines, right)
    compare_text = segment(lines, compare)
    if None in (written, left_text, right_text, compare_text):
        return None
    fixed_compare = f"{left_text} {_TURNED[op]} {right_text}"
    fixed = line_with_replacement(lines, statement, compare, fixed_compare)
    if fixed is None:
        return None
    kept = "larger" if counts_larger else "smaller"
    where = f"line {line} of this cell" + (
        f", in `{function.name}`" if isinstance(function, ast.FunctionDef) else ""
    )
    quantity = "a distance" if polarity == "cost" else "a score"
    return reports.note(
        f"`{written}` ({where}) ranks the true answer by counting the candidates with a "
        f"{kept} value than it (`{compare_text}`), but `{candidates}` is {quantity} "
        f"(told by {told_by}): a {better} value is better, so the candidates that beat it "
        f"are the {better} ones. As written the ranking is upside down: the best answer "
        "gets the worst rank, and the mean rank, MRR and hits@k made from these ranks "
        f"are wrong, without any error. Count the {better} ones: `{fixed}`.",
        SECTION,
    )
