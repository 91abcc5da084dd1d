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
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import SCOPE_NODES, call_name, parsed_source, scope_nodes

SECTION = "from-logits"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_CONSUMERS = frozenset({"categorical", "choice", "multinomial", "log", "argmax"})


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


def _consumed(nodes: list[ast.AST], division: ast.BinOp, parents: dict[int, ast.AST]) -> bool:
    """Whether the quotient reaches a sampling call, ``log`` or ``argmax``."""
    node: ast.AST | None = parents.get(id(division))
    bound: str | None = None
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, ast.Call) and (call_name(node) or "") in _CONSUMERS:
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
            and (call_name(other) or "") in _CONSUMERS
            and other.lineno >= division.lineno
            and any(
                isinstance(n, ast.Name) and n.id == bound
                for argument in [*other.args, *(k.value for k in other.keywords)]
                for n in ast.walk(argument)
            )
        ):
            return True
    return False


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
    if not source or len(source) > MAX_CELL_CHARS or "softmax" not in source or "/" not in source:
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
