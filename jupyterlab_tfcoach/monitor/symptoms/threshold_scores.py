"""A probability threshold applied to raw scores (logits), or a raw-score threshold to
probabilities.

``preds = tf.cast(logits > 0.5, tf.float32)`` or ``tf.round(scores)`` turns probabilities
into 0/1 predictions. On the output of a layer without a sigmoid (any real number) the
cut at 0.5 is in the wrong place: a raw score of 0 is a probability of 0.5, so every
example scored between 0 and 0.5 is counted as a negative, and the accuracy computed
from those predictions is wrong without any error. The reverse, ``probs > 0`` on a
sigmoid or softmax output, is True for every example: probabilities are never below 0.

Found after a cell that completed, from its source (``cell_reading``, parsed once per
source) and what its names hold: a top-level ``x > t`` / ``x >= t`` / ``t < x`` /
``tf.greater(x, t)`` with a constant ``0 <= t < 1``, or ``tf.round(x)`` / ``np.round(x)``,
where ``x`` is a name not bound again later in the cell, holding a float tensor,
variable or array. Only a model's output is told: ``x`` was last assigned (in the cell,
else in an earlier cell of the history ``In``) from a model or layer call, ``predict``
or a matrix product; values made any other way (``np.random.rand(n) > 0.8`` when
synthesising data) are data, whatever their range, and stay silent. Then:

- a cut in (0, 1) or a round is told when ``x`` has a value below 0 (read as its minimum
  and maximum of at most a million values, never shown; values never negative but above 1
  are distances, counts or ReLU outputs, not logits), or when the model
  ends with no activation and its compiled loss has ``from_logits=True`` (raw scores,
  whatever the range of these few);
- a cut at 0 is told when the model's last layer has a sigmoid or softmax activation
  (``loss_agreement.model_ending``: Keras's stored layers, nothing run).

The fix keeps the value's kind: the same comparison at the score whose sigmoid is ``t``
(``logits > 0.0`` for 0.5), or for a tensor ``tf.sigmoid(logits) > 0.5``; a round of
the sigmoid (``tf.round(tf.sigmoid(scores))``, ``np.round(1 / (1 + np.exp(-scores)))``);
for probabilities cut at 0, the cut at 0.5 (sigmoid) or the class of the highest
probability (``np.argmax(probs, axis=-1)``, softmax over several units).
The same cut at 0 is told, from the source alone, where the cell squashes the value
itself: ``probs = tf.sigmoid(h @ w + b)`` (or ``softmax``, any module's spelling) then
``probs[:, 0] > 0.0`` in the same scope, a ``def`` body too (its locals are gone after the
cell, and a function that thresholds is as wrong as a top-level line).
Cost: nothing for a cell without a threshold; the origin of a threshold's operand is one
history scan (the newest cell assigning its name, parsed once) only for a candidate.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    unwrap,
    value_at,
    value_kind_at,
    value_range,
)
from jupyterlab_tfcoach.monitor.syntax import (
    function_scopes,
    held_at,
    history_assignments,
    parsed_source,
    scope_nodes,
    source_segment,
)
from jupyterlab_tfcoach.monitor.training.loss_agreement import model_ending

SECTION = "from-logits"
MAX_NOTES = 2
HISTORY_CELLS = 30  # earlier cells searched for the operand's assignment
HISTORY_CHARS = 100_000
PROBABILITY_ACTIVATIONS = ("sigmoid", "softmax")
_OPERATORS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}
_THRESHOLD_CALLS = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<="}
_ROUND_CALLS = frozenset({"round", "rint"})
# Calls of a model's whose result is its output; calls whose result is a layer's raw output.
_PREDICT_CALLS = frozenset({"predict", "predict_on_batch", "predict_step"})
_PRODUCT_CALLS = frozenset({"matmul", "dense"})


@dataclass(frozen=True)
class Threshold:
    """``x > t`` or a round of ``x``, as written."""

    node: ast.AST
    text: str
    operand: ast.expr  # as written: ``logits``, ``logits.numpy()``
    operand_text: str
    cut: float
    line: int
    # For a comparison: ``{0}`` for the operand, ``{1}`` for the cut, operator between.
    template: str | None
    round_module: str | None  # ``tf``, ``np`` for a round


def _cut(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = float(node.value)
        if 0.0 < value < 1.0:
            return value
    return None


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 0


def _threshold(code: CellCode, node: ast.AST) -> Threshold | None:
    operand: ast.expr | None = None
    cut: float | None = None
    template: str | None = None
    round_module: str | None = None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        symbol = _OPERATORS.get(type(node.ops[0]))
        left, right = node.left, node.comparators[0]
        if symbol is not None and _cut(right) is not None:
            operand, cut, template = left, _cut(right), "{0} " + symbol + " {1}"
        elif symbol is not None and _cut(left) is not None:
            operand, cut, template = right, _cut(left), "{1} " + symbol + " {0}"
        elif symbol in (">", ">=") and _zero(right):  # ``probs > 0``: always True
            operand, cut, template = left, 0.0, "{0} " + symbol + " {1}"
        elif symbol in ("<", "<=") and _zero(left):
            operand, cut, template = right, 0.0, "{1} " + symbol + " {0}"
    elif isinstance(node, ast.Call) and len(node.args) >= 1 and not node.keywords:
        name = call_name(node)
        func = node.func
        if name in _THRESHOLD_CALLS and len(node.args) == 2 and _cut(node.args[1]) is not None:
            operand, cut = node.args[0], _cut(node.args[1])
            template = "{0} " + _THRESHOLD_CALLS[name] + " {1}"
        elif name in _ROUND_CALLS and len(node.args) == 1 and isinstance(func, ast.Attribute):
            round_module = code.segment(func.value)
            operand, cut = node.args[0], 0.5
    if operand is None or cut is None or reference_path(unwrap(operand, reshapes=True)) is None:
        return None
    text, operand_text = code.segment(node), code.segment(operand)
    if text is None or operand_text is None:
        return None
    line = getattr(node, "lineno", 0)
    return Threshold(node, text, operand, operand_text, cut, line, template, round_module)


@dataclass(frozen=True)
class ScoreSource:
    """Where a thresholded value came from: a model's output or a matrix product."""

    written: str  # the assignment's value as written: ``clf.predict(feats)``
    model: str | None  # the model as written (``clf``), None for a product
    activation: str | None  # its last layer's activation, when Keras stores it
    units: int | None
    from_logits: bool  # its compiled loss takes raw scores


def _assigned_value(code: CellCode, name: str, line: int, namespace: dict[str, Any]) -> Any:
    """(value, its source) of the last ``name = ...`` before ``line`` in the cell, else of
    the newest top-level one in an earlier cell; None when neither."""
    value = code.assignment_before(name, line)
    if value is not None:
        return value, code.source
    for statement, source in history_assignments(name, namespace, HISTORY_CELLS, HISTORY_CHARS):
        if source != code.source:  # the cell itself: read above
            return statement.value, source
    return None


def score_source(code: CellCode, found: Threshold, namespace: dict[str, Any]) -> ScoreSource | None:
    """What ``x`` was assigned from, when it is a model's output: a model or layer call,
    ``predict``, a matrix product (a bias added or not); None for anything else (data)."""
    held = unwrap(found.operand, reshapes=True)
    if not isinstance(held, ast.Name):
        return None
    assigned = _assigned_value(code, held.id, found.line, namespace)
    if assigned is None:
        return None
    value, source = assigned
    written = " ".join((source_segment(source, value) or ast.unparse(value)).split())
    while isinstance(value, ast.Subscript):  # ``net(x)[:, 0]``
        value = value.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        value = value.left
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult):
        return ScoreSource(written, None, None, None, False)
    if not isinstance(value, ast.Call):
        return None
    name = call_name(value)
    func = value.func
    if name in _PREDICT_CALLS and isinstance(func, ast.Attribute):
        model_node: ast.AST = func.value
    elif value_kind_at(func, namespace) in ("model", "layer"):
        model_node = func
    elif name in _PRODUCT_CALLS:
        return ScoreSource(written, None, None, None, False)
    else:
        return None
    model_text = " ".join((source_segment(source, model_node) or "").split()) or None
    held_model, model = held_at(reference_path(model_node), namespace)
    ending = model_ending(model) if held_model else None
    if ending is None:
        return ScoreSource(written, model_text, None, None, False)
    activation, units, loss = ending
    return ScoreSource(written, model_text, activation, units, bool(loss and loss[1]))


def _logit(cut: float) -> str:
    """The raw score whose sigmoid is ``cut``, as code."""
    score = math.log(cut / (1.0 - cut))
    return "0.0" if abs(score) < 1e-12 else f"{score:.4g}"


def fixes(found: Threshold, kind: str) -> tuple[str, str | None]:
    """The threshold on raw scores, and (for a tensor) on their sigmoid."""
    operand = found.operand_text
    if found.round_module is not None:
        module = found.round_module
        if module.split(".")[0] in ("np", "numpy"):
            return f"{module}.round(1 / (1 + {module}.exp(-{operand})))", None
        return f"{module}.round(tf.sigmoid({operand}))", None
    assert found.template is not None
    cut_text = f"{found.cut:g}"
    on_scores = found.template.format(operand, _logit(found.cut))
    if kind == "array":
        return on_scores, None
    return on_scores, found.template.format(f"tf.sigmoid({operand})", cut_text)


def _candidates(code: CellCode) -> list[Threshold]:
    """The cell's thresholds (source only, kept with the parsed cell)."""
    found = code.memo.get("thresholds")
    if found is None:
        # Only a comparison or a call can be a threshold: the other nodes are not asked.
        found = [
            t
            for t in (
                _threshold(code, node)
                for node in code.nodes
                if isinstance(node, ast.Compare | ast.Call)
            )
            if t is not None
        ]
        code.memo["thresholds"] = found
    return found


def threshold_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    told: set[str] = set()
    for found in _candidates(code):
        if found.text in told:
            continue
        held = unwrap(found.operand, reshapes=True)
        path = reference_path(held)
        if path is None or code.rebound_after(path, found.line):
            continue
        held_text = code.segment(held) or found.operand_text
        operand = value_at(held, namespace, held_text)
        if operand is None:
            continue
        source = score_source(code, found, namespace)
        if source is None:
            continue  # not a model's output: data cut at a value
        # ``logits.numpy() > 0.5`` is NumPy code: its fix stays NumPy code.
        kind = operand.kind if held is found.operand else "array"
        if found.cut == 0.0:
            if source.activation not in PROBABILITY_ACTIVATIONS or found.round_module:
                continue
            text = _probabilities_text(found, held_text, operand.description, source, kind)
        else:
            span = value_range(operand)
            # Raw scores of a layer without an activation take both signs; values that are
            # never negative but exceed 1 are distances, counts or ReLU outputs, not logits,
            # and a cut at 0 would make no sense for them.
            outside = span is not None and span[0] < 0.0
            raw = source.activation == "linear" and source.from_logits
            if not (outside or raw) or source.activation in PROBABILITY_ACTIVATIONS:
                continue
            if outside and span is not None:
                low, high = span
                has = (
                    "values below 0 and above 1"
                    if low < 0.0 and high > 1.0
                    else ("values below 0" if low < 0.0 else "values above 1")
                )
                why = f"has {has}: raw scores (logits) from a layer without a sigmoid"
            else:
                why = (
                    f"comes from `{source.written}`, and `{source.model}` ends with no "
                    "activation and is compiled with from_logits=True: raw scores (logits), "
                    "any real number"
                )
            text = _text(found, held_text, operand.description, why, kind)
        told.add(found.text)
        notes.append(reports.note(text, SECTION))
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _probabilities_text(
    found: Threshold, held: str, described: str, source: ScoreSource, kind: str
) -> str:
    assert found.template is not None
    operand = found.operand_text
    if source.activation == "softmax" and (source.units or 0) > 1:
        module = "np" if kind == "array" else "tf"
        fixed = f"{module}.argmax({operand}, axis=-1)"
        fix = (
            f"A softmax over {source.units} units gives one probability per class: the "
            f"predicted class is the one with the highest probability, `{fixed}`."
        )
    else:
        fixed = found.template.format(operand, "0.5")
        fix = f"Cut the probabilities at 0.5: `{fixed}`."
    return (
        f"`{found.text}` (line {found.line} of this cell) cuts `{operand}` at 0 as if it "
        f"held raw scores, but `{held}`, {described}, comes from `{source.written}`, and "
        f"`{source.model}` ends with activation {source.activation!r}: probabilities, "
        f"never below 0, so `{found.text}` is True for every example and the predictions "
        f"and any accuracy computed from them are wrong, without any error. {fix}"
    )


def _text(found: Threshold, held: str, described: str, why: str, kind: str) -> str:
    on_scores, on_probabilities = fixes(found, kind)
    operand = found.operand_text
    if found.round_module is not None:
        what = f"rounds `{operand}` to 0 or 1 as if it held probabilities"
        where_wrong = "a raw score of 0.3 rounds to 0 while its probability is 0.57"
        fix = f"Round their probabilities instead: `{on_scores}`."
    else:
        what = f"cuts `{operand}` at {found.cut:g} as if it held probabilities"
        where_wrong = (
            f"a raw score of 0 is a probability of 0.5, and a cut at {found.cut:g} "
            "is in the wrong place"
        )
        fix = f"Cut the raw scores where the probability is {found.cut:g}: `{on_scores}`"
        if on_probabilities is not None:
            fix += f", or turn them into probabilities first: `{on_probabilities}`"
        fix += "."
    return (
        f"`{found.text}` (line {found.line} of this cell) {what}, but `{held}`, "
        f"{described}, {why}. For such scores {where_wrong}: the predictions and any "
        f"accuracy computed from them are wrong, without any error. {fix}"
    )


# ------------------------------------------------- a cut at 0 of a sigmoid written in code
# ``probs = tf.sigmoid(h @ w + b)`` then ``probs > 0``: the value's origin is a squashing
# call the learner wrote, in any scope of the cell (a ``def`` too, whose locals are gone
# after the cell: the source alone tells it, no value is read).
_SQUASHES = frozenset({"sigmoid", "softmax"})


@dataclass(frozen=True)
class _SquashedCut:
    node: ast.Compare
    text: str
    operand_text: str
    squash: str  # the squashing call as written: ``tf.sigmoid(h_end @ W_out + b_out)``
    kind: str  # ``sigmoid`` or ``softmax``
    held: str  # the name holding it, or the call itself
    scope: str | None  # the function it is in


def _squash_of(node: ast.AST) -> ast.Call | None:
    node = unwrap(node)
    if isinstance(node, ast.Call) and call_name(node) in _SQUASHES and node.args:
        return node
    return None


def _cut_at_zero(node: ast.AST) -> ast.expr | None:
    """``x`` of ``x > 0``, ``x >= 0.0``, ``0 < x``, ``0.0 <= x``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None
    symbol = _OPERATORS.get(type(node.ops[0]))
    if symbol in (">", ">=") and _zero(node.comparators[0]):
        return node.left
    if symbol in ("<", "<=") and _zero(node.left):
        return node.comparators[0]
    return None


def _squashed_cuts(code: CellCode) -> list[_SquashedCut]:
    found: list[_SquashedCut] = []
    tree = parsed_source(code.source)
    if tree is None:
        return found
    for scope in function_scopes(tree):
        name = getattr(scope, "name", None)
        # The last squashing call assigned to each name so far, in source order.
        squashed: dict[str, ast.Call] = {}
        for node in scope_nodes(scope):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    call = _squash_of(node.value)
                    if call is not None:
                        squashed[target.id] = call
                    else:
                        squashed.pop(target.id, None)
                continue
            operand = _cut_at_zero(node)
            if operand is None:
                continue
            held = unwrap(operand, reshapes=True)
            while isinstance(held, ast.Subscript):
                held = held.value
            call = _squash_of(held)
            held_text = code.segment(held)
            if call is None and isinstance(held, ast.Name):
                call = squashed.get(held.id)
            text, operand_text = code.segment(node), code.segment(operand)
            squash = code.segment(call) if call is not None else None
            if call is None or None in (text, operand_text, squash, held_text):
                continue
            kind = call_name(call) or "sigmoid"
            assert isinstance(node, ast.Compare)
            found.append(
                _SquashedCut(node, text, operand_text, squash, kind, held_text, name)  # type: ignore[arg-type]
            )
    return found


def squashed_cut_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    """Notes for probabilities the cell's own sigmoid or softmax made, cut at 0."""
    # A cell that writes no sigmoid or softmax has none of these: two substring tests.
    if "sigmoid" not in code.source and "softmax" not in code.source:
        return []
    found = code.memo.get("squashed_cuts")
    if found is None:
        found = code.memo["squashed_cuts"] = _squashed_cuts(code)
    notes: list[Note] = []
    told: set[str] = set()
    for cut in found:
        if cut.text in told:
            continue
        told.add(cut.text)
        where = f"line {cut.node.lineno} of this cell"
        if cut.scope is not None:
            where += f", in `{cut.scope}`"
        origin = (
            f"`{cut.held}` comes from `{cut.squash}`"
            if cut.held != cut.squash
            else f"`{cut.squash}` is"
        )
        if cut.kind == "softmax":
            module = "tf" if cut.squash.startswith("tf.") else "keras.ops"
            fix = (
                "A softmax gives one probability per class: the predicted class is the one "
                f"with the highest probability, `{module}.argmax({cut.held}, axis=-1)`."
            )
        else:
            fixed = _at_one_half(cut)
            fix = f"Cut the probabilities at 0.5: `{fixed}`."
        text = (
            f"`{cut.text}` ({where}) cuts `{cut.operand_text}` at 0 as if it held raw "
            f"scores, but {origin}: probabilities, never below 0, so `{cut.text}` is True "
            "for every example and the predictions and any accuracy computed from them are "
            f"wrong, without any error. {fix}"
        )
        notes.append(reports.note(text, SECTION))
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _at_one_half(cut: _SquashedCut) -> str:
    """The comparison as written, its 0 replaced by 0.5."""
    node = cut.node
    symbol = _OPERATORS[type(node.ops[0])]
    if _zero(node.comparators[0]):
        return f"{cut.operand_text} {symbol} 0.5"
    return f"0.5 {symbol} {cut.operand_text}"
