"""tf.data symptoms: a one-shot iterator looped over again, and Python work in a function
``Dataset.map`` traces.

Two hooks, on classes of ``tensorflow.python.data.ops`` (installed through ``hooks.py``):

- ``OwnedIterator.__next__`` (what ``iter(ds)`` returns and a ``for`` loop calls): the
  first ``StopIteration`` of an iterator marks it as used up (a weak reference); another
  ``StopIteration`` from the same object is a loop over an iterator that had already run
  out, which runs 0 steps (``it = iter(ds)`` before an epoch loop: epochs 2+ train on
  nothing). The frame of that loop names the iterator and its line, the iterator's
  dataset names the fix (``for x, y in ds:``: a fresh pass each time). Per batch this
  costs one Python call around the original (measured ~1% of a batch of a small
  in-memory dataset, ``benchmarks/bench_monitor.py``); the work happens only at the end
  of a pass.
- ``StructuredFunctionWrapper.__init__``, which ``Dataset.map``/``filter``/``flat_map``/
  ``interleave`` run once to trace the user's function: after it, the user's function is
  read by ``traces/body_scan.py`` (bytecode, cached per code object) for NumPy or Python
  randomness, ``print``, appends to outer lists and outer counters, which run once while
  tracing, so every element gets the same value. Its graph goes to the broadcast scan.
  The texts are built right away; what is kept is the plain outer values (numbers, flags)
  the function read while tracing, per function (weakly), to say after a later cell that
  one changed while the dataset's graph keeps the old value (``body_scan.plain_snapshot``,
  as the tf.function registry does for its calls).
- ``OwnedIterator.__init__`` (once per pass: ``iter(ds)``, a ``for`` loop, each epoch of
  Keras's ``fit``/``evaluate``/``predict``): the dataset is recorded (weakly, a few per
  cell) and its chain of transformations is checked after the cell for orders that
  silently change training (``symptoms/dataset_order.py``).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.broadcast import where_in_cells
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import OrderChecker, is_batched
from jupyterlab_tfcoach.monitor.tftypes import loaded_class
from jupyterlab_tfcoach.monitor.traces import body_scan as fx
from jupyterlab_tfcoach.monitor.traces.body_advice import function_globals, tf_random_equivalent
from jupyterlab_tfcoach.monitor.traces.identity import USER, library_roots, origin_of

ITERATOR_MODULE = "tensorflow.python.data.ops.iterator_ops"
STRUCTURED_FUNCTION_MODULE = "tensorflow.python.data.ops.structured_function"
ITERATOR_SECTION = "tf-data"
TRACING_SECTION = "side-effects"
DRAW_SECTION = "tf-data"  # module 5's map example shows a NumPy draw frozen by the trace
MAX_NOTES = 4
MAX_FROZEN = 64
FROZEN_SECTION = "frozen-python-values"
_REPORTED_ACTIONS = frozenset({fx.RANDOM, fx.PRINT, fx.MUTATION, fx.SUBSCRIPT, fx.COUNTER})


@dataclass
class _EmptyPass:
    """Loops over one used-up iterator from one line, during a cell."""

    iterator: weakref.ReferenceType[Any]
    filename: str
    lineno: int
    iterator_name: str | None
    count: int = 0


@dataclass
class _Frozen:
    """The plain outer values a dataset function's latest trace read (weak: the function;
    the scope holds weak references only)."""

    function: weakref.ReferenceType[Any]
    scope: fx.Scope
    values: dict[tuple[str, str], Any]
    transformation: str
    map_line: str | None
    reported: set[tuple[str, str]]


@dataclass
class DatasetWatcher:
    """The two tf.data hooks and what they found during the current cell."""

    locator: CellLocator
    # The broadcast scan, given each graph a dataset function traced into.
    scan_graph: Callable[[Any], None] | None = None
    installed: bool = False
    _hooks: MethodHooks = field(default_factory=MethodHooks)
    _used_up: dict[int, weakref.ReferenceType[Any]] = field(default_factory=dict)
    _empty_passes: dict[tuple[int, str, int], _EmptyPass] = field(default_factory=dict)
    _traced_notes: list[Note] = field(default_factory=list)
    _frozen: dict[int, _Frozen] = field(default_factory=dict)
    order: OrderChecker = field(default_factory=OrderChecker)

    # ------------------------------------------------------------------ hooks
    def install(self) -> bool:
        """Hook both classes once they are loaded (``import tensorflow`` loads them)."""
        if self.installed:
            return True
        iterator_class = loaded_class(ITERATOR_MODULE, "OwnedIterator")
        wrapper_class = loaded_class(STRUCTURED_FUNCTION_MODULE, "StructuredFunctionWrapper")
        if iterator_class is None or wrapper_class is None:
            return False
        self._hooks.install(iterator_class, "__next__", self._next_hook)
        self._hooks.install(iterator_class, "__init__", self._init_hook)
        self._hooks.install(wrapper_class, "__init__", self._wrapper_hook)
        self.installed = True
        return True

    def uninstall(self) -> None:
        self._hooks.restore()
        self.installed = False

    def _next_hook(self, original_next: Any) -> Any:
        watcher = self

        def next_hook(iterator: Any) -> Any:
            __tracebackhide__ = True  # hidden in IPython tracebacks
            try:
                return original_next(iterator)
            except StopIteration:
                try:
                    watcher._ran_out(iterator, sys._getframe(1))
                except Exception:
                    pass
                raise

        return next_hook

    def _init_hook(self, original_init: Any) -> Any:
        order = self.order

        def iterator_init_hook(iterator: Any, dataset: Any = None, *args: Any, **kw: Any) -> None:
            __tracebackhide__ = True
            original_init(iterator, dataset, *args, **kw)
            if dataset is not None:
                try:
                    order.used(dataset)
                except Exception:
                    pass

        return iterator_init_hook

    def _wrapper_hook(self, original_init: Any) -> Any:
        watcher = self

        def init_hook(
            wrapper: Any, func: Any, transformation_name: Any, *args: Any, **kw: Any
        ) -> None:
            __tracebackhide__ = True
            original_init(wrapper, func, transformation_name, *args, **kw)
            try:
                source = kw.get("dataset", args[0] if args else None)
                watcher._traced(wrapper, func, transformation_name, sys._getframe(1), source)
            except Exception:
                pass

        return init_hook

    def begin_cell(self) -> None:
        self._empty_passes = {}
        self._traced_notes = []
        self.order.begin_cell()

    # ------------------------------------------------------ used-up iterators
    def _ran_out(self, iterator: Any, frame: Any) -> None:
        key = id(iterator)
        known = self._used_up.get(key)
        if known is None or known() is not iterator:

            def forget(ref: weakref.ReferenceType[Any], key: int = key) -> None:
                if self._used_up.get(key) is ref:
                    del self._used_up[key]

            self._used_up[key] = weakref.ref(iterator, forget)
            return
        filename, lineno = frame.f_code.co_filename, frame.f_lineno
        event_key = (key, filename, lineno)
        found = self._empty_passes.get(event_key)
        if found is None:
            found = _EmptyPass(
                known, str(filename), int(lineno), name_bound_to(id(iterator), frame.f_locals)
            )
            self._empty_passes[event_key] = found
        found.count += 1

    def _iterator_notes(self, namespace: dict[str, Any], cell_source: str) -> list[Note]:
        notes = []
        for empty in list(self._empty_passes.values())[:MAX_NOTES]:
            text = self._iterator_text(empty, namespace, cell_source)
            if text is not None:
                notes.append(reports.note(text, ITERATOR_SECTION))
        return notes

    def _iterator_text(
        self, empty: _EmptyPass, namespace: dict[str, Any], cell_source: str
    ) -> str | None:
        iterator = empty.iterator()
        name = empty.iterator_name or (name_bound_to(id(iterator), namespace) if iterator else None)
        dataset = stored_dataset(iterator) if iterator is not None else None
        dataset_name = name_bound_to(id(dataset), namespace) if dataset is not None else None
        line = linecache.getline(empty.filename, empty.lineno).strip()
        loop = _for_header(line)
        if dataset_name is None and name is not None:
            dataset_name = _iter_argument(cell_source, name)
        where = where_in_cells(self.locator, empty.filename, empty.lineno)
        times = "once" if empty.count == 1 else f"{empty.count} times"
        shown = f"`{line}`" if loop is not None else "a loop"
        called = f"`{name}`" if name else "the iterator"
        made = f" (`iter({dataset_name})`)" if dataset_name else ""
        counters = _loop_counters(empty.filename, empty.lineno)
        stays = f" (so {', '.join(f'`{c}`' for c in counters)} stays 0 there)" if counters else ""
        text = (
            f"{shown} ({where}) ran 0 steps {times} in this cell: {called}{made} is a one-shot "
            "iterator; the first pass used it up, so every later pass over it (each epoch "
            f"after the first) gets nothing and trains on nothing, without an error{stays}."
        )
        if loop is not None and name is not None and dataset_name is not None:
            target, iterable = loop
            fixed = _replace_name(iterable, name, dataset_name)
            if fixed is not None:
                text += (
                    " Loop over the dataset itself, which starts a fresh pass (reshuffled, if "
                    f"it shuffles) every time: `for {target} in {fixed}:`."
                )
                return text
        text += (
            " Loop over the dataset itself (`for batch in dataset:`): each loop starts a "
            "fresh pass."
        )
        return text

    # --------------------------------------------------- traced dataset functions
    def _traced(
        self,
        wrapper: Any,
        func: Any,
        transformation_name: Any,
        frame: Any,
        source: Any = None,
    ) -> None:
        graph = None
        concrete = (instance_dict(wrapper) or {}).get("_function")
        if concrete is not None:
            graph = (instance_dict(concrete) or {}).get("_func_graph")
        if graph is not None and self.scan_graph is not None:
            self.scan_graph(graph)
        if type(func) is not types.FunctionType:
            return
        if origin_of(func.__code__.co_filename, library_roots()) != USER:
            return
        facts = fx.code_facts(func.__code__)
        scope = fx.Scope(func, None)
        transformation = (
            str(transformation_name) if type(transformation_name) is str else "Dataset.map()"
        )
        map_line = _cell_line(frame, self.locator)
        self._remember_frozen(func, facts, scope, transformation, map_line)
        self._helper_notes(func, transformation, map_line)
        if not facts.effects:
            return
        live = [e for e in fx.live_effects(facts, scope) if e.action in _REPORTED_ACTIONS]
        if not live:
            return
        # Only a batched input gives the mapped function a batch axis a fixed-size draw
        # would be shared along.
        ranks = (
            mapped_ranks(func, (instance_dict(wrapper) or {}).get("_input_structure"))
            if source is not None and is_batched(source)
            else {}
        )
        for effect in live[:MAX_NOTES]:
            self._traced_notes.append(
                reports.note(
                    _traced_text(func, effect, transformation, map_line, self.locator, ranks),
                    DRAW_SECTION if effect.action == fx.RANDOM else TRACING_SECTION,
                )
            )

    def _helper_notes(
        self, func: types.FunctionType, transformation: str, map_line: str | None
    ) -> None:
        """Draws and prints in the learner's functions the mapped function calls by name
        (``add_noise(x)`` inside ``augment``): they run while tracing too."""
        # Imported here: definitions.py reads this module's random-line rewriting.
        from jupyterlab_tfcoach.monitor.traces.definitions import (
            HELPER_ACTIONS,
            draws,
            helper_chains,
        )

        owner = f"`{func.__name__}`" if func.__name__ != "<lambda>" else "the lambda"
        for helper, chain in helper_chains(func):
            facts = fx.code_facts(helper.__code__)
            if not facts.effects:
                continue
            via = "".join(f", which calls `{name}`" for name in chain[1:])
            for effect in fx.live_effects(facts, fx.Scope(helper, None)):
                if effect.action not in HELPER_ACTIONS or not draws(effect):
                    continue
                text = _traced_text(helper, effect, transformation, map_line, self.locator)
                self._traced_notes.append(
                    reports.note(
                        f"{owner} calls `{chain[0]}`{via}, so its Python runs while "
                        f"{transformation} traces {owner}: {text}",
                        DRAW_SECTION if effect.action == fx.RANDOM else TRACING_SECTION,
                    )
                )

    def _remember_frozen(
        self,
        func: types.FunctionType,
        facts: fx.CodeFacts,
        scope: fx.Scope,
        transformation: str,
        map_line: str | None,
    ) -> None:
        """The plain outer values (numbers, flags) the function read while tracing: the
        graph keeps them. A new trace of the same function replaces them."""
        snapshot = fx.plain_snapshot(facts, scope)
        key = id(func)
        if not snapshot:
            self._frozen.pop(key, None)
            return
        if len(self._frozen) >= MAX_FROZEN and key not in self._frozen:
            self._frozen.pop(next(iter(self._frozen)))
        self._frozen[key] = _Frozen(
            weakref.ref(func), scope, snapshot, transformation, map_line, set()
        )

    def _frozen_notes(self) -> list[Note]:
        """Outer values a dataset function read while tracing that have changed since."""
        notes: list[Note] = []
        for key, frozen in list(self._frozen.items()):
            func = frozen.function()
            if func is None:
                del self._frozen[key]
                continue
            for (scope_name, name), old in frozen.values.items():
                present, value = frozen.scope.lookup(scope_name, name)
                if not present or not fx.is_plain(value) or fx.same_value(old, value):
                    continue
                marker = (name, repr(value)[:100])
                if marker in frozen.reported:
                    continue
                frozen.reported.add(marker)
                notes.append(
                    reports.note(_frozen_text(func, name, old, value, frozen), FROZEN_SECTION)
                )
        return notes[:MAX_NOTES]

    def take_notes(self, namespace: dict[str, Any], cell_source: str) -> list[Note]:
        notes = self._traced_notes[:MAX_NOTES]
        try:
            notes.extend(self._iterator_notes(namespace, cell_source))
        except Exception:
            pass
        try:
            if self._frozen:
                notes.extend(self._frozen_notes())
        except Exception:
            pass
        try:
            notes.extend(self.order.take_notes(namespace, cell_source))
        except Exception:
            pass
        self._traced_notes = []
        self._empty_passes = {}
        return notes


# -------------------------------------------------------------------- helpers
def stored_dataset(iterator: Any) -> Any | None:
    """The dataset an ``OwnedIterator`` reads (what it stores, no property runs)."""
    attributes = instance_dict(iterator)
    return attributes.get("_dataset") if attributes is not None else None


def _for_header(line: str) -> tuple[str, str] | None:
    """``("xb, yb", "batch_iter")`` for ``for xb, yb in batch_iter:``."""
    try:
        tree = ast.parse(line + " pass" if line.endswith(":") else line)
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.For):
        return None
    source = line + " pass" if line.endswith(":") else line
    target = ast.get_source_segment(source, node.target)
    iterable = ast.get_source_segment(source, node.iter)
    if not target or not iterable:
        return None
    return target, iterable


def _replace_name(expression: str, old: str, new: str) -> str | None:
    """``expression`` with the name ``old`` replaced by ``new`` (names only)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return None
    spots = sorted(
        (node.col_offset, node.end_col_offset or node.col_offset)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == old
    )
    if not spots or not expression.isascii():
        return None
    result = expression
    for start, end in reversed(spots):
        result = result[:start] + new + result[end:]
    return result


def _iter_argument(cell_source: str, iterator_name: str) -> str | None:
    """``train_ds`` for a cell that wrote ``batch_iter = iter(train_ds)``."""
    try:
        tree = ast.parse(cell_source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == iterator_name
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "iter"
            and len(node.value.args) == 1
            and isinstance(node.value.args[0], ast.Name)
        ):
            return node.value.args[0].id
    return None


def _loop_counters(filename: str, lineno: int) -> list[str]:
    """Names the loop's body counts up (``n_steps += 1``): they stay 0 in an empty pass."""
    source = "".join(linecache.getlines(filename))
    if not source or len(source) > 100_000:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.lineno == lineno:
            counters = []
            for statement in node.body:
                for inner in ast.walk(statement):
                    if (
                        isinstance(inner, ast.AugAssign)
                        and isinstance(inner.op, ast.Add)
                        and isinstance(inner.target, ast.Name)
                    ):
                        counters.append(inner.target.id)
            return list(dict.fromkeys(counters))[:3]
    return []


def _cell_line(frame: Any, locator: CellLocator) -> str | None:
    """The line of the user's cell that called ``Dataset.map`` (``jit_ds = ds.map(f)``)."""
    files = locator.cell_files()
    depth = 0
    while frame is not None and depth < 30:
        filename = frame.f_code.co_filename
        if filename in files:
            line = linecache.getline(filename, frame.f_lineno).strip()
            return line if line and len(line) <= 200 else None
        frame = frame.f_back
        depth += 1
    return None


def _assigned_name(line: str | None) -> str | None:
    """``logged`` for the line ``logged = table.map(log_it)``."""
    if not line:
        return None
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return None
    statement = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


def function_tree(func: types.FunctionType) -> tuple[ast.AST, str] | None:
    try:
        source = textwrap.dedent(inspect.getsource(func))
        return ast.parse(source), source
    except Exception:
        return None


def random_fix(
    tree: ast.AST,
    source: str,
    effect: fx.Effect,
    namespace: dict[str, object] | None = None,
    element_ranks: dict[str, int] | None = None,
) -> tuple[int, str, str | None, str | None] | None:
    """The random call's line in the function's source, its statement, the statement
    rewritten with a TensorFlow draw, and the name it assigns. ``element_ranks`` (a mapped
    function's parameters -> the rank of the element part each receives): a sized draw
    combined with a parameter of more axes than it has is drawn with ``tf.shape`` of it
    (``batched_operand``)."""
    wanted = effect.detail.rsplit(".", 1)[-1]
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == wanted
        ):
            continue
        shape_of = None
        if element_ranks:
            operand = batched_operand(tree, parents, node, element_ranks, namespace or {})
            shape_of = f"tf.shape({operand})" if operand is not None else None
        replacement = tf_random_equivalent(wanted, node, source, namespace, shape_of)
        replaced: ast.AST = node
        dtype = None
        parent = parents.get(node)
        grand = parents.get(parent) if parent is not None else None
        if (
            isinstance(parent, ast.Attribute)
            and parent.attr == "astype"
            and isinstance(grand, ast.Call)
            and len(grand.args) == 1
        ):
            replaced = grand
            dtype = _dtype_name(grand.args[0])
        elif (
            isinstance(parent, ast.Call)
            and len(parent.args) == 1
            and not parent.keywords
            and _float_constructor(parent.func) is not None
        ):
            # ``np.float32(np.random.uniform(...))`` converts the draw to a NumPy scalar; kept
            # around a TensorFlow draw it would convert a symbolic tensor and fail while
            # tracing, so the wrapper goes and its dtype becomes the draw's.
            replaced = parent
            dtype = _float_constructor(parent.func)
        statement = node
        while statement in parents and not isinstance(statement, ast.stmt):
            statement = parents[statement]
        statement_text = ast.get_source_segment(source, statement) or ""
        replaced_text = ast.get_source_segment(source, replaced) or ""
        target = None
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            target = statement.targets[0].id
        fixed = None
        if replacement is not None and replaced_text and "\n" not in statement_text:
            if dtype not in (None, "float32"):
                replacement = f"{replacement[:-1]}, dtype=tf.{dtype})"
            fixed = statement_text.replace(replaced_text, replacement, 1)
        return node.lineno, statement_text, fixed, target
    return None


def _draw_rank(call: ast.Call, namespace: dict[str, object]) -> int | None:
    """How many axes a NumPy draw's ``size`` gives it: 1 for a whole number (``size=48``,
    ``size=width``), the length of a written tuple or list (or of one a name holds); None
    for no size (one number) or a size not read (``x.shape``)."""
    size = next((k.value for k in call.keywords if k.arg == "size"), None)
    if size is None and len(call.args) >= 3:
        size = call.args[2]
    if size is None:
        return None
    if isinstance(size, (ast.Tuple, ast.List)):
        return len(size.elts)
    if isinstance(size, ast.Constant) and type(size.value) is int:
        return 1
    if isinstance(size, ast.Name):
        held = namespace.get(size.id)
        if type(held) is int:
            return 1
        if type(held) in (tuple, list):
            return len(held)  # type: ignore[arg-type]
    return None


def batched_operand(
    tree: ast.AST,
    parents: dict[ast.AST, ast.AST],
    draw: ast.Call,
    element_ranks: dict[str, int],
    namespace: dict[str, object],
) -> str | None:
    """The mapped function's parameter a sized draw is added to or multiplied with (the
    draw itself, or the name its statement assigns, in ``x + noise``) when that parameter
    receives one axis more than the draw has: a dataset mapped after ``batch`` gives ``x``
    a batch axis, and a draw of one row's shape is then one row of noise shared by every
    example of the batch. None otherwise (an unbatched element of the draw's rank; a draw
    of fewer axes still, per channel of images, is left as written)."""
    rank = _draw_rank(draw, namespace)
    if rank is None:
        return None
    node: ast.AST = draw
    while node in parents and not isinstance(node, ast.stmt):
        node = parents[node]
    drawn: set[str] = set()
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        if isinstance(node.targets[0], ast.Name):
            drawn.add(node.targets[0].id)

    def is_draw(operand: ast.AST) -> bool:
        # The draw itself or its name, alone or inside a factor (``x * (1.0 + noise)``).
        return any(
            child is draw or (isinstance(child, ast.Name) and child.id in drawn)
            for child in ast.walk(operand)
        )

    for candidate in ast.walk(tree):
        if not isinstance(candidate, ast.BinOp) or not isinstance(
            candidate.op, (ast.Add, ast.Sub, ast.Mult)
        ):
            continue
        for mine, other in ((candidate.left, candidate.right), (candidate.right, candidate.left)):
            if (
                isinstance(other, ast.Name)
                and element_ranks.get(other.id, 0) == rank + 1
                and is_draw(mine)
            ):
                return other.id
    return None


def mapped_ranks(func: types.FunctionType, spec: Any) -> dict[str, int]:
    """A mapped function's parameters -> the rank of the element part each receives, read
    from the wrapper's input structure (TensorSpecs): a tuple element unpacked into as many
    parameters, or one tensor for one parameter."""
    code = func.__code__
    parameters = code.co_varnames[: code.co_argcount]
    parts = list(spec) if type(spec) is tuple else [spec]
    if len(parts) != len(parameters):
        return {}
    ranks: dict[str, int] = {}
    for parameter, part in zip(parameters, parts, strict=True):
        shape = library_attribute(part, "shape") if type(part) is not tuple else None
        dims = library_attribute(shape, "_dims") if shape is not None else None
        if type(dims) is tuple:
            ranks[parameter] = len(dims)
    return ranks


def _shared_draw(fix: str) -> str:
    """The sentence for a fix drawn with ``tf.shape(x)``: the element holds a batch, so a
    draw of the written size would be one row of noise shared by all its examples."""
    start = fix.find("tf.shape(")
    if start < 0:
        return ""
    end = fix.find(")", start)
    operand = fix[start + len("tf.shape(") : end]
    return (
        f" `{operand}` holds a whole batch here (the dataset is batched before this map), so "
        f"a draw of one example's size would also be one row shared by every example of the "
        f"batch: draw with `{operand}`'s own shape."
    )


_FLOAT_CONSTRUCTORS = {
    "float": "float32",  # a Python float of a draw: the TensorFlow draw's default is enough
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "single": "float32",
    "double": "float64",
    "half": "float16",
}


def _float_constructor(node: ast.AST) -> str | None:
    """The float dtype a scalar conversion around a draw asks for: ``float32`` for
    ``np.float32(...)``, ``float64`` for ``np.float64(...)``; None for any other call."""
    if isinstance(node, ast.Name) and node.id == "float":
        return _FLOAT_CONSTRUCTORS["float"]
    if isinstance(node, ast.Attribute) and node.attr != "float":
        return _FLOAT_CONSTRUCTORS.get(node.attr)
    return None


def _dtype_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _traced_text(
    func: types.FunctionType,
    effect: fx.Effect,
    transformation: str,
    map_line: str | None,
    locator: CellLocator,
    ranks: dict[str, int] | None = None,
) -> str:
    name = func.__name__
    owner = f"`{name}`" if name != "<lambda>" else "the lambda"
    via = f" (`{map_line}`)" if map_line else ""
    once = (
        f"{transformation} runs {owner}{via} once, to trace it into a graph, and then runs "
        "the graph for every element"
    )
    label = effect.label
    if effect.action == fx.RANDOM:
        parsed = function_tree(func)
        found = (
            random_fix(*parsed, effect, function_globals(func), ranks)
            if parsed is not None
            else None
        )
        where, fix, drawn = "", None, ""
        if found is not None:
            line, statement, fix, target = found
            absolute = func.__code__.co_firstlineno + line - 1
            place = where_in_cells(locator, func.__code__.co_filename, absolute)
            where = f" ({place}: `{statement}`)"
            drawn = f"`{target}` is" if target else "its value is"
        text = (
            f"`{label}(...)` in {owner}{where} is Python randomness: {once}, so "
            f"{drawn or 'the number is'} drawn once and kept as a constant: every element "
            "gets the same values, in every epoch."
        )
        if fix is not None:
            shared = _shared_draw(fix)
            return f"{text}{shared} Draw inside the graph with TensorFlow's random ops: `{fix}`."
        return (
            f"{text} Draw inside the graph with TensorFlow's random ops (`tf.random.normal`, "
            "`tf.random.uniform`, with the element's shape)."
        )
    if effect.action == fx.PRINT:
        return (
            f"`print(...)` in {owner} runs only while tracing: {once}, so it prints once "
            "(symbolic tensors, not values). Use `tf.print(...)`, which prints every element."
        )
    dataset = _assigned_name(map_line) or "dataset"
    if effect.action in (fx.MUTATION, fx.SUBSCRIPT):
        what = (
            f"`{label}.{effect.detail}(...)`"
            if effect.action == fx.MUTATION
            else f"`{label}[...] = ...`"
        )
        collect = (
            f" `for item in {dataset}.as_numpy_iterator(): {label}.{effect.detail}(item)`"
            if effect.action == fx.MUTATION and effect.detail in ("append", "extend")
            else f" `for item in {dataset}.as_numpy_iterator(): ...`"
        )
        return (
            f"{what} in {owner} runs only while tracing: {once}, so `{label}` changes once "
            "(with a symbolic tensor that holds no value), not once per element. Return the "
            f"value from {owner} and collect it by iterating the dataset:{collect}."
        )
    operator = effect.detail or "+="
    return (
        f"`{label} {operator} ...` in {owner} runs only while tracing: {once}, so `{label}` "
        "counts traces, not elements. Count elements by iterating the dataset, or with "
        f"`{dataset}.reduce(0, lambda count, _: count + 1)`."
    )


def _frozen_text(func: types.FunctionType, name: str, old: Any, new: Any, frozen: _Frozen) -> str:
    owner = f"`{func.__name__}`" if func.__name__ != "<lambda>" else "the lambda"
    via = f" (`{frozen.map_line}`)" if frozen.map_line else ""
    old_text, new_text = fx.value_text(old), fx.value_text(new)
    text = (
        f"{owner} read `{name}` = {old_text} when {frozen.transformation} traced it{via}; "
        f"`{name}` is now {new_text}, but the dataset's graph still uses {old_text}: Python "
        "values read while tracing are constants of the graph, and later changes do not "
        "reach it."
    )
    if type(new) in (int, float) and type(old) in (int, float):
        # A float variable: the values dataset functions scale or shift by mix with
        # float tensors (an int32 variable would not).
        return (
            f"{text} Keep it in a variable the graph reads for every element: "
            f"`{name} = tf.Variable({float(old)!r})` once, then "
            f"`{name}.assign({float(new)!r})`."
        )
    return f"{text} Build the dataset again (call `.map` again) after changing `{name}`."
