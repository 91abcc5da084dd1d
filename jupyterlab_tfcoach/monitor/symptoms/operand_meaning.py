"""An operand that contradicts what the called API's parameter means: probabilities where
the parameter reads logits, raw scores where it reads probabilities.

``tf.random.categorical(probs, 1)`` reads its first argument as logits (log-scores): given
a softmax output it takes a second softmax of it, and a policy whose probabilities are 0.9
and 0.1 is sampled as 0.69 and 0.31. ``keras.losses.KLDivergence()(p, logits / T)`` reads
both arguments as distributions: raw scores are clipped into [1e-7, 1] and the loss is not
the divergence of anything. Both run and train, worse; nothing raises.

One table (``_PARAMETERS``) says what a parameter means: the first argument of
``categorical`` (``tf.random``, ``keras.random``) and any ``logits=`` keyword mean logits;
both arguments of a KL divergence (``keras.losses.KLDivergence`` objects, stored or
written inline, and the ``kl_divergence``/``kld`` functions) and any ``probs=`` keyword
mean probabilities; the prediction of a Keras cross-entropy told ``from_logits=True`` means
logits (only a TensorFlow softmax or sigmoid in a cell's eager code says otherwise: traced,
Keras recovers the scores behind one and warns; a model ending in one is
``squashed_logits``'s, and scores given at ``from_logits=False`` are
``logits_losses``/``logits_parameters``'s; a divided softmax reaching a sampler is
``temperature_sampling``'s).

What the operand holds is read in each scope of the cell (top level, each ``def`` and
method), following the scope's own assignments: a ``softmax``/``sigmoid`` call means
probabilities; a name or parameter named for scores (``logits``, ``scores``), a
``log_softmax``, a matmul or a scaled one of these means raw scores; at the top level, the
value the name holds after the cell is measured too (every row in [0, 1] and summing to 1:
probabilities; a value outside [0, 1]: scores). A loss object called as ``self.attr`` in a
method is read from an instance of that class in the namespace. ``model.compile(loss=<a KL
divergence>)`` reads the model's output: told when its last layer has no activation
(``loss_agreement.model_ending``). The note names the call,
the operand, the evidence and the fix in the learner's names (the softmax's own argument,
or ``tf.math.log(probs)``; ``tf.nn.softmax(...)`` around the scores).

After a completed cell holding ``categorical``, ``logits``, ``probs``, ``softmax``,
``sigmoid`` or a KL name (a regular expression search otherwise).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import SCOPE_NODES, call_name, parsed_source, scope_nodes
from jupyterlab_tfcoach.monitor.variables.probability_losses import (
    _LOSS_CLASSES,
    _LOSS_FUNCTIONS,
    _loss_object_class,
    _stored_from_logits,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "from-logits"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
MAX_VALUES = 1_000_000
_ROW_SUM_TOLERANCE = 1e-3
# A parameter with a meaning, or an operand named for one (a loss object made in an earlier
# cell is called here by the learner's own name, its operand named ``..._logits``).
_TRIGGER = word_gate(
    r"categorical|logits|probs|softmax|sigmoid|KLDivergence|kl_divergence|kullback|\bkld\b|\bKLD\b"
)
LOGITS = "logits"
PROBS = "probabilities"
# A call's last name -> (the positions of the arguments with a meaning, that meaning).
_PARAMETERS: dict[str, tuple[tuple[int, ...], str]] = {
    "categorical": ((0,), LOGITS),
    "stateless_categorical": ((0,), LOGITS),
    "softmax_cross_entropy_with_logits": ((1,), LOGITS),
    "sparse_softmax_cross_entropy_with_logits": ((1,), LOGITS),
    "sigmoid_cross_entropy_with_logits": ((1,), LOGITS),
    "kl_divergence": ((0, 1), PROBS),
    "kld": ((0, 1), PROBS),
    "KLD": ((0, 1), PROBS),
    "KLDivergence": ((0, 1), PROBS),
    # A Keras cross-entropy told ``from_logits=True`` (object, inline class or function).
    "from_logits": ((1,), LOGITS),
}
# The APIs whose operand's measured values decide too: a softmax model's output given to the
# ``*_with_logits`` ops is ``squashed_logits``'s, told from the model.
_MEASURED = frozenset({"categorical", "stateless_categorical", "kl_divergence", "kld", "KLD"})
_MEASURED_OBJECTS = frozenset({"KLDivergence"})
# Keywords that mean the same wherever they appear.
_KEYWORDS = {"logits": LOGITS, "probs": PROBS}
_PROBABILITY_CALLS = frozenset({"softmax", "sigmoid"})
_SCORE_CALLS = frozenset({"log_softmax", "matmul", "tensordot", "einsum"})
_SCORE_WORDS = ("logit", "score")
_FOLLOW = 4


def _tensorflow_alias(namespace: Mapping[str, Any]) -> str | None:
    module = sys.modules.get("tensorflow")
    if module is None:
        return None
    for name in ("tf", "tensorflow"):
        if namespace.get(name) is module:
            return name
    return None


class _Scope:
    """One scope's statements and its ``name = value`` assignments, in line order."""

    def __init__(
        self, node: ast.AST, function: ast.FunctionDef | None, owner: ast.ClassDef | None = None
    ) -> None:
        self.function = function
        self.owner = owner
        self.nodes = scope_nodes(node)
        self.calls = [child for child in self.nodes if isinstance(child, ast.Call)]
        self.assigned: dict[str, list[tuple[int, ast.expr]]] = {}
        for child in self.nodes:
            if isinstance(child, ast.Assign) and len(child.targets) == 1:
                target = child.targets[0]
                if isinstance(target, ast.Name):
                    self.assigned.setdefault(target.id, []).append((child.lineno, child.value))
        self.parameters = (
            {a.arg for a in function.args.args + function.args.kwonlyargs}
            if function is not None
            else set()
        )

    def before(self, name: str, line: int) -> ast.expr | None:
        found = None
        for at, value in self.assigned.get(name, ()):
            if at < line:
                found = value
        return found


def _scopes(tree: ast.Module) -> list[tuple[_Scope, ast.ClassDef | None]]:
    found: list[tuple[_Scope, ast.ClassDef | None]] = [(_Scope(tree, None), None)]

    def visit(node: ast.AST, owner: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((_Scope(child, child, owner), owner))  # type: ignore[arg-type]
                visit(child, None)
            elif isinstance(child, ast.ClassDef):
                visit(child, child)
            elif not isinstance(child, SCOPE_NODES):
                visit(child, owner)

    visit(tree, None)
    return found


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:
        return "?"


def _written(
    node: ast.AST, scope: _Scope, line: int, namespace: Mapping[str, Any], measure: bool
) -> tuple[str, str, ast.AST] | None:
    """What the operand holds, read from the scope: (kind, evidence, the node that
    decided), or None when nothing says."""
    for _ in range(_FOLLOW):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return LOGITS, f"`{_text(node)}`, a matrix product (raw scores)", node
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            # A bias or a small constant added keeps what the value is.
            node = node.left
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):
            # A scaled value keeps its kind for scores (``logits / T``); a scaled softmax is
            # a temperature on probabilities (``temperature_sampling``): not read here.
            found = _written(node.left, scope, line, namespace, measure)
            return None if found is None or found[0] == PROBS else found
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name in _PROBABILITY_CALLS:
                return PROBS, f"`{_text(node)}`", node
            if name in _SCORE_CALLS:
                return LOGITS, f"`{_text(node)}`", node
            ending = _model_ending(node, scope, namespace)
            if ending == "unknown":
                return None
            if ending in _RAW_ENDINGS:
                evidence = "a call of a model whose last layer has no activation (raw scores)"
                return LOGITS, f"`{_text(node)}`, {evidence}", node
            if ending in _PROBABILITY_CALLS and measure:
                evidence = f"a call of a model whose last layer applies a {ending}"
                return PROBS, f"`{_text(node)}`, {evidence}", node
            return None
        if isinstance(node, ast.Name):
            value = scope.before(node.id, line)
            if value is not None:
                found = _written(value, scope, line, namespace, measure)
                if found is not None:
                    kind, evidence, decided = found
                    if not evidence.startswith(f"`{node.id}` "):
                        evidence = (
                            f"`{node.id}` is {evidence} (line {_line_of(scope, node.id, line)})"
                        )
                    return kind, evidence, decided
            if scope.function is None:
                # The value after the cell is the one the call saw only when nothing
                # binds the name again after it.
                later = any(at >= line for at, _ in scope.assigned.get(node.id, ()))
                if not measure or later:
                    return None
                measured = _measured(namespace.get(node.id))
                if measured is not None:
                    return measured[1], f"`{node.id}`: {measured[0]}", node
                return None
            if node.id in scope.parameters:
                if any(word in node.id.lower() for word in _SCORE_WORDS):
                    return LOGITS, f"`{node.id}`, a parameter named for raw scores", node
            return None
        return None
    return None


def _line_of(scope: _Scope, name: str, line: int) -> int:
    found = 0
    for at, _ in scope.assigned.get(name, ()):
        if at < line:
            found = at
    return found


def _measured(value: Any) -> tuple[str, str] | None:
    """The evidence and what a float tensor's or array's values are: probabilities (rows
    in [0, 1] summing to 1) or scores (a value outside [0, 1]); None for anything else."""

    numpy = sys.modules.get("numpy")
    if numpy is None or value is None:
        return None
    try:
        if type(value) is not numpy.ndarray:
            module = type(value).__module__ or ""
            if not module.startswith(("tensorflow", "keras")):
                return None
            shape = getattr(value, "shape", None)
            if shape is None or any(d is None for d in tuple(shape)):
                return None
            size = 1
            for dim in tuple(shape):
                size *= int(dim)
            if size == 0 or size > MAX_VALUES:
                return None
            value = value.numpy()
        if type(value) is not numpy.ndarray or value.dtype.kind != "f" or value.size == 0:
            return None
        if value.size > MAX_VALUES:
            return None
        low, high = float(value.min()), float(value.max())
        if low != low or high != high:
            return None
        if low < 0.0 or high > 1.0:
            return f"its values run from {low:.3g} to {high:.3g}, outside [0, 1]", LOGITS
        if value.ndim >= 1 and value.shape[-1] > 1:
            sums = value.sum(axis=-1)
            if float(abs(sums - 1.0).max()) <= _ROW_SUM_TOLERANCE:
                return "every row lies in [0, 1] and sums to 1", PROBS
    except Exception:
        return None
    return None


def _unrecovered(decided: ast.AST, scope: _Scope) -> bool:
    """Whether a Keras cross-entropy told ``from_logits=True`` really reads this softmax or
    sigmoid output as scores. Traced (in ``fit`` or a ``tf.function``), Keras finds the
    scores behind a softmax or sigmoid op itself and only warns; and ``keras.ops``
    activations keep the scores on their result. Only a TensorFlow activation in a cell's
    own eager code is read twice."""
    if scope.function is not None or not isinstance(decided, ast.Call):
        return False
    func = decided.func
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in ("tf", "tensorflow")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _is_kl_object(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ == "KLDivergence" and (kind.__module__ or "").startswith("keras")


_RAW_ENDINGS = (None, "linear")


def _model_ending(call: ast.Call, scope: _Scope, namespace: Mapping[str, Any]) -> Any:
    """The last activation of the model a call calls (a global name or ``self.attr``), as
    Keras stores it: None for no activation; ``"unknown"`` when not a model."""
    func = call.func
    model: Any = None
    if isinstance(func, ast.Name) and func.id not in scope.assigned:
        if func.id in scope.parameters:
            return "unknown"
        model = namespace.get(func.id)
    elif isinstance(func, ast.Attribute):
        model = _self_attribute(call, scope.owner, namespace)
    if model is None:
        return "unknown"
    try:
        from jupyterlab_tfcoach.monitor.training.loss_agreement import model_ending

        ending = model_ending(model)
    except Exception:
        return "unknown"
    if ending is None:
        return "unknown"
    return ending[0]


def _self_attribute(
    call: ast.Call, owner: ast.ClassDef | None, namespace: Mapping[str, Any]
) -> Any:
    """What ``self.attr`` holds on an instance of the method's class in the namespace."""
    func = call.func
    if owner is None or not isinstance(func, ast.Attribute):
        return None
    if not (isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    cls = namespace.get(owner.name)
    if not isinstance(cls, type):
        return None
    instances = _INSTANCES.get(id(cls))
    if instances is None:
        instances = _INSTANCES[id(cls)] = [
            v for v in list(namespace.values()) if isinstance(v, cls)
        ]
    for value in instances:
        stored = instance_dict(value) or {}
        if func.attr in stored:
            return stored[func.attr]
    return None


# The namespace's instances of each class a cell defines, read once per cell.
_INSTANCES: dict[int, list[Any]] = {}


def _meanings(
    call: ast.Call, owner: ast.ClassDef | None, namespace: Mapping[str, Any]
) -> tuple[list[tuple[ast.expr, str, str]], str | None]:
    """(operand, meaning, the parameter as told) for each argument of ``call`` whose
    parameter the table knows, and the table's key for the call."""
    found: list[tuple[ast.expr, str, str]] = []
    name = call_name(call)
    api: str | None = None
    if name in _PARAMETERS and name != "KLDivergence":
        api = name
    else:
        func = call.func
        held: Any = None
        if isinstance(func, ast.Name):
            held = namespace.get(func.id)
        elif isinstance(func, ast.Attribute):
            held = _self_attribute(call, owner, namespace)
        elif isinstance(func, ast.Call) and call_name(func) == "KLDivergence":
            api = "KLDivergence"
        elif isinstance(func, ast.Call) and call_name(func) in _LOSS_CLASSES:
            if _true(_keyword(func, "from_logits")):
                api = "from_logits"
        if held is not None and _is_kl_object(held):
            api = "KLDivergence"
        elif held is not None and _loss_object_class(held) is not None:
            if _stored_from_logits(held) is True:
                api = "from_logits"
    if name in _LOSS_FUNCTIONS and _true(_keyword(call, "from_logits")):
        api = "from_logits"
    if api is not None:
        positions, meaning = _PARAMETERS[api]
        for position in positions:
            if position < len(call.args):
                label = "its first argument" if position == 0 else "its second argument"
                found.append((call.args[position], meaning, label))
    for keyword in call.keywords:
        if keyword.arg in _KEYWORDS:
            found.append((keyword.value, _KEYWORDS[keyword.arg], f"`{keyword.arg}=`"))
        elif api == "KLDivergence" and keyword.arg in ("y_true", "y_pred"):
            found.append((keyword.value, PROBS, f"`{keyword.arg}=`"))
    return found, api


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or _TRIGGER.search(source) is None:
        return []
    scopes = _cell_scopes(source)
    if not scopes:
        return []
    try:
        return _notes(scopes, namespace)
    finally:
        # Only while the cell is read: the monitor keeps no reference to user objects.
        _INSTANCES.clear()


# The scopes of the last few sources: a cell run again is not walked again.
_SCOPES: dict[str, list[tuple[_Scope, ast.ClassDef | None]]] = {}
_CACHED_SOURCES = 16


def _cell_scopes(source: str) -> list[tuple[_Scope, ast.ClassDef | None]]:
    """The source's scopes, parsed once (none for a source that does not parse)."""
    found = _SCOPES.get(source)
    if found is None:
        if len(_SCOPES) >= _CACHED_SOURCES:
            _SCOPES.pop(next(iter(_SCOPES)))
        tree = parsed_source(source)
        found = _SCOPES[source] = _scopes(tree) if tree is not None else []
    return found


def _notes(
    scopes: list[tuple[_Scope, ast.ClassDef | None]], namespace: Mapping[str, Any]
) -> list[Note]:
    told: list[Note] = []
    for scope, owner in scopes:
        for node in scope.calls:
            operands, api = _meanings(node, owner, namespace)
            measure = api in _MEASURED or api in _MEASURED_OBJECTS
            for operand, meaning, label in operands:
                read = _written(operand, scope, node.lineno, namespace, measure)
                if read is None or read[0] == meaning:
                    continue
                if api == "from_logits" and not _unrecovered(read[2], scope):
                    continue
                told.append(
                    reports.note(
                        _note(node, operand, meaning, label, read, scope, namespace), SECTION
                    )
                )
                break
            if len(told) >= MAX_NOTES:
                return told
            if scope.function is None and call_name(node) == "compile":
                text = _compiled_on_scores(node, namespace)
                if text is not None:
                    told.append(reports.note(text, SECTION))
    return told[:MAX_NOTES]


_KL_NAMES = frozenset({"kl_divergence", "kld", "KLD", "kullback_leibler_divergence"})


def _is_kl(node: ast.expr, namespace: Mapping[str, Any]) -> bool:
    """Whether a ``compile`` loss as written is a KL divergence: its string, function,
    class or an object of it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in _KL_NAMES or node.value == "KLDivergence"
    if isinstance(node, ast.Call):
        return call_name(node) == "KLDivergence"
    if isinstance(node, ast.Attribute):
        return node.attr in _KL_NAMES
    if isinstance(node, ast.Name):
        return node.id in _KL_NAMES or _is_kl_object(namespace.get(node.id))
    return False


def _compiled_on_scores(call: ast.Call, namespace: Mapping[str, Any]) -> str | None:
    """``model.compile(loss=<a KL divergence>)`` on a model whose last layer has no
    activation: ``fit`` gives the divergence raw scores as its predictions."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    loss = _keyword(call, "loss")
    if loss is None and len(call.args) > 1:
        loss = call.args[1]
    if loss is None or not _is_kl(loss, namespace):
        return None
    model = namespace.get(func.value.id)
    try:
        from jupyterlab_tfcoach.monitor.training.loss_agreement import model_ending

        ending = model_ending(model)
    except Exception:
        return None
    if ending is None or ending[0] not in _RAW_ENDINGS:
        return None
    name = func.value.id
    ops = "keras.ops" if "keras" in namespace else None
    softmax = f"{ops}.softmax" if ops else f"{_tensorflow_alias(namespace)}.nn.softmax"
    wrapped = f"lambda target, scores: keras.losses.kl_divergence(target, {softmax}(scores))"
    fixed = ast.unparse(call)
    copy = ast.parse(fixed, mode="eval").body
    if isinstance(copy, ast.Call):
        copy.keywords = [k for k in copy.keywords if k.arg != "loss"]
        copy.args = copy.args[:1]
        copy.keywords.append(ast.keyword(arg="loss", value=ast.Name(id="__loss__")))
        fixed = ast.unparse(copy).replace("__loss__", wrapped)
    return (
        f"`{_text(call)}` (line {call.lineno} of this cell): a KL divergence reads the "
        f"model's predictions as probabilities (each row non-negative, summing to 1), but "
        f"the last layer of `{name}` has no activation: `fit` hands it raw scores. They are "
        "clipped into [1e-7, 1] instead of being normalised, so the loss is not the "
        "divergence of two distributions and the model learns the wrong thing. Nothing "
        f'raises. Give its last layer `activation="softmax"`, or compile the divergence '
        f"of its softmax: `{fixed}`."
    )


def _note(
    call: ast.Call,
    operand: ast.expr,
    meaning: str,
    label: str,
    read: tuple[str, str, ast.AST],
    scope: _Scope,
    namespace: Mapping[str, Any],
) -> str:
    _, evidence, decided = read
    where = f"line {call.lineno} of this cell"
    if scope.function is not None:
        where = f"line {call.lineno}, in `{scope.function.name}`"
    written = _text(call)
    what = _text(operand)
    api = _text(call.func)
    tf = _tensorflow_alias(namespace)
    if evidence == f"`{what}`":
        evidence = (
            f"the output of `{_text(decided.func) if isinstance(decided, ast.Call) else what}`"
        )
    sampling = "categorical" in (call_name(call) or "")
    if meaning == LOGITS:
        head = (
            f"`{written}` ({where}): `{api}` reads {label} as logits (raw log-scores), but "
            f"`{what}` holds probabilities: {evidence}."
        )
        why = (
            " Probabilities read as log-scores go through a second softmax: the choice is "
            "pulled toward uniform (probabilities 0.9 and 0.1 are used as 0.69 and 0.31), so "
            "what the model prefers barely shows. Nothing raises."
        )
        if not sampling:
            why = (
                " It applies its own softmax or sigmoid to them a second time: the "
                "loss can never come near 0 and its gradients shrink. Nothing raises."
            )
        squash = call_name(decided) if isinstance(decided, ast.Call) else None
        if squash in _PROBABILITY_CALLS and decided.args:  # type: ignore[union-attr]
            scores = _text(decided.args[0])  # type: ignore[union-attr]
            fix = f"`{_replaced(call, operand, scores)}` (the scores the {squash} was given)"
            if tf is not None and sampling and squash == "softmax":
                fix += f", or `{_replaced(call, operand, f'{tf}.math.log({what})')}`"
        else:
            log = f"{tf}.math.log" if tf is not None else "keras.ops.log"
            fix = f"`{_replaced(call, operand, f'{log}({what})')}`"
        return head + why + f" Give it logits: {fix}."
    kind_of = "" if "kl" in api.lower() or label.startswith("`") else " (a KL divergence)"
    head = (
        f"`{written}` ({where}): `{api}`{kind_of} reads {label} as probabilities (each row "
        f"non-negative, summing to 1), but `{what}` holds raw scores: {evidence}."
    )
    why = (
        " The scores are clipped into [1e-7, 1] instead of being normalised: negative "
        "scores all count as the same tiny probability and the rows do not sum to 1, so the "
        "value is not a divergence and its gradient teaches the wrong thing. Nothing raises."
    )
    softmax = f"{tf}.nn.softmax" if tf is not None else "keras.ops.softmax"
    fix = f"`{_replaced(call, operand, f'{softmax}({what}, axis=-1)')}`"
    return head + why + f" Give it probabilities: {fix}."


def _replaced(call: ast.Call, operand: ast.expr, text: str) -> str:
    """The call as written with ``operand`` replaced by ``text``."""
    try:
        marker = ast.Name(id="__tfcoach_operand__", ctx=ast.Load())
        copy = ast.parse(ast.unparse(call), mode="eval").body
        original = ast.dump(operand)
        for node in ast.walk(copy):
            for field_name, value in ast.iter_fields(node):
                if isinstance(value, ast.AST) and ast.dump(value) == original:
                    setattr(node, field_name, marker)
                    return ast.unparse(copy).replace("__tfcoach_operand__", text, 1)
                if isinstance(value, list):
                    for index, item in enumerate(value):
                        if isinstance(item, ast.AST) and ast.dump(item) == original:
                            value[index] = marker
                            return ast.unparse(copy).replace("__tfcoach_operand__", text, 1)
    except Exception:
        pass
    return _text(call)
