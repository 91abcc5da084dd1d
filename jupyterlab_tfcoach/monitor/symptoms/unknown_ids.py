"""Values a lookup layer never saw: most of what a ``StringLookup``/``IntegerLookup`` is
given maps to its one out-of-vocabulary id.

A lookup numbers the tokens of its vocabulary and sends everything else to the OOV index
(1 by default). Given values from another space than the one it was adapted on (positions
``0..n-1`` where the vocabulary holds raw user ids, ids converted to text from floats,
``"42.0"`` against ``"42"``, the ids of a column other than the one adapted on, users
absent from the data it learned), it raises nothing: every such value becomes the same
id, the embedding after it learns one row for all of them, and the model cannot tell the
examples apart (its accuracy stays near chance, its predictions near constant).

The symptom, after a cell that completed (a cell that calls no ``fit``/``predict``/
``evaluate`` method and no name bound to a lookup or a Keras model costs one regular
expression over its text and a type test per called name): each top-level call ``L(X)``
of a lookup layer and each ``M.fit(X, ...)``/``M.predict(X)``/``M.evaluate(X, ...)``/``M(X)`` of a
Keras model whose lookup layer reads one of its inputs directly (a functional model's
input by position or by its name in a dict, a ``Sequential`` whose first layer is the
lookup). ``X`` is a name, ``D["col"]`` (a dict or a pandas DataFrame), ``S.values`` or a
dict literal of those; what it holds (a NumPy array, pandas Series, eager tensor of at
most ``MAX_VALUES`` values, or a list) is sampled evenly at ``MAX_SAMPLE`` values, which
the layer's own table (``lookup_table``, a TensorFlow hash table: one eager ``lookup``
op, no layer call, no trace) maps; the mask token is left out. When ``MIN_SHARE`` of the
sample is unknown, the note names the layer, the input, the share and an example value
beside some of the vocabulary (exported from the table only then, at most
``MAX_VOCABULARY`` entries), and the cause when the values show it: integers all in
``[0, vocabulary size)`` (positions, not ids), float texts (``"42.0"``) whose integer
text is known, or values of the vocabulary's own kind (``'user_48'`` beside ``'user_9'``,
integers in its span) that it never saw, with the statement that cut the input by
position from another array (``train_u, test_u = u[:-n], u[-n:]``, this cell or an
earlier one: rows grouped by id put each id on one side only). Fix: for float texts, the
input as integer text (``X.astype(float).astype("int64").astype(str)``); for a split by
position, one permutation of the rows before it (in words: the arrays to permute are the
learner's); for ``fit`` on values of another space, the layer adapted on what fit is
given, then the model rebuilt (its ``Embedding`` size comes from the vocabulary);
otherwise, in words.

Silent: a lookup fed its own vocabulary, a test set with a few unseen values (under
``MIN_SHARE``), a layer with ``invert=True``, an empty table (never adapted: raises or is
told elsewhere). Cost: a cell without those words, a substring test; with them, one parse
and, per call found, a sample (a strided NumPy view) and one eager table lookup (~0.3 ms
for 1,000 values). Nothing imports TensorFlow (``sys.modules``); every failure is silent.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import NUMBERS, TEXTS, held_array
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import contained_values, instance_dict, keras_layers
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_config import ADAPT_SECTION

SECTION = ADAPT_SECTION
MAX_CELL_CHARS = 50_000
MAX_VALUES = 10_000_000
MAX_SAMPLE = 1_000
MIN_SAMPLE = 20
MIN_SHARE = 0.5
MAX_VOCABULARY = 1_000_000
MAX_LAYERS = 200
MAX_SHOWN = 3
_LOOKUPS = frozenset({"StringLookup", "IntegerLookup"})
_MODEL_CALLS = frozenset({"fit", "predict", "evaluate", "predict_on_batch", "train_on_batch"})
_FLOAT_TEXT = re.compile(r"^-?\d+\.0+$")


def _kinds(value: Any) -> set[str]:
    try:
        return {k.__name__ for k in type(value).__mro__}
    except Exception:
        return set()


def _lookup_kind(layer: Any) -> str | None:
    """``StringLookup``/``IntegerLookup`` for a Keras lookup that maps values to ids."""
    kinds = _kinds(layer)
    kind = next((k for k in ("StringLookup", "IntegerLookup") if k in kinds), None)
    if kind is None or not type(layer).__module__.startswith("keras"):
        return None
    attributes = instance_dict(layer) or {}
    if attributes.get("invert") is not False or attributes.get("output_mode") != "int":
        return None
    return kind


def _is_model(value: Any) -> bool:
    return "Model" in _kinds(value) and type(value).__module__.startswith("keras")


def _pandas(value: Any, name: str) -> bool:
    kind = type(value)
    return kind.__name__ == name and kind.__module__.startswith("pandas")


def _held(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[Any, str] | None:
    """What ``X``, ``D["col"]`` or ``S.values`` holds, and its text; None otherwise."""
    if isinstance(node, ast.Name):
        if node.id not in namespace:
            return None
        return namespace[node.id], node.id
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is str
    ):
        base = namespace.get(node.value.id)
        key = node.slice.value
        if type(base) is dict and key in base:
            return base[key], f'{node.value.id}["{key}"]'
        if _pandas(base, "DataFrame"):
            try:
                if key in base.columns:
                    return base[key], f'{node.value.id}["{key}"]'
            except Exception:
                return None
        return None
    if isinstance(node, ast.Attribute) and node.attr in ("values", "to_numpy"):
        inner = _held(node.value, namespace)
        if inner is not None and _pandas(inner[0], "Series"):
            return inner
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
        return _held(node.func, namespace)
    return None


def _sample(value: Any, kind: str) -> list[Any] | None:
    """At most ``MAX_SAMPLE`` values of ``value``, evenly spaced, as Python str or int."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if type(value) in (list, tuple):
        step = max(1, len(value) // MAX_SAMPLE)
        items = list(value[::step][:MAX_SAMPLE])
    else:
        if _pandas(value, "Series"):
            if len(value) > MAX_VALUES:
                return None
            value = value.to_numpy()
        if type(value) is not numpy.ndarray:
            value = held_array(value, MAX_VALUES // 10, NUMBERS + TEXTS)
            if value is None:
                return None
        if value.size == 0 or value.size > MAX_VALUES:
            return None
        flat = value.reshape(-1)
        step = max(1, flat.size // MAX_SAMPLE)
        items = flat[::step][:MAX_SAMPLE].tolist()
    if kind == "StringLookup":
        items = [v.decode("utf-8", "replace") if type(v) is bytes else v for v in items]
        return items if items and all(type(v) is str for v in items) else None
    return items if items and all(type(v) is int for v in items) else None


def _unknown(layer: Any, kind: str, sample: list[Any]) -> tuple[list[Any], int] | None:
    """The sampled values the layer's table does not hold, and how many were looked up
    (the mask token left out)."""
    tf = sys.modules.get("tensorflow")
    attributes = instance_dict(layer) or {}
    table = attributes.get("lookup_table")
    if tf is None or table is None or "StaticHashTable" not in _kinds(table):
        return None
    mask = attributes.get("mask_token")
    values = [v for v in sample if v != mask] if mask is not None else sample
    if len(values) < MIN_SAMPLE:
        return None
    default = attributes.get("_default_value")
    if type(default) is not int:
        return None
    dtype = "string" if kind == "StringLookup" else "int64"
    if int(table.size().numpy()) == 0:
        return None
    ids = table.lookup(tf.constant(values, dtype=dtype)).numpy().tolist()
    return [v for v, i in zip(values, ids, strict=True) if i == default], len(values)


def _vocabulary(layer: Any, kind: str) -> list[Any] | None:
    """The tokens of the layer's table (without special tokens), in id order."""
    table = (instance_dict(layer) or {}).get("lookup_table")
    try:
        if table is None or int(table.size().numpy()) > MAX_VOCABULARY:
            return None
        keys, ids = table.export()
        pairs = sorted(zip(ids.numpy().tolist(), keys.numpy().tolist(), strict=True))
    except Exception:
        return None
    tokens = [k for _, k in pairs]
    if kind == "StringLookup":
        tokens = [t.decode("utf-8", "replace") if type(t) is bytes else t for t in tokens]
    return tokens


def _direct_lookups(model: Any) -> list[tuple[Any, Any]]:
    """(lookup layer, the model input it reads) for each lookup applied to an input."""
    attributes = instance_dict(model) or {}
    if "Sequential" in _kinds(model):
        layers = [
            layer
            for layer in contained_values(attributes.get("_layers"), sequences_only=True) or []
            if "InputLayer" not in _kinds(layer)
        ]
        if layers and _lookup_kind(layers[0]) is not None:
            return [(layers[0], None)]
        return []
    inputs = contained_values(attributes.get("_inputs"), sequences_only=True) or []
    by_id = {id(i): i for i in inputs}
    found: list[tuple[Any, Any]] = []
    for layer in keras_layers(model, MAX_LAYERS)[1:]:
        if _lookup_kind(layer) is None:
            continue
        nodes = contained_values((instance_dict(layer) or {}).get("_inbound_nodes"), True)
        for node in nodes or []:
            arguments = (instance_dict(node) or {}).get("arguments")
            tensors = (instance_dict(arguments) or {}).get("keras_tensors") or []
            for tensor in tensors:
                if id(tensor) in by_id:
                    found.append((layer, tensor))
    return found


def _fed(
    model: Any, data: ast.AST, namespace: Mapping[str, Any]
) -> list[tuple[Any, ast.AST, str | None]]:
    """(lookup, the expression of the data it reads, the input's name) for a model call."""
    pairs = _direct_lookups(model)
    if not pairs:
        return []
    struct = (instance_dict(model) or {}).get("_inputs_struct")
    found: list[tuple[Any, ast.AST, str | None]] = []
    for layer, tensor in pairs:
        if tensor is None or struct is tensor:
            found.append((layer, data, None))
            continue
        name = (instance_dict(tensor) or {}).get("name")
        if isinstance(data, ast.Dict):
            for key, value in zip(data.keys, data.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == name:
                    found.append((layer, value, name))
        elif isinstance(data, ast.List | ast.Tuple):
            inputs = contained_values(struct, sequences_only=True) or []
            position = next((i for i, t in enumerate(inputs) if t is tensor), None)
            if position is not None and position < len(data.elts):
                found.append((layer, data.elts[position], name))
        elif isinstance(data, ast.Name) and type(namespace.get(data.id)) is dict:
            held = namespace[data.id]
            if type(name) is str and name in held:
                key = ast.Constant(value=name)
                found.append((layer, ast.Subscript(value=data, slice=key, ctx=ast.Load()), name))
    return found


def _data_argument(call: ast.Call, keyword: str) -> ast.AST | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


_LOCAL_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def top_level_nodes(statement: ast.stmt) -> list[ast.AST]:
    """The nodes of a top-level statement outside ``lambda`` bodies and comprehensions,
    whose names are their own parameters, not the namespace's."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        found.append(node)
        pending.extend(
            child for child in ast.iter_child_nodes(node) if not isinstance(child, _LOCAL_SCOPES)
        )
    return found


def _calls(tree: ast.Module, namespace: Mapping[str, Any]) -> list[tuple[Any, ast.AST, str, str]]:
    """(lookup, data expression, how it is called, the model's name or '') per call."""
    found: list[tuple[Any, ast.AST, str, str]] = []
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in top_level_nodes(statement):
            if not isinstance(node, ast.Call):
                continue
            function = node.func
            if isinstance(function, ast.Name):
                held = namespace.get(function.id)
                data = _data_argument(node, "inputs")
                if data is None:
                    continue
                if _lookup_kind(held) is not None:
                    found.append((held, data, "call", ""))
                elif _is_model(held):
                    fed = _fed(held, data, namespace)
                    found += [(layer, d, "call", function.id) for layer, d, _ in fed]
            elif (
                isinstance(function, ast.Attribute)
                and function.attr in _MODEL_CALLS
                and isinstance(function.value, ast.Name)
            ):
                held = namespace.get(function.value.id)
                data = _data_argument(node, "x")
                if data is None or not _is_model(held):
                    continue
                for layer, expression, _ in _fed(held, data, namespace):
                    found.append((layer, expression, function.attr, function.value.id))
    return found


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "(" not in source:
        return []
    if not any(name in source for name in namespace_lookups(source, namespace)):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for layer, expression, how, model in _calls(tree, namespace):
        note = _note(layer, expression, how, model, namespace, source)
        if note is not None:
            return [note]
    return []


def namespace_lookups(source: str, namespace: Mapping[str, Any]) -> list[str]:
    """The words that make a cell worth parsing: a model method called, or ``(`` right
    after a name (the cell may call a lookup or a model by its name)."""
    if any(f".{method}(" in source for method in _MODEL_CALLS):
        return ["("]
    called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", source))
    return [
        name
        for name in called
        if name in namespace
        and (_lookup_kind(namespace[name]) is not None or _is_model(namespace[name]))
    ]


def _note(
    layer: Any,
    expression: ast.AST,
    how: str,
    model: str,
    namespace: Mapping[str, Any],
    source: str,
) -> Note | None:
    kind = _lookup_kind(layer)
    held = _held(expression, namespace)
    if kind is None or held is None:
        return None
    value, text = held
    sample = _sample(value, kind)
    if sample is None:
        return None
    unknown = _unknown(layer, kind, sample)
    if unknown is None:
        return None
    missing, looked = unknown
    share = len(missing) / looked
    if share < MIN_SHARE:
        return None
    vocabulary = _vocabulary(layer, kind) or []
    attributes = instance_dict(layer) or {}
    special = (1 if attributes.get("mask_token") is not None else 0) + int(
        attributes.get("num_oov_indices") or 0
    )
    tokens = [t for t in vocabulary if t != attributes.get("mask_token")]
    size = len(vocabulary) + special
    name = name_bound_to(id(layer), namespace)
    layer_text = f"`{name}`" if name else f"the `{kind}` layer '{attributes.get('name')}'"
    caller = model or name or "the layer"
    where = f"`{model}.{how}(...)`" if model and how != "call" else f"`{caller}({text})`"
    article = "an" if kind.startswith("I") else "a"
    example = ", ".join(repr(v) for v in list(dict.fromkeys(missing))[:MAX_SHOWN])
    known = ", ".join(repr(t) for t in tokens[:MAX_SHOWN])
    head = (
        f"{where} gives {layer_text} ({article} `{kind}` of {len(tokens):,} tokens) the values of "
        f"`{text}`, and {share:.0%} of them ({len(missing)} of {looked} sampled) are not in "
        f"its vocabulary (`{text}` holds {example}; the vocabulary {known}, ...): each maps "
        "to the one out-of-vocabulary id, so the layers after it see the same id for all of "
        "them and cannot tell those examples apart. Nothing raises."
    )
    sources, counts = user_code.cell_sources(namespace, source)
    cause = _cause(missing, tokens, size, kind, text, value, name, how, (sources, counts))
    return reports.note(f"{head} {cause}".strip(), SECTION)


def _cause(
    missing: list[Any],
    tokens: list[Any],
    size: int,
    kind: str,
    text: str,
    value: Any,
    name: str | None,
    how: str,
    history: tuple[list[str], list[int | None]],
) -> str:
    known = set(tokens)
    if kind == "StringLookup" and all(type(v) is str for v in missing):
        floats = [v for v in missing if _FLOAT_TEXT.match(v)]
        restored = [v.split(".")[0] for v in floats]
        if len(floats) >= 0.9 * len(missing) and sum(r in known for r in restored) >= 0.5 * len(
            floats
        ):
            cause = (
                f"They are numbers written as float text ({floats[0]!r}) where the vocabulary "
                f"holds integer text ({restored[0]!r}): the ids went through a float column "
                "before `astype(str)`."
            )
            fix = ""
            numpy = sys.modules["numpy"]
            if isinstance(value, numpy.ndarray) or _pandas(value, "Series"):
                # Keras takes text arrays of dtype object only: keep the array's kind.
                kept = ".astype(object)" if getattr(value.dtype, "kind", "") == "O" else ""
                kept = "" if _pandas(value, "Series") else kept
                fix = (
                    "Write them as integer text before the call: "
                    f'`{text} = {text}.astype(float).astype("int64").astype(str){kept}`.'
                )
            return _joined(cause, fix)
    if kind == "IntegerLookup" and all(type(v) is int and 0 <= v < size for v in missing):
        if sum(0 <= t < size for t in tokens if type(t) is int) < 0.5 * max(len(tokens), 1):
            return _joined(
                f"Every unknown value lies in [0, {size}), the range of the ids this layer "
                "outputs, while its vocabulary holds other numbers: these look like positions "
                "(an encoding made before), not the ids the layer was adapted on.",
                f"Give {'`' + name + '`' if name else 'the layer'} the raw ids of the same "
                "column it was adapted on, or drop the lookup and feed the positions "
                "straight to the Embedding.",
            )
    if _same_kind(missing, tokens):
        split = _position_split(text, *history) if text.isidentifier() else None
        if split is not None:
            return _joined(
                f"They are values of the same kind ({missing[0]!r} beside {tokens[0]!r}) that "
                f"never occurred where the vocabulary was learned: {split} cuts `{text}` by "
                "position, so when the rows are ordered (grouped by these values), each value "
                "lands on one side of the split only, and the held-out side measures values "
                "the model never learned.",
                "Shuffle the rows with one permutation for every array before the split "
                "(`order = np.random.default_rng(0).permutation(len(rows))`, then each array "
                "indexed by `order`), adapt on the training side, and train again.",
            )
        return _joined(
            f"They are values of the same kind ({missing[0]!r} beside {tokens[0]!r}) that "
            "never occurred in the data the vocabulary was learned from: new entities, "
            "which the model cannot tell apart (cold start).",
            "If they should be known, adapt the layer on data that holds them (the training "
            "rows of the same column) and train again.",
        )
    if how in ("fit", "train_on_batch") and name and text.isidentifier():
        return _joined(
            "The layer's vocabulary was built from other values than the ones it is trained on.",
            f"Adapt it on what fit is given, `{name}.adapt({text})`, then run the cells that "
            "build and compile the model again (the Embedding's size comes from "
            f"`{name}.vocabulary_size()`) and fit again.",
        )
    return _joined(
        "The values come from another space than the vocabulary (another column, ids "
        "that were never in the data it was adapted on, an earlier encoding).",
        f"Give the layer values of the kind it was adapted on, or adapt it on the training "
        f"values of the same column as `{text}`.",
    )


def _form(value: Any) -> str:
    """A value's form with its digits hidden: ``'user_#'`` for ``'user_48'``."""
    return re.sub(r"\d+", "#", value) if type(value) is str else "int"


def _same_kind(missing: list[Any], tokens: list[Any]) -> bool:
    """The unknown values look like the vocabulary's: the same text form with a number in
    it (``'user_48'``, ``'user_9'``), or integers in the vocabulary's span widened by it."""
    if not missing or not tokens:
        return False
    if all(type(v) is int for v in missing) and all(type(t) is int for t in tokens):
        low, high = min(tokens), max(tokens)
        span = max(high - low, 1)
        return low - span <= min(missing) and max(missing) <= high + span
    forms = Counter(_form(v) for v in missing).most_common(1)[0]
    known = Counter(_form(t) for t in tokens).most_common(1)[0]
    return (
        "#" in forms[0]
        and forms[0] == known[0]
        and forms[1] >= 0.9 * len(missing)
        and known[1] >= 0.9 * len(tokens)
    )


def _position_split(name: str, sources: list[str], counts: list[int | None]) -> str | None:
    """The statement (newest cell first) that binds ``name`` to a slice ``A[a:b]`` of
    another name, quoted with its place (``cell In[5], line 3``)."""
    for index, text in enumerate(sources):
        tree = parsed_source(text) if len(text) <= MAX_CELL_CHARS else None
        if tree is None:
            continue
        for statement in tree.body:
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target, value = statement.targets[0], statement.value
            pairs: list[tuple[ast.AST, ast.AST]] = [(target, value)]
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                if len(target.elts) == len(value.elts):
                    pairs = list(zip(target.elts, value.elts, strict=True))
            for bound, made in pairs:
                if not (isinstance(bound, ast.Name) and bound.id == name):
                    continue
                if (
                    isinstance(made, ast.Subscript)
                    and isinstance(made.value, ast.Name)
                    and isinstance(made.slice, ast.Slice)
                ):
                    written = ast.get_source_segment(text, statement) or ""
                    if "\n" in written:
                        return None
                    place = user_code.cell_place(counts[index], statement.lineno)
                    return f"`{written}` ({place})"
                return None
    return None


def _joined(cause: str, fix: str) -> str:
    return f"{cause} {fix}".strip()
