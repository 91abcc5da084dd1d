"""A hand-fitted model's predictor written again for new rows without one of its terms.

A model fitted by hand adds a term that holds no parameter to its linear predictor: a
log-exposure offset in a Poisson GLM (``eta = X @ w + b + log_e``), a baseline, a known
effect. The fitted parameters mean something only with that term: written again for the
test rows as ``tf.exp(X_te @ w + b)``, the prediction is a rate, not an expected count, and
every calibration or error read from it is off. Nothing raises.

Read from the source after a completed cell holding ``@``, ``matmul``, ``matvec``, ``dot`` (a
regular-expression search otherwise): a sum at the cell's top level whose terms use
variables (``tf.Variable``/Keras variables held by global names), and a function of the
learner's (plain or ``tf.function``; found in the namespace by the global names its code
reads, its source as IPython keeps it, read once per definition) that applies gradients to
those variables and, in a sum with the same variables, adds a term that uses none of them
and is not in the cell's sum (the offset). The note names both sums and the term left out;
the fix adds the new rows' own term: the offset's expression (the global's assignment in
the cell that defined the function, when it is a name) with its training data's names
replaced the way the cell's sum replaced them (``X_tr`` -> ``X_te`` turns ``e_tr`` into
``e_te``), given only when those names exist with as many rows as the cell's data.
"""

from __future__ import annotations

import ast
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import first_axis
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, function_definition, source_segment

SECTION = "creating-slicing-reducing"
WANTED = re.compile(r"@|\bmat(?:mul|vec)\b|tensordot|einsum|\bdot\s*\(")
MAX_FUNCTIONS = 300
MAX_FUNCTION_CHARS = 200_000
_UPDATES = frozenset({"apply_gradients", "minimize", "assign_sub"})
_READ: dict[tuple[str, int, str], Any] = {}
MAX_READ = 256


def _terms(node: ast.AST) -> list[ast.AST]:
    """The terms of a ``+`` chain: ``[a, b, c]`` for ``a + b + c``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_variable(value: Any) -> bool:
    name = type(value).__name__
    module = getattr(type(value), "__module__", "") or ""
    return "Variable" in name and module.startswith(("tensorflow", "keras"))


def _sums(root: ast.AST, variables: set[str]) -> list[tuple[ast.BinOp, list[ast.AST]]]:
    """The outermost ``+`` chains under ``root`` with a term using one of ``variables``."""
    found: list[tuple[ast.BinOp, list[ast.AST]]] = []
    inner: set[int] = set()
    for node in ast.walk(root):
        if id(node) in inner:
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            terms = _terms(node)
            for child in ast.walk(node):
                if child is not node:
                    inner.add(id(child))
            if any(_names(t) & variables for t in terms):
                found.append((node, terms))
    return found


def _python_function(value: Any) -> types.FunctionType | None:
    if type(value) is types.FunctionType:
        return value
    attributes = instance_dict(value) if "Function" in type(value).__name__ else None
    inner = attributes.get("_python_function") if attributes is not None else None
    return inner if type(inner) is types.FunctionType else None


def _training_function(function: types.FunctionType) -> tuple[str, ast.FunctionDef] | None:
    """The source and definition of a function that applies gradients (read once per
    definition); None for any other."""
    code = function.__code__
    key = (code.co_filename, code.co_firstlineno, code.co_name)
    if key in _READ:
        return _READ[key]
    result = None
    found = function_definition(code, MAX_FUNCTION_CHARS)
    if found is not None and isinstance(found[1], ast.FunctionDef):
        source, definition = found
        trains = any(
            isinstance(n, ast.Call) and call_name(n) in _UPDATES for n in ast.walk(definition)
        )
        if trains:
            result = (source, definition)
    if len(_READ) >= MAX_READ:
        _READ.clear()
    _READ[key] = result
    return result


def dropped_offset_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    for name, assignments in code.assigned.items():
        line, value = assignments[-1]
        used = _names(value)
        variables = {n for n in used if _is_variable(namespace.get(n))}
        if not variables:
            continue
        for cell_sum, cell_terms in _sums(value, variables):
            note = _compare(code, name, line, cell_sum, cell_terms, variables, namespace)
            if note is not None:
                return [note]
    return []


def _compare(
    code: CellCode,
    name: str,
    line: int,
    cell_sum: ast.BinOp,
    cell_terms: list[ast.AST],
    variables: set[str],
    namespace: dict[str, Any],
) -> Note | None:
    for function_name, value in list(namespace.items())[:MAX_FUNCTIONS]:
        function = _python_function(value)
        if function is None or not variables <= set(function.__code__.co_names):
            continue
        read = _training_function(function)
        if read is None:
            continue
        source, definition = read
        for train_sum, train_terms in _sums(definition, variables):
            with_variables = [t for t in train_terms if _names(t) & variables]
            offsets = [t for t in train_terms if not _names(t) & variables]
            cell_with = [t for t in cell_terms if _names(t) & variables]
            if not offsets or len(with_variables) != len(cell_with):
                continue
            if [_names(t) & variables for t in with_variables] != [
                _names(t) & variables for t in cell_with
            ]:
                continue
            cell_texts = {code.segment(t) for t in cell_terms}
            missing = [t for t in offsets if source_segment(source, t) not in cell_texts]
            if len(missing) != 1 or len(cell_terms) != len(with_variables):
                continue
            return _note(
                code,
                name,
                line,
                cell_sum,
                source,
                function_name,
                train_sum,
                with_variables,
                cell_with,
                missing[0],
                namespace,
            )
    return None


def _renaming(trained: list[ast.AST], cell: list[ast.AST]) -> dict[str, str]:
    """``{"X_tr": "X_te"}``: the data names the cell's terms use in place of the training
    terms' (same position, every other name equal)."""
    renamed: dict[str, str] = {}
    for old, new in zip(trained, cell, strict=False):
        old_names = sorted(_names(old))
        new_names = sorted(_names(new))
        if len(old_names) != len(new_names):
            return {}
        for a, b in zip(
            [n.id for n in ast.walk(old) if isinstance(n, ast.Name)],
            [n.id for n in ast.walk(new) if isinstance(n, ast.Name)],
            strict=False,
        ):
            if a != b:
                renamed[a] = b
    return renamed


def _swap(word: str, renamed: dict[str, str]) -> str | None:
    """``e_tr`` -> ``e_te`` by the part ``X_tr`` -> ``X_te`` changed (a suffix or prefix)."""
    for old, new in renamed.items():
        common = 0
        while common < min(len(old), len(new)) and old[common] == new[common]:
            common += 1
        old_part, new_part = old[common:], new[common:]
        if old_part and word.endswith(old_part):
            return word[: len(word) - len(old_part)] + new_part
    return None


def _counterpart(
    source: str, offset: ast.AST, renamed: dict[str, str], namespace: dict[str, Any], rows: int
) -> str | None:
    """The offset's expression for the cell's rows, or None."""
    text = source_segment(source, offset)
    if text is None:
        return None
    expression = offset
    if isinstance(offset, ast.Name):
        # The name's own counterpart first (``base_fit`` -> ``base_new``).
        same = _swap(offset.id, renamed)
        if same is not None and first_axis(namespace.get(same)) == rows:
            return same
        # A global computed in the defining cell: ``log_e_tr = tf.math.log(e_tr)``.
        tree = _parsed(source)
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == offset.id
            ):
                expression = node.value
        text = source_segment(source, expression) or text
    names = [n.id for n in ast.walk(expression) if isinstance(n, ast.Name)]
    data = [n for n in names if first_axis(namespace.get(n)) is not None]
    if not data:
        return None
    for old in sorted(set(data), key=len, reverse=True):
        new = _swap(old, renamed)
        if new is None or first_axis(namespace.get(new)) != rows:
            return None
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
    return text


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _note(
    code: CellCode,
    name: str,
    line: int,
    cell_sum: ast.BinOp,
    source: str,
    function_name: str,
    train_sum: ast.BinOp,
    trained_terms: list[ast.AST],
    cell_terms: list[ast.AST],
    offset: ast.AST,
    namespace: dict[str, Any],
) -> Note | None:
    renamed = _renaming(trained_terms, cell_terms)
    new_data = [v for v in renamed.values() if first_axis(namespace.get(v)) is not None]
    if not renamed or not new_data:
        return None
    rows = first_axis(namespace.get(new_data[0]))
    if rows is None:
        return None
    counterpart = _counterpart(source, offset, renamed, namespace, rows)
    written, trained, offset_text = (
        code.segment(cell_sum),
        source_segment(source, train_sum),
        source_segment(source, offset),
    )
    statement = next(
        (s for s in code.nodes if isinstance(s, ast.Assign) and s.lineno == line), None
    )
    if (
        counterpart is None
        or written is None
        or trained is None
        or offset_text is None
        or statement is None
    ):
        return None
    fixed = code.replaced_in(statement, cell_sum, f"{written} + {counterpart}")
    if fixed is None:
        return None
    text = (
        f"`{name}` is computed with `{written}`, but `{function_name}` fitted these "
        f"parameters with `{trained}`: the term `{offset_text}` (no parameter in it, an "
        f"offset) is left out here, so the parameters are used without the part of the "
        f"predictor they were fitted beside, and `{name}` is on another scale than the "
        f"values it is compared with. Nothing raises. Add the new rows' own term. Fix: "
        f"`{fixed}`."
    )
    return reports.note(text, SECTION)
