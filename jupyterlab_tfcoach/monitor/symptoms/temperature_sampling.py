"""A sampling temperature applied to probabilities: ``softmax(logits) / T``, not ``logits / T``.

Temperature reshapes a distribution by dividing the *scores* before the softmax:
``softmax(logits / T)`` is sharper for ``T < 1`` and flatter for ``T > 1``. Dividing the
probabilities after it multiplies every class by the same constant: renormalised, or
passed through ``log`` to ``tf.random.categorical`` (which only reads differences of its
log-scores), it is the same distribution, whatever ``T``. Every temperature samples alike;
nothing raises.

Told in the cell that writes it, from its source: after a completed cell holding
``softmax`` and ``/`` (two substring tests otherwise), in each scope of the cell (top
level, each ``def``), a division ``p / t`` whose ``p`` is a ``softmax(...)`` call (seen
through ``.numpy()`` and indexing) or a name that scope bound to one, and whose divisor
is a name, attribute or number (a sum of ``p``
is a renormalisation and stays silent), when the quotient (or the name bound to it) then
reaches a sampling call (``categorical``, ``choice``, ``multinomial``), ``log`` or
``argmax``. ``p ** (1 / t)`` (a correct sharpening of probabilities) is not a division.
The fix is the softmax of the scores divided by ``t``, written from the learner's line.

The same slip the other way round: a temperature that multiplies the scores
(``logits * temperature``) inverts it: ``temperature=0.5`` halves the scores and samples
more randomly, a large temperature samples greedily. Read from the same scopes: a product
``s * t`` (or ``t * s``) whose factor ``t`` is a name or attribute called a temperature
(``temperature``, ``temp``, ``self.temperature``; an inverse temperature, ``inv_temp`` or
``beta``, multiplies rightly and is not read) and whose other factor is not a number, when
the product (or the name bound to it) reaches a sampling call, ``softmax`` or ``log``.
Fix: ``s / t``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import SCOPE_NODES, call_name, parsed_source, scope_nodes

SECTION = "from-logits"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_CONSUMERS = frozenset({"categorical", "choice", "multinomial", "log", "argmax"})
# What a scaled score reaches to become a distribution or a sample.
_SCORE_CONSUMERS = frozenset(
    {"categorical", "choice", "multinomial", "softmax", "log_softmax", "Categorical"}
)
_TEMPERATURE_WORDS = frozenset({"temperature", "temp", "temperatures", "temps"})
_INVERSE_WORDS = frozenset({"inv", "inverse", "beta", "reciprocal", "one"})
_SCORE_WORDS = frozenset({"logit", "logits", "score", "scores", "energy", "energies"})


def _softmax_call(node: ast.AST) -> ast.Call | None:
    """The ``softmax(...)`` call ``node`` is, seen through ``.numpy()`` and indexing
    (``tf.nn.softmax(scores).numpy()[0]``)."""
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "numpy"
            and not node.args
        ):
            node = node.func.value
        else:
            break
    if isinstance(node, ast.Call) and (call_name(node) or "") == "softmax" and node.args:
        return node
    return None


def _divisor(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute)) or (
        isinstance(node, ast.Constant) and type(node.value) in (int, float)
    )


def _consumed(
    nodes: list[ast.AST],
    division: ast.BinOp,
    parents: dict[int, ast.AST],
    consumers: frozenset[str] = _CONSUMERS,
) -> bool:
    """Whether the quotient reaches a sampling call, ``log`` or ``argmax``."""
    node: ast.AST | None = parents.get(id(division))
    bound: str | None = None
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, ast.Call) and (call_name(node) or "") in consumers:
            return True
        node = parents.get(id(node))
    if (
        isinstance(node, ast.Assign)
        and node.value is division
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        bound = node.targets[0].id
    if bound is None:
        return False
    for other in nodes:
        if (
            isinstance(other, ast.Call)
            and (call_name(other) or "") in consumers
            and other.lineno >= division.lineno
            and any(
                isinstance(n, ast.Name) and n.id == bound
                for argument in [*other.args, *(k.value for k in other.keywords)]
                for n in ast.walk(argument)
            )
        ):
            return True
    return False


def _words(node: ast.AST) -> set[str]:
    text = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    if not isinstance(node, ast.Name | ast.Attribute) or not isinstance(text, str):
        return set()
    return {part.lower() for part in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)}


def _temperature_name(node: ast.AST) -> bool:
    """``temperature``, ``temp``, ``self.temperature``: not ``inv_temp`` or ``beta``."""
    words = _words(node)
    return bool(words & _TEMPERATURE_WORDS) and not words & _INVERSE_WORDS


def _scores_named(node: ast.AST) -> bool:
    """A factor whose names say scores (``last_logits``, ``scores[0]``)."""
    return any(
        _words(n) & _SCORE_WORDS for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)
    )


def _multiplied(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """(scores, temperature) of ``scores * temperature`` or ``temperature * scores``; a
    factor called only ``temp`` (often a temporary) counts when the other names scores."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for scores, factor in ((node.left, node.right), (node.right, node.left)):
        if not _temperature_name(factor) or isinstance(scores, ast.Constant):
            continue
        if _temperature_name(scores):
            continue
        if "temperature" in _words(factor) or "temperatures" in _words(factor):
            return scores, factor
        if _scores_named(scores):
            return scores, factor
    return None


def _multiplied_note(product: ast.BinOp, scores: ast.expr, factor: ast.expr, source: str) -> Note:
    written = ast.get_source_segment(source, product) or ast.unparse(product)
    scores_text = ast.get_source_segment(source, scores) or ast.unparse(scores)
    factor_text = ast.get_source_segment(source, factor) or ast.unparse(factor)
    wrapped = (
        scores_text
        if isinstance(scores, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
        else f"({scores_text})"
    )
    text = (
        f"`{written}` (line {product.lineno} of this cell) multiplies the scores by the "
        f"temperature `{factor_text}`. A temperature divides them: below 1 it sharpens the "
        "distribution (more conservative samples), above 1 it flattens it. Multiplied, "
        f"its meaning is inverted: `{factor_text}` = 0.5 halves the scores and samples more "
        "randomly, a large one samples almost greedily, and nothing raises. Divide the "
        f"scores: `{wrapped} / {factor_text}`."
    )
    return reports.note(text, SECTION)


def _scope_notes(scope: ast.AST, source: str) -> list[Note]:
    nodes = scope_nodes(scope)
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    softmaxes: dict[str, tuple[ast.Assign, ast.Call]] = {}
    found: list[Note] = []
    for node in nodes:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            bound = _softmax_call(node.value)
            if bound is not None:
                softmaxes[node.targets[0].id] = (node, bound)
            elif not isinstance(node.value, ast.BinOp):
                softmaxes.pop(node.targets[0].id, None)
        product = _multiplied(node)
        if product is not None and isinstance(node, ast.BinOp):
            if _consumed(nodes, node, parents, _SCORE_CONSUMERS):
                found.append(_multiplied_note(node, product[0], product[1], source))
            continue
        if not (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _divisor(node.right)
        ):
            continue
        left = node.left
        written: ast.Assign | None = None
        inline = _softmax_call(left)
        if isinstance(left, ast.Name) and left.id in softmaxes:
            written, call = softmaxes[left.id]
        elif inline is not None:
            call = inline
        else:
            continue
        if not _consumed(nodes, node, parents):
            continue
        found.append(_note(node, call, written, source))
    return found


def _note(division: ast.BinOp, call: ast.Call, written: ast.Assign | None, source: str) -> Note:
    quotient = ast.get_source_segment(source, division) or ast.unparse(division)
    temperature = ast.get_source_segment(source, division.right) or ast.unparse(division.right)
    scores = call.args[0]
    scores_text = ast.get_source_segment(source, scores) or ast.unparse(scores)
    call_text = ast.get_source_segment(source, call) or ast.unparse(call)
    wrapped = scores_text if isinstance(scores, (ast.Name, ast.Attribute)) else f"({scores_text})"
    softmax_fixed = call_text.replace(scores_text, f"{wrapped} / {temperature}", 1)
    text = (
        f"`{quotient}` (line {division.lineno} of this cell) divides probabilities, the "
        f"output of `{call_text}`, by `{temperature}`. That multiplies every class's "
        "probability by the same number: renormalised, or through `log` to "
        "`tf.random.categorical`, it is the same distribution, so every temperature "
        "samples alike and nothing raises. A temperature divides the scores before the "
        f"softmax: `{softmax_fixed}`"
    )
    if written is not None:
        statement = ast.get_source_segment(source, written) or ast.unparse(written)
        fixed = statement.replace(call_text, softmax_fixed, 1)
        text += f" (the line `{fixed}`), without the division `{quotient}`."
    else:
        text += f" in place of `{quotient}`."
    return reports.note(text, SECTION)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    divided = "softmax" in source and "/" in source
    if not divided and not ("temp" in source.lower() and "*" in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    scopes: list[ast.AST] = [tree]
    scopes.extend(n for n in ast.walk(tree) if isinstance(n, SCOPE_NODES[:2]))
    found: list[Note] = []
    for scope in scopes:
        found.extend(_scope_notes(scope, source))
        if len(found) >= MAX_NOTES:
            return found[:MAX_NOTES]
    return found
