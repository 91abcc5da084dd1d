"""A quantity to maximise given to an optimizer as it is: the optimizer minimises it.

Keras optimizers step against the gradient they are given (``apply_gradients``,
``minimize``): they always make the target smaller. A custom loop that differentiates a
quantity meant to grow (a log-likelihood, a class score, a reward, an ELBO) and hands
that gradient to ``apply_gradients`` drives it down: the fitted parameters are the worst
ones, the optimised input looks least like the class. Nothing raises; the target just
falls step after step, below zero for a log-likelihood, and a divergence check would
blame the learning rate.

Told at the ``tape.gradient`` call site (``variables/training_symptoms.py``) from three
readings: the sampled target fell from its first to its last sample (the symptom, read
from values the site already keeps); the target is a quantity to maximise by its name,
or by the name of the notebook function that computed it or that this function returns
(``lml = lml_for_params()`` where ``lml_for_params`` returns
``log_marginal_likelihood(...)``), with no word of a loss or a negation in them
(``neg_log_lik``, ``nll``, ``loss``, ``cost``); and the gradients go unchanged to
``apply_gradients`` (ascent written by hand, ``assign_add``, or negated gradients are
left alone). The fix negates the target in the tape and differentiates that.
"""

from __future__ import annotations

import ast
import math
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.syntax import call_name
from jupyterlab_tfcoach.monitor.training.user_code import loss_return

SECTION = "gradient-tape"
# Name parts of quantities a learner makes larger.
_MAXIMISED = frozenset(
    {
        "likelihood",
        "likelihoods",
        "loglik",
        "loglikelihood",
        "lik",
        "ll",
        "lml",
        "elbo",
        "evidence",
        "score",
        "scores",
        "reward",
        "rewards",
        "logprob",
        "logp",
        "utility",
        "fitness",
        "accuracy",
        "acc",
    }
)
# Name parts that make the quantity one to minimise (or already negated).
_MINIMISED = frozenset(
    {
        "neg",
        "negative",
        "minus",
        "nll",
        "nlml",
        "nelbo",
        "loss",
        "losses",
        "cost",
        "error",
        "err",
        "penalty",
        "distance",
        "dist",
        "mse",
        "mae",
        "energy",
        "regret",
        "objective",
    }
)
_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True)
class Maximised:
    """A tape target meant to grow, and the two statements that minimise its negative."""

    target: str  # "lml"
    why: str  # "`lml` is computed by `log_marginal_likelihood`"
    optimizer: str  # "opt.apply_gradients"
    fix: str  # "loss = -lml_for_params()"
    gradient_fix: str  # "grads = tape.gradient(loss, params)"


def _parts(name: str) -> set[str]:
    parts = {p.lower() for p in _PARTS.findall(name)}
    joined = name.lower().replace("_", "")
    if any(log in joined for log in ("logprob", "loglik", "logdensity", "logpdf", "logpmf")):
        parts.add("logprob")
    return parts


def meant_to_grow(name: str) -> bool | None:
    """True for a name of a quantity to maximise, False for one to minimise, None when
    the name says neither."""
    parts = _parts(name)
    if parts & _MINIMISED:
        return False
    if parts & _MAXIMISED:
        return True
    return None


def _called_function(value: ast.AST) -> str | None:
    """``f`` for ``f(...)`` and ``f(...)[0, c]`` (a notebook function's name)."""
    while isinstance(value, ast.Subscript):
        value = value.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id
    return None


def _grows_by_computation(value: ast.AST, namespace: Mapping[str, Any]) -> str | None:
    """The function whose name says the value is to maximise: the called notebook
    function, or the one it returns the call of; None when a name says to minimise."""
    function_name = _called_function(value)
    if function_name is None:
        return None
    verdict = meant_to_grow(function_name)
    if verdict is not None:
        return function_name if verdict else None
    function = namespace.get(function_name)
    if not isinstance(function, types.FunctionType):
        return None
    read = loss_return(function)
    if read is None:
        return None
    returned = read[2].value
    if isinstance(returned, ast.UnaryOp) and isinstance(returned.op, ast.USub):
        return None
    inner = _called_function(returned) if returned is not None else None
    if inner is not None and meant_to_grow(inner):
        return inner
    return None


def _applied_unchanged(tree: ast.AST, results: list[str]) -> str | None:
    """``opt.apply_gradients`` when the gradients go to it as they came from the tape:
    ``opt.apply_gradients(zip(grads, ...))`` with ``grads`` assigned nowhere else."""
    if len(results) != 1:
        return None
    grads = results[0]
    assigned = 0
    applied: str | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if any(isinstance(n, ast.Name) and n.id == grads for n in ast.walk(target)):
                    assigned += 1
        if (
            isinstance(node, ast.Call)
            and call_name(node) == "apply_gradients"
            and isinstance(node.func, ast.Attribute)
            and node.args
            and isinstance(zipped := node.args[0], ast.Call)
            and call_name(zipped) == "zip"
            and zipped.args
            and isinstance(zipped.args[0], ast.Name)
            and zipped.args[0].id == grads
        ):
            applied = f"{ast.unparse(node.func.value)}.apply_gradients"
    return applied if assigned == 1 else None


def _fresh_name(tree: ast.AST) -> str:
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for name in ("loss", "neg_objective", "to_minimise"):
        if name not in used:
            return name
    return "to_minimise"


def maximised_target(
    source: str,
    tree: ast.AST,
    target: str,
    gradient_statement: ast.stmt | None,
    results: list[str],
    namespace: Mapping[str, Any],
) -> Maximised | None:
    """The tape target ``target`` when it is a quantity to maximise that an optimizer is
    given unchanged (the caller has seen it fall)."""
    if not target.isidentifier() or gradient_statement is None:
        return None
    optimizer = _applied_unchanged(tree, results)
    if optimizer is None:
        return None
    statement = last_assignment(tree, target, gradient_statement.lineno)
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    value = statement.value
    by_name = meant_to_grow(target)
    negative = isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub)
    # A minus under a name that says neither (``out = -log_density(...)``) makes a loss;
    # under ``reward`` it is how the reward is defined (a negative distance).
    if by_name is False or (negative and not by_name):
        return None
    function = _grows_by_computation(value, namespace)
    if function is None and not by_name:
        return None
    why = f"`{target}` is computed by `{function}`" if function else f"`{target}`"
    expression = ast.get_source_segment(source, value)
    gradient_text = ast.get_source_segment(source, gradient_statement)
    call = gradient_statement.value if isinstance(gradient_statement, ast.Assign) else None
    if (
        expression is None
        or gradient_text is None
        or not isinstance(call, ast.Call)
        or not call.args
        or gradient_statement.lineno != gradient_statement.end_lineno
    ):
        return None
    simple = isinstance(value, ast.Call | ast.Name | ast.Attribute | ast.Subscript)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        negated = ast.get_source_segment(source, value.operand) or ""
    else:
        negated = f"-{expression}" if simple else f"-({expression})"
    if not negated:
        return None
    new = _fresh_name(tree)
    first = call.args[0]
    start = first.col_offset - gradient_statement.col_offset
    end = (first.end_col_offset or 0) - gradient_statement.col_offset
    gradient_fix = gradient_text[:start] + new + gradient_text[end:]
    return Maximised(target, why, optimizer, f"{new} = {negated}", gradient_fix)


def fell(values: list[tuple[int, float]]) -> str | None:
    """``"went from -14.86 at step 1 to -42.88 at step 128"`` when the sampled target
    ended at its lowest, below where it started (or went non-finite after falling)."""
    finite = [(s, v) for s, v in values if math.isfinite(v)]
    if len(finite) < 2 or len(values) < 3:
        return None
    (first_step, first), (last_step, last) = finite[0], finite[-1]
    if last >= first or min(v for _, v in finite) < last:
        return None
    went = f"went from {first:.4g} at step {first_step} to {last:.4g} at step {last_step}"
    if not math.isfinite(values[-1][1]):
        return f"{went}, and was {values[-1][1]} at step {values[-1][0]}"
    return went


def note_text(found: Maximised, at: str, how: str) -> str:
    return (
        f"{found.why} ({at}): a quantity to make larger, but `{found.optimizer}` steps "
        "against the gradient it is given: Keras optimizers always minimise, so each step "
        f"made `{found.target}` smaller (it {how}), and it ends at its worst value, not "
        f"its best. Differentiate its negative in the tape: `{found.fix}`, then "
        f"`{found.gradient_fix}`, and start the trained values afresh before running the "
        "loop again."
    )
