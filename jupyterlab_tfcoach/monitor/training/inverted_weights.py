"""A hand-written loss that weighs ``-log(p)`` by ``p ** gamma``: the focal factor inverted.

A focal loss weighs each example's cross-entropy by how wrong the model still is,
``(1 - p) ** gamma * -log(p)`` with ``p`` the probability of the right class, so easy
examples count less. Written ``p ** gamma * -log(p)``, the weight is the probability
itself: an example the model gets wrong (``p`` near 0) weighs nothing, and the loss is
lowest when ``p`` goes to 0, so training pushes the right class down (a model that ends
below chance). Nothing raises.

``inverted_weight(function)`` reads the source of the learner's loss function (a notebook
function, or a ``Loss`` subclass's ``call``, with ``inspect``; never called): the one
``return`` holding a product of ``<p> ** <power>`` and ``log(<p>)`` (or ``log(<p> +
eps)``), the same name ``p``, the power's base not ``1 - p``. ``run_outcomes.py`` names it
as the cause when a ``fit`` with that loss learned nothing (it never tells it alone: an
entropy term, ``p * log(p)``, has no power and is not read).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.training.user_code import loss_return

_LOGS = frozenset({"log", "log1p"})


@dataclass(frozen=True)
class InvertedWeight:
    label: str  # the loss as named: `focal` or `Focal.call`
    factor: str  # `p_t ** gamma` as written
    fixed_factor: str  # `(1 - p_t) ** gamma`
    statement: str  # the return as written
    fixed: str  # the return with the factor fixed


def _log_of(node: ast.AST) -> str | None:
    """``p`` of ``tf.math.log(p)``, ``np.log(p + 1e-7)``, ``keras.ops.log(p)``."""
    if not isinstance(node, ast.Call) or len(node.args) != 1:
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in _LOGS:
        return None
    argument = node.args[0]
    if isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Add):
        if isinstance(argument.right, ast.Constant):
            argument = argument.left
        elif isinstance(argument.left, ast.Constant):
            argument = argument.right
    return argument.id if isinstance(argument, ast.Name) else None


def _unsigned(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return node


def _factors(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of ``*`` (signs dropped)."""
    node = _unsigned(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return [*_factors(node.left), *_factors(node.right)]
    return [node]


def _inverted_power(expression: ast.AST) -> ast.BinOp | None:
    """The ``p ** power`` multiplying ``log(p)`` somewhere in ``expression``."""
    for node in ast.walk(expression):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
            continue
        factors = _factors(node)
        logged = {name for name in map(_log_of, factors) if name is not None}
        for factor in factors:
            if (
                isinstance(factor, ast.BinOp)
                and isinstance(factor.op, ast.Pow)
                and isinstance(factor.left, ast.Name)
                and factor.left.id in logged
            ):
                return factor
    return None


def inverted_weight(function: Any) -> InvertedWeight | None:
    found = loss_return(function)
    if found is None:
        return None
    label, source, returned = found
    if returned.lineno != returned.end_lineno:
        return None
    power = _inverted_power(returned)
    statement = ast.get_source_segment(source, returned)
    factor = ast.get_source_segment(source, power) if power is not None else None
    if power is None or statement is None or factor is None:
        return None
    base = ast.get_source_segment(source, power.left) or ""
    exponent = ast.get_source_segment(source, power.right) or ""
    fixed_factor = f"(1 - {base}) ** {exponent}"
    if factor not in statement:
        return None
    fixed = statement.replace(factor, fixed_factor, 1)
    return InvertedWeight(str(label), factor, fixed_factor, statement, fixed)


def cause_text(found: InvertedWeight) -> str:
    return (
        f"the loss `{found.label}` weighs each example's -log by `{found.factor}`, the "
        "probability of its right class: an example the model gets wrong weighs nearly "
        "nothing, so the loss is lowest when that probability goes to 0 and training "
        "pushes the right class down. A focal loss weighs by what the model still misses, "
        f"`{found.fixed_factor}`: `{found.statement}` becomes `{found.fixed}`; then build "
        "and train the model again"
    )
