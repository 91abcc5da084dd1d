"""A value named or printed as "per example" or "mean" that a reduction made something else.

Two shapes of one slip, both read from the words the learner gave the value
(``intent_words.py``) and the shapes its operands hold after the cell:

- a name that promises one value per example (``per_image_err``, ``per_user_loss``,
  ``each_sample_score``: ``per``/``each`` then a word for examples: image, sample, row,
  user, state, sequence...) assigned from a reduction over axis 0 (``np.mean(x, axis=0)``,
  ``tf.reduce_sum(x, axis=[0])``): axis 0 is the examples' axis, so the result has one
  value per pixel or feature and anything ranked from it (the "worst images") indexes
  pixels. Told when the result's first axis is not the operand's first axis; the fix
  reduces every axis but the first.
- a value printed under a label (or assigned to a name) that says mean, average or per
  (``print("mean entropy per state:", entropy)``) computed as a sum over EVERY axis
  (``tf.reduce_sum(x)``, ``np.sum(x)``, ``x.sum()``, with no axis and no division): the
  "mean" is N times too large (a per-state entropy above ln 2 for two actions). The fix
  sums over the last axis and averages the rest (for a vector, just the mean).

Only top-level statements of a completed cell, whose names then hold their values; an
operand is read by shape only (``cell_reading.value_at``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms import reduction_meaning
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import value_at
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    AXIS_REDUCTIONS,
    EXAMPLE_NOUNS,
    MEAN_WORDS,
    cell_lines,
    identifier_words,
    label_text,
    lines_matching,
    printed_values,
    segment,
    target_names,
    text_words,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    int_literal,
    line_with_replacement,
    parsed_source,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_CELL_CHARS = 30_000
_TRIGGER = word_gate(r"(?i:per|each|mean|average|avg)")
# The lines worth reading: a per_/each_ name reduced over axis 0, a sum with no axis.
_CANDIDATES = re.compile(
    r"(?i:(?<![a-z])(?:per|each)_\w*\s*=[^\n]*(?:axis\s*=\s*[\[(]?\s*0\b|,\s*0\s*\)))"
    r"|=\s*-?\s*[\w.]*\b(?:reduce_)?sum\((?![^\n]*axis)"
    r"|=[^\n]*[\w\])]\.sum\(\s*\)"
)
_PRINT = re.compile(r"\bprint\s*\(")
# Plurals too: a name such as ``per_images`` is read word by word, never made singular.
_EXAMPLES = EXAMPLE_NOUNS | {"images", "samples", "examples", "rows", "users", "states", "items"}
_MEAN_WORDS = MEAN_WORDS | {"per"}
_REDUCTIONS = AXIS_REDUCTIONS
_MEAN_OF = {"reduce_sum": "reduce_mean", "sum": "mean"}
_UNWRAP = frozenset({"float", "round", "numpy", "item"})


def _per_example(words: list[str]) -> str | None:
    """``image`` for ``per_image_err``: the example word after per/each."""
    for index, word in enumerate(words[:-1]):
        if word in ("per", "each") and words[index + 1] in _EXAMPLES:
            return words[index + 1]
    return None


def _axis(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "axis":
            return keyword.value
    if isinstance(call.func, ast.Attribute) and len(call.args) == 2:
        module = call.func.value
        if isinstance(module, (ast.Name, ast.Attribute)):
            return call.args[1]  # np.mean(x, 0)
    return None


def _reduced_operand(call: ast.Call) -> ast.expr | None:
    """The array a reduction call reads: ``x`` in ``np.mean(x)`` or ``x.mean()``."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    module = func.value
    module_like = isinstance(module, ast.Name) and module.id in ("np", "numpy", "tf", "ops")
    module_like = module_like or (
        isinstance(module, ast.Attribute) and module.attr in ("math", "ops", "numpy")
    )
    if module_like:
        return call.args[0] if call.args else None
    return module  # a method: x.mean()


def _operand_shape(node: ast.AST, namespace: dict[str, Any], lines: list[str]) -> tuple | None:
    """The largest shape a name in the expression holds (the operand's own shape for
    element-wise expressions such as ``(x - y) ** 2`` or ``p * log(p)``)."""
    best: tuple | None = None
    for part in ast.walk(node):
        if not isinstance(part, (ast.Name, ast.Attribute)) or isinstance(
            getattr(part, "ctx", None), ast.Store
        ):
            continue
        text = segment(lines, part)
        if text is None:
            continue
        operand = value_at(part, namespace, text)
        if operand is None or operand.shape is None or None in operand.shape:
            continue
        if best is None or len(operand.shape) > len(best):
            best = operand.shape
    return best


def _per_example_note(
    statement: ast.Assign, namespace: dict[str, Any], lines: list[str]
) -> Note | None:
    names = target_names(statement)
    if len(names) != 1:
        return None
    noun = _per_example(identifier_words(names[0]))
    value = statement.value
    if noun is None or not isinstance(value, ast.Call) or call_name(value) not in _REDUCTIONS:
        return None
    axis = _axis(value)
    operand = _reduced_operand(value)
    if axis is None or operand is None:
        return None
    axes = (
        [int_literal(e) for e in axis.elts]
        if isinstance(axis, (ast.Tuple, ast.List))
        else [int_literal(axis)]
    )
    if 0 not in axes:
        return None
    shape = _operand_shape(operand, namespace, lines)
    result = value_at(statement.targets[0], namespace, names[0])
    if shape is None or result is None or result.shape is None or len(shape) < 2:
        return None
    if shape[0] in (None, 1) or (result.shape and result.shape[0] == shape[0]):
        return None
    rest = tuple(range(1, len(shape)))
    axis_text = str(rest[0]) if len(rest) == 1 else str(rest)
    fixed = line_with_replacement(lines, statement, axis, axis_text)
    written = segment(lines, statement)
    operand_text = segment(lines, operand)
    if fixed is None or written is None or operand_text is None:
        return None
    return reports.note(
        f"`{written}` (line {statement.lineno} of this cell) reduces over axis 0, the axis "
        f"of the {shape[0]} examples of `{operand_text}` (shape {show_shape(shape)}): "
        f"`{names[0]}` has shape {show_shape(result.shape)}, one value per position "
        f"inside an example, not one per {noun} as its name says, and anything ranked or "
        f"indexed from it picks positions, not {noun}s, without any error. Reduce every "
        f"axis but the examples' one: `{fixed}`.",
        SECTION,
    )


def _full_sum(node: ast.AST) -> tuple[ast.Call, bool] | None:
    """The sum call (and whether it is negated) when ``node`` is a sum over every axis."""
    negated = False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, negated = node.operand, True
    if not isinstance(node, ast.Call) or call_name(node) not in ("reduce_sum", "sum"):
        return None
    if not isinstance(node.func, ast.Attribute) or _axis(node) is not None:
        return None
    if any(k.arg in ("axis", "keepdims", "keepdim") for k in node.keywords):
        return None
    return node, negated


def _unwrapped(node: ast.expr) -> ast.expr:
    for _ in range(4):
        if isinstance(node, ast.Call) and call_name(node) in _UNWRAP:
            if isinstance(node.func, ast.Name) and node.args:
                node = node.args[0]
                continue
            if isinstance(node.func, ast.Attribute) and call_name(node) in ("numpy", "item"):
                node = node.func.value
                continue
            if isinstance(node.func, ast.Attribute) and call_name(node) == "round" and node.args:
                node = node.args[0]
                continue
        return node
    return node


def _mean_fix(call: ast.Call, operand: ast.expr, rank: int, lines: list[str]) -> str | None:
    """The sum call rewritten as a mean (of per-row sums for rank 2 and more)."""
    operand_text = segment(lines, operand)
    func = call.func
    if operand_text is None or not isinstance(func, ast.Attribute):
        return None
    name = func.attr
    if operand is func.value:  # x.sum()
        return f"{operand_text}.sum(axis=-1).mean()" if rank >= 2 else f"{operand_text}.mean()"
    prefix = segment(lines, func.value)
    if prefix is None:
        return None
    mean = f"{prefix}.{_MEAN_OF[name]}"
    if rank >= 2:
        return f"{mean}({prefix}.{name}({operand_text}, axis=-1))"
    return f"{mean}({operand_text})"


def _mean_note(
    statement: ast.Assign,
    said: str,
    namespace: dict[str, Any],
    lines: list[str],
) -> Note | None:
    found = _full_sum(statement.value)
    if found is None:
        return None
    call, _negated = found
    operand = _reduced_operand(call)
    if operand is None:
        return None
    shape = _operand_shape(operand, namespace, lines)
    if shape is None or not shape or int(_size(shape)) < 2:
        return None
    fixed_call = _mean_fix(call, operand, len(shape), lines)
    if fixed_call is None:
        return None
    fixed = line_with_replacement(lines, statement, call, fixed_call)
    written, call_text = segment(lines, statement), segment(lines, call)
    operand_text = segment(lines, operand)
    if fixed is None or written is None or call_text is None or operand_text is None:
        return None
    over = "every axis" if len(shape) >= 2 else "all its values"
    how = (
        f"sum each row over the last axis, then average over the {shape[0]} rows"
        if len(shape) >= 2
        else "average them"
    )
    return reports.note(
        f"{said} a mean, but `{written}` (line {statement.lineno} of this cell) is "
        f"`{call_text}`: a sum over {over} of `{operand_text}` (shape {show_shape(shape)}), "
        f"with nothing divided, so the number is {shape[0]} times the "
        f"{'per-row mean' if len(shape) >= 2 else 'mean'} it claims to be, without any "
        f"error. To {how}: `{fixed}`.",
        SECTION,
    )


def _size(shape: tuple) -> int:
    size = 1
    for dim in shape:
        size *= int(dim)
    return size


def reduction_notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    """``reduction_meaning``'s notes (a reduction over the axis the learner's words say it
    keeps, with a model's output as evidence of the examples' axis), then this module's on
    the statements it did not tell: one note per statement."""
    told, lines = reduction_meaning.notes_and_lines(source, namespace)
    return told + notes(source, namespace, skip_lines=frozenset(lines))


def notes(
    source: str, namespace: dict[str, Any], skip_lines: frozenset[int] = frozenset()
) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    per_name = "per_" in source or "each_" in source
    if not per_name and ("sum(" not in source or _TRIGGER.search(source) is None):
        return []
    candidates = lines_matching(_CANDIDATES, source)
    if not candidates:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = cell_lines(source)
    wanted = candidates | lines_matching(_PRINT, source)
    statements = [s for s in tree.body if s.lineno in wanted]
    found: list[Note] = []
    told: set[int] = set()
    assigned: dict[str, ast.Assign] = {}
    for statement in statements:
        if len(found) >= MAX_NOTES:
            break
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and statement.lineno in candidates
            and statement.lineno not in skip_lines
        ):
            names = target_names(statement)
            if names and isinstance(statement.targets[0], ast.Name):
                assigned[names[0]] = statement
                note = _per_example_note(statement, namespace, lines)
                if note is None and set(identifier_words(names[0])) & _MEAN_WORDS:
                    note = _mean_note(statement, f"`{names[0]}` is named as", namespace, lines)
                if note is not None:
                    found.append(note)
                    told.add(id(statement))
            continue
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            continue
        if call_name(statement.value) != "print":
            continue
        label = label_text(statement.value)
        if not set(text_words(label)) & _MEAN_WORDS:
            continue
        for shown in printed_values(statement.value):
            shown = _unwrapped(shown)
            if not isinstance(shown, ast.Name) or shown.id not in assigned:
                continue
            origin = assigned[shown.id]
            if id(origin) in told or origin.lineno in skip_lines:
                continue
            said = f'The label "{label.strip()}" calls `{shown.id}`'
            note = _mean_note(origin, said, namespace, lines)
            if note is not None:
                found.append(note)
                told.add(id(origin))
    return found
