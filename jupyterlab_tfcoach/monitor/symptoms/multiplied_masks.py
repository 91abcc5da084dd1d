"""Scores "masked" by multiplying them with a 0/1 mask, then given to a softmax.

``logits = logits * (1.0 - tf.eye(n))`` sets each self-similarity to 0, not to minus
infinity. A softmax (or a softmax cross-entropy, a ``logsumexp``, an ``exp``) reads 0 as
an ordinary score: exp(0) = 1 still sits in every denominator, so the masked entries take
probability from the real ones and are not left out at all (a contrastive loss still
counts each item against itself; a causal attention made as ``scores * tril`` still
attends to the future with a score of 0). Nothing raises. Masking before a softmax means
adding a very large negative number where the mask is 0.

Read from each scope of a completed cell (its top level, each ``def``), in order: a mask
is an expression built from ``eye``, ``band_part``, ``tril`` or ``triu`` (``1 - tf.eye(n)``,
``tf.linalg.band_part(tf.ones((t, t)), -1, 0)``, ``np.tril(np.ones(...))``, a cast of
one), or a cast of a condition made from data (a padding mask: ``tf.cast(y >= 0,
tf.float32)``, ``tf.cast(tf.sequence_mask(n, t), tf.float32)``, ``(ids != 0).astype(...)``,
or a cast of a name the scope bound to a comparison), inline or through a name the scope
bound to it. A name bound to a product of a
value and a mask (``s = s * m``, ``s *= m``) is told when the same scope later gives it
(or a product written inline) to ``softmax``, ``log_softmax``, a softmax cross-entropy
(``sparse_softmax_cross_entropy_with_logits``, ``softmax_cross_entropy_with_logits``,
``categorical_crossentropy``), ``logsumexp``/``reduce_logsumexp`` or ``exp``. A product
taken after the softmax (probabilities masked, then renormalised) is not this. The fix is
the product's statement with the mask added as a large negative score: ``s - 1e9 * E``
for a mask written ``1 - E``, else ``s - 1e9 * (1.0 - m)``. Source only.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_scopes,
    parsed_source,
    scope_statements,
)

SECTION = "from-logits"
MAX_CELL_CHARS = 30_000
_STRUCTURES = frozenset({"eye", "band_part", "tril", "triu"})
_SOFTMAXES = frozenset(
    {
        "softmax",
        "log_softmax",
        "sparse_softmax_cross_entropy_with_logits",
        "softmax_cross_entropy_with_logits",
        "categorical_crossentropy",
        "sparse_categorical_crossentropy",
        "logsumexp",
        "reduce_logsumexp",
        "exp",
    }
)
# Calls that may build or convert a structural mask without computing from data.
_MASK_HELPERS = frozenset(
    {"cast", "ones", "ones_like", "constant", "astype", "logical_not", "shape", "range",
     "convert_to_tensor", "float32", "float64"}
)  # fmt: skip
# Calls whose result is a condition (booleans): cast to numbers, a padding mask.
_CONDITIONS = frozenset(
    {"sequence_mask", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
     "logical_not", "logical_and", "logical_or", "is_finite"}
)  # fmt: skip
# Substring tests before the parse (a regular expression scans a long cell slowly).
_NEEDED = ("eye", "band_part", "tril", "triu", "cast", "astype")
_CONSUMERS = ("softmax", "logsumexp", "exp(", "crossentropy")


def _is_condition(node: ast.AST, masks: Mapping[str, ast.expr]) -> bool:
    """A boolean expression: a comparison, a condition-making call, ``~c``, ``a & b``, or a
    name the scope bound to one."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _is_condition(node.operand, masks)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        return _is_condition(node.left, masks) and _is_condition(node.right, masks)
    if isinstance(node, ast.Call):
        return call_name(node) in _CONDITIONS
    if isinstance(node, ast.Name) and node.id in masks:
        bound = masks[node.id]
        return not isinstance(bound, ast.Name) and _is_condition(bound, {})
    return False


def _is_cast_condition(node: ast.AST, masks: Mapping[str, ast.expr]) -> bool:
    """A condition made numbers: ``tf.cast(c, tf.float32)``, ``c.astype("float32")``."""
    if not isinstance(node, ast.Call):
        return False
    if call_name(node) == "cast" and node.args:
        return _is_condition(node.args[0], masks)
    if call_name(node) == "astype" and isinstance(node.func, ast.Attribute):
        return _is_condition(node.func.value, masks)
    return False


def _is_mask(node: ast.AST, masks: Mapping[str, ast.expr]) -> bool:
    """An expression made of a structural 0/1 matrix or a cast condition (or a name bound
    to one)."""
    if isinstance(node, ast.Name):
        return node.id in masks and not _is_condition(masks[node.id], {})
    if _is_cast_condition(node, masks):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.MatMult, ast.Div)):
        return False
    found = False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            name = call_name(inner)
            if name in _STRUCTURES:
                found = True
            elif name not in _MASK_HELPERS:
                return False  # a computation, not a fixed pattern of 0 and 1
        elif isinstance(inner, ast.Name) and inner.id in masks:
            found = True
    return found


def _product(node: ast.expr, masks: Mapping[str, ast.expr]) -> tuple[ast.expr, ast.expr] | None:
    """``(value, mask)`` for ``value * mask`` or ``mask * value``."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
        return None
    for value, mask in ((node.left, node.right), (node.right, node.left)):
        if _is_mask(mask, masks) and not _is_mask(value, masks):
            return value, mask
    return None


def _scopes(tree: ast.Module) -> list[tuple[str | None, list[ast.stmt]]]:
    """The cell's top level (no name) and each ``def`` in it: (its name, its body)."""
    return [(getattr(scope, "name", None), scope.body) for scope in function_scopes(tree)]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for scores multiplied by a mask and then given to a softmax, if any."""
    if len(source) > MAX_CELL_CHARS or not any(word in source for word in _NEEDED):
        return []
    if not any(word in source for word in _CONSUMERS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    outer: dict[str, ast.expr] = {}
    for function, body in _scopes(tree):
        # A function reads the masks the cell's top level made (``causal`` above a def).
        masks = dict(outer)
        note = _scope_note(source, function, body, masks)
        if function is None:
            outer = masks
        if note is not None:
            return [note]
    return []


def _scope_note(
    source: str, function: str | None, body: list[ast.stmt], masks: dict[str, ast.expr]
) -> Note | None:
    masked: dict[str, tuple[ast.stmt, ast.expr, ast.expr]] = {}
    for statement in scope_statements(body):
        consumer = _consumer(statement, masked, masks)
        if consumer is not None:
            call, name, product = consumer
            return _note(source, function, call, name, product)
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            if isinstance(statement.op, ast.Mult) and _is_mask(statement.value, masks):
                name = statement.target.id
                masked[name] = (statement, statement.target, statement.value)
            continue
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        name = target.id
        masks.pop(name, None)
        masked.pop(name, None)
        product = _product(statement.value, masks)
        if product is not None:
            masked[name] = (statement, product[0], product[1])
        elif _is_mask(statement.value, masks) or _is_condition(statement.value, {}):
            masks[name] = statement.value  # a condition is kept for the cast that reads it
    return None


def _consumer(
    statement: ast.stmt,
    masked: Mapping[str, tuple[ast.stmt, ast.expr, ast.expr]],
    masks: Mapping[str, ast.expr],
) -> tuple[ast.Call, str | None, tuple[ast.stmt, ast.expr, ast.expr]] | None:
    """A softmax-like call of the statement given a masked name or an inline product."""
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or call_name(node) not in _SOFTMAXES:
            continue
        operands = list(node.args) + [k.value for k in node.keywords if k.arg != "labels"]
        if call_name(node) in ("categorical_crossentropy", "sparse_categorical_crossentropy"):
            from_logits = any(
                k.arg == "from_logits" and isinstance(k.value, ast.Constant) and k.value.value
                for k in node.keywords
            )
            if not from_logits:
                continue
            operands = node.args[1:2] + [k.value for k in node.keywords if k.arg == "y_pred"]
        for operand in operands:
            core = operand
            while isinstance(core, ast.BinOp) and isinstance(core.op, ast.Div):
                core = core.left  # a temperature: (s * m) / t
            if isinstance(core, ast.Name) and core.id in masked:
                return node, core.id, masked[core.id]
            product = _product(core, masks)
            if product is not None:
                return node, None, (statement, product[0], product[1])
    return None


def _fixed_value(source: str, value: ast.expr, mask: ast.expr) -> str | None:
    value_text = ast.get_source_segment(source, value)
    if value_text is None:
        return None
    if isinstance(value, ast.BinOp | ast.UnaryOp):
        value_text = f"({value_text})"
    if (
        isinstance(mask, ast.BinOp)
        and isinstance(mask.op, ast.Sub)
        and isinstance(mask.left, ast.Constant)
        and mask.left.value in (1, 1.0)
    ):
        blocked = ast.get_source_segment(source, mask.right)
        if blocked is None:
            return None
        if isinstance(mask.right, ast.BinOp):
            blocked = f"({blocked})"
        return f"{value_text} - 1e9 * {blocked}"
    mask_text = ast.get_source_segment(source, mask)
    if mask_text is None:
        return None
    if isinstance(mask, ast.BinOp):
        mask_text = f"({mask_text})"
    return f"{value_text} - 1e9 * (1.0 - {mask_text})"


def _note(
    source: str,
    function: str | None,
    call: ast.Call,
    name: str | None,
    product: tuple[ast.stmt, ast.expr, ast.expr],
) -> Note | None:
    statement, value, mask = product
    where = f" in `{function}`" if function else " of this cell"
    called = ast.get_source_segment(source, call.func) or call_name(call) or "softmax"
    fixed = _fixed_value(source, value, mask)
    mask_text = ast.get_source_segment(source, mask)
    if fixed is None or mask_text is None:
        return None
    if name is not None:
        line = ast.get_source_segment(source, statement)
        if line is None or "\n" in line:
            return None
        subject = f"`{line}` (line {statement.lineno}{where})"
        fix = f"`{name} = {fixed}`"
        after = f"`{called}` (line {call.lineno}) then reads `{name}`"
    else:
        written = ast.get_source_segment(source, value)
        subject = f"The product with `{mask_text}` given to `{called}` (line {call.lineno}{where})"
        fix = f"`{fixed}` in its place"
        after = f"`{called}` reads `{written}` masked that way"
    text = (
        f"{subject} masks by multiplying with `{mask_text}`: the masked entries become 0, "
        f"not minus infinity, and {after} as scores: exp(0) = 1 still counts in every "
        "denominator, so the masked entries keep taking probability from the real ones "
        "and are not left out: the result is not the masked softmax that was meant (a "
        "loss's minimum and gradients, an attention's weights all change). Nothing raises. "
        "Mask scores before a softmax with a very large negative number where the "
        f"mask is 0: {fix}."
    )
    return reports.note(text, SECTION)
