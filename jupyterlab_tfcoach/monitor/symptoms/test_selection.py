"""A setting chosen by its score on the test data, then that score reported as the test
score.

``f1s = [f1(y_test, p_test, t) for t in thresholds]; best = thresholds[np.argmax(f1s)]``
(also a loop over learning rates, epochs, checkpoints or layer sizes that evaluates each
candidate on the test arrays and keeps the best) uses the test set to choose: the best of
many test scores is higher than the score the chosen setting will get on new data, so the
reported number is optimistic, and nothing is left to measure the choice honestly.
Nothing raises.

Found after a cell that completed, from its source (a cell without ``max``/``min``/
``sort`` in its text, or without a word of test data, costs substring tests): a top-level
comprehension or ``for`` loop (outside function bodies) over candidates whose scoring
code reads a name with a test word (``test``, ``testing``, ``tst``, ``te``, split as
``evaluation_loops`` reads names) holding an array, tensor or dataset, together with the
candidate (the loop's target), and whose scores are then compared to keep the best: the
comprehension given to ``max``/``min``/``argmax``/``argmin``/``sorted`` directly or
through the name it was assigned to, a list or dict the loop fills given to one of them,
or an ``if score > best`` in the loop body. Validation data (``val``, ``valid``, ``dev``)
is where choosing belongs and is not told.

The fix scores the candidates on the validation twins of the test names (``y_test`` ->
``y_val``, ``X_te`` -> ``X_va``) when they hold data: for a comprehension, the validation
scores, the chosen candidate and the test score at it; for a loop, the loop on the
validation names. Without such names the note says to split validation rows off the
training data.

The same choice made by Keras: ``M.fit(..., validation_data=(X_test, y_test),
callbacks=[...])`` with an ``EarlyStopping`` (or a ``ModelCheckpoint`` with
``save_best_only=True``) watching a ``val_`` figure (written in the list, or a name
holding one: its stored ``monitor``), the validation names with a test word: the test
rows choose when training stops or which epoch is kept. Fix: the call validating on the
validation twins, else with ``validation_split=0.2`` in place of ``validation_data``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import top_statements
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.validation_copies import with_split

SECTION = "keras-validation-data"
MAX_CELL_CHARS = 50_000
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_TEST_WORDS = frozenset({"test", "testing", "tst", "te"})
# A test word and its validation twin, longest first (``testing`` before ``test``).
_VALIDATION_FOR = (("testing", "validation"), ("test", "val"), ("tst", "val"), ("te", "va"))
_SELECTIONS = frozenset({"max", "min", "argmax", "argmin", "sorted", "nanargmax", "nanargmin"})
_TRIGGERS = ("max", "min", "sort", ">", "<")
# A test word somewhere in the text (``y_test``, ``X_te``, ``te_x``), before any parse.
_TEST_HINTS = ("test", "tst", "_te", "te_")
_DATA_CLASSES = frozenset({"DatasetV2", "Tensor", "ndarray", "Series", "DataFrame"})


def _words(identifier: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(identifier)}


def _is_data(value: Any) -> bool:
    try:
        return any(k.__name__ in _DATA_CLASSES for k in type(value).__mro__)
    except Exception:
        return False


def _test_names(node: ast.AST, namespace: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Name)
            and _words(inner.id) & _TEST_WORDS
            and inner.id not in found
            and _is_data(namespace.get(inner.id))
        ):
            found.append(inner.id)
    return found


def _validation_name(name: str, namespace: dict[str, Any]) -> str | None:
    for word, twin in _VALIDATION_FOR:
        pattern = re.compile(rf"(?<![A-Za-z]){word}(?![a-z])", re.IGNORECASE)
        if pattern.search(name):
            for candidate in (twin, "valid", "validation", "val", "dev"):
                renamed = pattern.sub(candidate, name, count=1)
                if _is_data(namespace.get(renamed)):
                    return renamed
            return None
    return None


def _loop_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _selection_of(node: ast.AST) -> str | None:
    """``max``/``np.argmax``/``sorted``...: the selecting function's name, or None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else None
    )
    return name if name in _SELECTIONS else None


def _picks(node: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """Whether a selecting call gives the chosen candidate, not just the best score:
    an ``argmax``/``argmin``, a ``max``/``min``/``sorted`` with ``key=``, or a ``max``
    whose result is looked up (``scores.index(max(scores))``)."""
    name = _selection_of(node) or ""
    if "arg" in name or any(k.arg == "key" for k in node.keywords):
        return True
    parent = parents.get(id(node))
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr == "index"
    )


def _selected(tree: ast.Module, collected: set[str], after: int) -> ast.Call | None:
    """The first call from line ``after`` on that picks a candidate by the scores held in
    one of ``collected``."""
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and node.lineno >= after
        and _selection_of(node) is not None
        and any(_uses(arg, collected) for arg in [*node.args, *(k.value for k in node.keywords)])
        and _picks(node, parents)
    ]
    return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "validation_data" in source and "callbacks" in source and len(source) <= MAX_CELL_CHARS:
        found = _early_stopping_on_test(source, namespace)
        if found is not None:
            return [found]
    if len(source) > MAX_CELL_CHARS or not any(t in source for t in _TRIGGERS):
        return []
    lowered = source.lower()
    if not any(hint in lowered for hint in _TEST_HINTS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in top_statements(tree):
        for node in ast.walk(statement):
            if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.DictComp):
                note = _comprehension(node, statement, tree, source, namespace)
                if note is not None:
                    return [note]
        if isinstance(statement, ast.For):
            note = _loop(statement, tree, source, namespace)
            if note is not None:
                return [note]
    return []


def _comprehension(
    comp: ast.ListComp | ast.GeneratorExp | ast.DictComp,
    statement: ast.stmt,
    tree: ast.Module,
    source: str,
    namespace: dict[str, Any],
) -> Note | None:
    if len(comp.generators) != 1:
        return None
    generator = comp.generators[0]
    candidates = _loop_names(generator.target)
    element = comp.value if isinstance(comp, ast.DictComp) else comp.elt
    if not _uses(element, candidates):
        return None
    tests = _test_names(element, namespace)
    if not tests:
        return None
    # Chosen: the comprehension inside a selecting call, or its name given to one later.
    chooser: ast.Call | None = None
    for node in ast.walk(statement):
        if _selection_of(node) is not None and any(
            arg is comp
            for arg in node.args  # type: ignore[attr-defined]
        ):
            chooser = node  # type: ignore[assignment]
    assigned: str | None = None
    if (
        isinstance(statement, ast.Assign)
        and statement.value is comp
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        assigned = statement.targets[0].id
        chooser = _selected(tree, {assigned}, statement.lineno)
    if chooser is None:
        return None
    written = ast.get_source_segment(source, comp) or "the comprehension"
    chosen = ast.get_source_segment(source, chooser) or "the best"
    text = (
        f"`{written}` (line {comp.lineno}) scores each candidate on "
        f"{_listed(tests)}, and `{chosen}` (line {chooser.lineno}) keeps the best of those "
        "test scores: the test data chose the setting, so the best test score is higher "
        "than the chosen setting will score on new data, and there is no untouched data "
        "left to measure it. Nothing raises."
    )
    twins = {name: _validation_name(name, namespace) for name in tests}
    if any(twin is None for twin in twins.values()) or isinstance(comp, ast.DictComp):
        return reports.note(text + _NO_TWIN, SECTION)
    fix = _comprehension_fix(comp, element, generator, twins, chooser, source)
    if fix is None:
        return reports.note(text + _NO_TWIN, SECTION)
    return reports.note(
        f"{text} Choose on the validation data, then score the chosen setting on the test "
        f"data once: `{fix}`.",
        SECTION,
    )


_NO_TWIN = (
    " Choose the setting on validation rows split off the training data, then score that "
    "one setting on the test data once."
)


def _renamed(text: str, names: dict[str, str | None]) -> str:
    for name, twin in names.items():
        if twin is not None:
            text = re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", twin, text)
    return text


def _comprehension_fix(
    comp: ast.ListComp | ast.GeneratorExp | ast.DictComp,
    element: ast.expr,
    generator: ast.comprehension,
    twins: dict[str, str | None],
    chooser: ast.Call,
    source: str,
) -> str | None:
    """``val_scores = [...val names...]; chosen = C[int(np.argmax(val_scores))];
    print(<element on the test names at chosen>)``."""
    if not isinstance(generator.target, ast.Name) or generator.ifs:
        return None
    loop = generator.target.id
    element_text = ast.get_source_segment(source, element)
    iterable = ast.get_source_segment(source, generator.iter)
    if element_text is None or iterable is None or "\n" in element_text + iterable:
        return None
    selecting = _selection_of(chooser) or "max"
    pick = "argmin" if "min" in selecting else "argmax"
    pool = iterable if isinstance(generator.iter, ast.Name) else f"list({iterable})"
    at_chosen = re.sub(rf"(?<![\w.]){re.escape(loop)}(?!\w)", "chosen", element_text)
    return (
        f"val_scores = [{_renamed(element_text, twins)} for {loop} in {iterable}]; "
        f"chosen = {pool}[int(np.{pick}(val_scores))]; "
        f"print(chosen, {at_chosen})"
    )


def _loop(loop: ast.For, tree: ast.Module, source: str, namespace: dict[str, Any]) -> Note | None:
    candidates = _loop_names(loop.target)
    tests = [name for stmt in loop.body for name in _test_names(stmt, namespace)]
    tests = list(dict.fromkeys(tests))
    if not tests or not any(_uses(stmt, candidates) for stmt in loop.body):
        return None
    collected: set[str] = set()
    guarded = None
    for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
        ):
            collected.add(node.func.value.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    collected.add(target.value.id)
        elif (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.ops[0], ast.Gt | ast.Lt | ast.GtE | ast.LtE)
            and any(
                isinstance(t, ast.Name) and t.id in candidates
                for stmt in node.body
                if isinstance(stmt, ast.Assign)
                for t in ast.walk(stmt.value)
            )
        ):
            guarded = node
    chooser = _selected(tree, collected, loop.lineno) if collected else None
    if chooser is None and guarded is None:
        return None
    header = source.splitlines()[loop.lineno - 1].strip()
    if chooser is not None:
        how = f"`{ast.get_source_segment(source, chooser)}` (line {chooser.lineno})"
    else:
        how = f"`{ast.get_source_segment(source, guarded.test)}` (line {guarded.lineno})"  # type: ignore[union-attr]
    text = (
        f"The loop `{header}` (line {loop.lineno}) scores each candidate on "
        f"{_listed(tests)}, and {how} keeps the best of those test scores: the test data "
        "chose the setting, so the best test score is higher than the chosen setting will "
        "score on new data, and there is no untouched data left to measure it. Nothing "
        "raises."
    )
    twins = {name: _validation_name(name, namespace) for name in tests}
    scoring = [
        node
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[]))
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Expr)
        and node.lineno == node.end_lineno
        and _test_names(node, namespace)
    ]
    if not scoring or any(twin is None for twin in twins.values()):
        return reports.note(text + _NO_TWIN, SECTION)
    lines = [
        f"line {node.lineno}: `{_renamed(ast.get_source_segment(source, node) or '', twins)}`"
        for node in sorted(scoring, key=lambda n: n.lineno)
    ]
    return reports.note(
        f"{text} Run the loop on the validation data, then score the chosen setting on "
        f"the test data once; in the loop, {'; '.join(lines)}.",
        SECTION,
    )


_SELECTING_CALLBACKS = frozenset({"EarlyStopping", "ModelCheckpoint"})


def _selecting_callback(node: ast.AST, namespace: dict[str, Any]) -> str | None:
    """``EarlyStopping(...)`` or ``ModelCheckpoint(..., save_best_only=True)`` watching a
    ``val_`` figure, written in the call or held by a name: its class name."""
    if isinstance(node, ast.Call):
        func = node.func
        kind = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if kind not in _SELECTING_CALLBACKS:
            return None
        keywords = {k.arg: k.value for k in node.keywords}
        monitor = keywords.get("monitor")
        if isinstance(monitor, ast.Constant) and not str(monitor.value).startswith("val_"):
            return None
        best = keywords.get("save_best_only")
        if kind == "ModelCheckpoint" and not (isinstance(best, ast.Constant) and best.value):
            return None
        return kind
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        cls = type(value)
        if cls.__name__ not in _SELECTING_CALLBACKS or not is_library_class(cls):
            return None
        monitor = getattr(value, "monitor", None)
        if type(monitor) is not str or not monitor.startswith("val_"):
            return None
        if cls.__name__ == "ModelCheckpoint" and getattr(value, "save_best_only", None) is not True:
            return None
        return cls.__name__
    return None


def _early_stopping_on_test(source: str, namespace: dict[str, Any]) -> Note | None:
    """``M.fit(..., validation_data=(X_test, y_test), callbacks=[EarlyStopping()])``: the
    test data chooses when training stops (or which epoch's weights are kept)."""
    tree = parsed_source(source)
    if tree is None:
        return None
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "fit"
        ):
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        given, callbacks = keywords.get("validation_data"), keywords.get("callbacks")
        if not isinstance(given, ast.Tuple | ast.List) or not given.elts:
            continue
        if not isinstance(callbacks, ast.List | ast.Tuple):
            continue
        tests = [
            e.id
            for e in given.elts
            if isinstance(e, ast.Name)
            and _words(e.id) & _TEST_WORDS
            and _is_data(namespace.get(e.id))
        ]
        if not tests:
            continue
        kinds = [k for e in callbacks.elts if (k := _selecting_callback(e, namespace))]
        if not kinds:
            continue
        written = ast.get_source_segment(source, call) or "fit(...)"
        chooses = "when training stops" if kinds[0] == "EarlyStopping" else "which epoch is kept"
        text = (
            f"`{written}` (line {call.lineno}) validates on {_listed(tests)}, and its "
            f"`{kinds[0]}` watches those `val_` figures: the test data chooses {chooses}, "
            "so a later score on the same test rows is optimistic (they picked the "
            "model), and no untouched data is left to measure it. Nothing raises."
        )
        twins = {
            e.id: _validation_name(e.id, namespace) for e in given.elts if isinstance(e, ast.Name)
        }
        segment = ast.get_source_segment(source, given)
        if segment is not None and all(t is not None for t in twins.values()):
            fixed = written.replace(segment, _renamed(segment, twins), 1)
        else:
            fixed = with_split(source, call) if call.lineno == call.end_lineno else None
        if fixed is None:
            text += " Validate on rows split off the training data, and score the test once."
        else:
            text += (
                " Build the model again, validate on data kept apart from the test rows, and "
                f"score the test data once, at the end: `{fixed}`."
            )
        return reports.note(text, SECTION)
    return None


def _listed(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)
