"""``(N, 1)`` against ``(N,)`` inside the learner's own loss or metric, at its first call.

``broadcast.py`` reads a cell's top-level expressions after the cell and the graphs traced
during it. A loss or a metric the learner wrote as a function or a method and calls eagerly
(``loss_fn(y[:4], model(x[:4]))``, ``tp.update_state(y_flat, probs)``) holds its operands
only while it runs: after the cell they are gone, and a traced use may come a cell later
or never. So the function is watched while it runs, the first time a cell calls it:

- after each cell's parse (``parsed_source``, shared), the names of the functions and
  methods it defines whose body holds a reduced element-wise expression on two names
  (``broadcast.expressions_in``: ``tf.reduce_mean(tf.square(y_true - y_pred))``,
  ``ops.sum(y_true * y_pred)``) are kept: names and line numbers only, never an object;
- a later cell that calls one of those names (``loss_fn(...)``, ``tp.update_state(...)``,
  or an instance of the learner's class, whose ``call``/``update_state`` Keras runs) runs
  with a trace function (``sys.settrace``) for Python calls only, until each watched
  function returned once or ``MAX_CALL_EVENTS`` calls went by; a cell that calls none runs
  as before (one set intersection). Not installed when another tracer (a debugger,
  coverage) is set, and removed after the cell;
- not installed either when a top-level statement before the first one calling a watched
  name is or holds a ``for`` or ``while`` loop (outside a ``def``): while a trace function
  is set, CPython runs all of the cell's Python code on its slower tracing path until the
  watched function returns: a 3M-iteration pure-Python loop before the call took 0.47 s
  against 0.29 s (+60%, Python 3.11, ``benchmarks/bench_monitor.py``). Such a cell is
  not watched; a later cell calling the function with no loop before it is. The same
  rule on Python 3.12+ (``sys.monitoring`` local events would need the watched code
  objects, which the cell may not have made yet);
- at the watched function's return its frame's values are read as shapes and dtypes only
  (``broadcast._operand``: no ``repr``, no user code run); graph tensors (a trace) are
  left to ``broadcast.scan_graph``;
- a watched plain function the cell called but the watch never read (the cell loops
  before calling it, or a model's first call spent ``MAX_CALL_EVENTS`` before the loss in
  a custom training loop, ``loss = loss_fn(y[batch], model(x[batch]))``) is read after
  the cell from its calls instead: each call at the cell's level (a loop's body too, not
  a ``def``) maps its arguments to the parameters the function's reduced expression meets
  unchanged (or through an element-wise function of one parameter and numbers:
  ``labels * np.log(p)`` meets ``p``), and the arguments as written are read as shapes
  from the names they hold (``operand_shapes.py``: ``y[batch]`` is followed through its
  positions), when none of
  those names is assigned again after the call. The note is the same, with the call
  rewritten as its fix.

The note is ``broadcast.broadcast_text`` in the function's names (both operands, their
shapes, the two rewritten expressions), then the call that gave the values, with the
argument to reshape there when it reached the function unchanged. The same return is read
for a ``reduce_sum`` over the batch axis in a function returning a scalar
(``batch_sums.py``): such functions are watched too.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import sys
from types import CodeType, FrameType, ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.symptoms.batch_sums import SECTION as BATCH_SECTION
from jupyterlab_tfcoach.monitor.symptoms.batch_sums import (
    BatchSum,
    batch_size,
    batch_sum_calls,
    batch_sum_text,
    summed_over_batch,
)
from jupyterlab_tfcoach.monitor.symptoms.broadcast import (
    SECTION,
    Broadcast,
    Expression,
    _indexed,
    _operand,
    _unchanged_parameters,
    broadcast_text,
    expressions_in,
    matrix_from_vectors,
    other_operands,
    squeezed_operand,
    where_in_cells,
)
from jupyterlab_tfcoach.monitor.symptoms.broadcast_origins import follow_operand, vector_origin
from jupyterlab_tfcoach.monitor.symptoms.operand_shapes import SHAPE_KEEPING
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, reference_path

# Python calls seen before the trace function gives up for the cell: a watched function
# is usually called within a few thousand; a cell that trains first stays cheap.
MAX_CALL_EVENTS = 10_000
MAX_CELL_CHARS = 50_000
_MAX_WATCHED = 256
# Methods Keras calls for the learner: ``metric(y, p)`` runs ``update_state``, ``loss(y, p)``
# and ``layer(x)`` run ``call``.
_RUN_BY_KERAS = frozenset({"call", "update_state", "__call__"})
_SYMBOLIC = frozenset({"SymbolicTensor", "KerasTensor"})
MAX_NOTES = 2
# Frames read outwards from the watched function for where its operand was made.
MAX_ORIGIN_FRAMES = 24


def _defined_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    found: list[ast.FunctionDef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            found.append(node)
    return found


def _constructed(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """``{"tp": ("TruePositives",)}`` for ``tp = TruePositives()`` in the cell
    (``("keras", "metrics", "AUC")`` for ``keras.metrics.AUC()``)."""
    made: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
        ):
            path = reference_path(node.value.func)
            if path is not None:
                made[node.targets[0].id] = path
    return made


def _user_method(cls: Any, method: str) -> Any | None:
    """``cls.<method>`` when the first class of ``cls``'s MRO defining it is the
    learner's (not a library's), else None."""
    try:
        for klass in cls.__mro__:
            if method in klass.__dict__:
                return None if is_library_class(klass) else klass.__dict__[method]
    except Exception:
        return None
    return None


def _function_node(tree: ast.Module, code: CodeType) -> ast.FunctionDef | None:
    first = code.co_firstlineno
    for node in _defined_functions(tree):
        if node.name != code.co_name:
            continue
        lines = {node.lineno, *(d.lineno for d in node.decorator_list)}
        if first in lines:
            return node
    return None


class CallBroadcastWatch:
    """Watches the first call of the learner's functions that reduce an element-wise
    expression of two names, during the cells that call them."""

    def __init__(self, locator: CellLocator) -> None:
        self._locator = locator
        self._watched: set[str] = set()  # function and method names, from cell sources
        self._pending: set[str] = set()
        # Functions read in this cell, as (file, first line, name): no code object is kept.
        self._checked: set[tuple[str, int, str]] = set()
        # (file, line) of each expression told: the graph scan does not tell it again.
        self.told: set[tuple[str, int]] = set()
        self._expressions: dict[tuple[str, int, str], list[Expression]] = {}
        self._sums: dict[tuple[str, int, str], list[BatchSum]] = {}
        self._events = 0
        self._tracer = self._on_call
        self._installed = False
        self._found: dict[tuple[str, int, str], Note] = {}
        self._files: dict[str, int] = {}
        # This cell's tree and the watched names it calls: read after the cell for the
        # functions the watch did not read while they ran (``_read_after_cell``).
        self._cell_tree: ast.Module | None = None
        self._cell_calls: dict[str, int] = {}
        self._cell_lines: list[str] = []

    # ------------------------------------------------------------- the cell
    def begin_cell(self, source: str, namespace: dict[str, Any]) -> None:
        self._found = {}
        self._events = 0
        self._checked = set()
        self._cell_tree, self._cell_calls = None, {}
        if not source or len(source) > MAX_CELL_CHARS or "(" not in source:
            return
        tree = parsed_source(source)
        if tree is None:
            return
        for node in _defined_functions(tree):
            if node.name not in self._watched and self._reduces_pair(source, node):
                if len(self._watched) < _MAX_WATCHED:
                    self._watched.add(node.name)
        if not self._watched:
            return
        calls = self._called_watched(tree, namespace)
        self._cell_tree, self._cell_calls = (tree, calls) if calls else (None, {})
        self._cell_lines = source.splitlines() if calls else []
        if not calls or sys.gettrace() is not None or _loop_before(tree, min(calls.values())):
            return
        self._pending = set(calls)
        self._files = self._locator.cell_files()
        sys.settrace(self._tracer)
        self._installed = True

    def end_cell(self, namespace: dict[str, Any] | None = None) -> list[Note]:
        """The notes of the cell; ``namespace`` when the cell completed: the watched
        functions it called that the watch did not read are read from their calls."""
        self._stop()
        if namespace is not None:
            try:
                self._read_after_cell(namespace)
            except Exception:
                pass
        self._cell_tree, self._cell_calls = None, {}
        found, self._found = self._found, {}
        for filename, line, _ in found:
            if len(self.told) < _MAX_WATCHED:
                self.told.add((filename, line))
        return list(found.values())[:MAX_NOTES]

    def _stop(self) -> None:
        if self._installed:
            self._installed = False
            if sys.gettrace() == self._tracer:
                sys.settrace(None)
        self._pending = set()

    def _reduces_pair(self, source: str, node: ast.FunctionDef) -> bool:
        try:
            return bool(expressions_in(source, node.body) or batch_sum_calls(source, node.body))
        except Exception:
            return False

    def _called_watched(self, tree: ast.Module, namespace: dict[str, Any]) -> dict[str, int]:
        """The watched names this cell calls, each with the first line calling it: a
        function of its own or of an earlier cell (``loss_fn(...)``), a method of an
        object of the learner's class (``tp.update_state(...)``), or the method Keras runs
        when such an object is called (``metric(y, p)`` runs ``update_state``). A Keras
        object's own methods of the same name are not the learner's, and a function of
        an earlier cell whose body holds no such expression is not watched: neither
        starts the watch."""
        defined = {node.name for node in _defined_functions(tree)}
        made = _constructed(tree)
        found: dict[str, int] = {}

        def add(name: str, line: int) -> None:
            found[name] = min(found.get(name, line), line)

        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name):
                name = func.id
                if name in self._watched and (
                    name in defined or self._watchable(namespace.get(name))
                ):
                    add(name, node.lineno)
                cls = self._class_of(name, namespace, made)
                for method in _RUN_BY_KERAS & self._watched:
                    if cls is not None and self._watchable(_user_method(cls, method)):
                        add(method, node.lineno)
            elif isinstance(func, ast.Attribute) and func.attr in self._watched:
                holder = func.value
                if not isinstance(holder, ast.Name):
                    add(func.attr, node.lineno)  # ``self.loss_fn(...)``, ``net.head.call``: unknown
                    continue
                cls = self._class_of(holder.id, namespace, made)
                if cls is None or self._watchable(_user_method(cls, func.attr)):
                    add(func.attr, node.lineno)
        return found

    def _watchable(self, function: Any) -> bool:
        """A function of a notebook cell whose body reduces an element-wise pair."""
        code = (
            getattr(function, "__code__", None) if type(function).__name__ == "function" else None
        )
        if not isinstance(code, CodeType) or code.co_filename not in self._locator.cell_files():
            return False
        return bool(self._expressions_of(code) or self._sums.get(_code_key(code)))

    @staticmethod
    def _class_of(
        name: str, namespace: dict[str, Any], made: dict[str, tuple[str, ...]]
    ) -> Any | None:
        """The class of what ``name`` holds: made in this cell (``Cls()``), else now."""
        if name in made:
            cls = _class_at(made[name], namespace)
            return cls if isinstance(cls, type) else None
        if name not in namespace:
            return None
        value = namespace[name]
        return None if isinstance(value, type) else type(value)

    # ----------------------------------------------------- the trace function
    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        try:
            self._events += 1
            if self._events > MAX_CALL_EVENTS:
                self._stop()
                return None
            code = frame.f_code
            if code.co_name not in self._pending:
                return None
            key = _code_key(code)
            if key in self._checked:
                return None
            if code.co_filename not in self._files and not self._refresh(code.co_filename):
                return None
            if not self._expressions_of(code) and not self._sums.get(key):
                self._checked.add(key)
                return None
            frame.f_trace_lines = False
            return self._on_return
        except Exception:
            return None

    def _refresh(self, filename: str) -> bool:
        self._files = self._locator.cell_files()
        return filename in self._files

    def _on_return(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event != "return":
            return self._on_return
        try:
            self._read_return(frame, arg)
        except Exception:
            pass
        return None

    def _expressions_of(self, code: CodeType) -> list[Expression]:
        key = _code_key(code)
        found = self._expressions.get(key)
        if found is None:
            source = "".join(linecache.getlines(code.co_filename))
            tree = parsed_source(source) if source else None
            node = _function_node(tree, code) if tree is not None else None
            found = expressions_in(source, node.body) if node is not None else []
            self._expressions[key] = found
            self._sums[key] = batch_sum_calls(source, node.body) if node is not None else []
        return found

    # ------------------------------------------------------------- reading
    def _read_return(self, frame: FrameType, returned: Any = None) -> None:
        code = frame.f_code
        values = _frame_values(frame)
        self._read_batch_sums(code, values, returned)
        symbolic = False
        for expression in self._expressions_of(code):
            left = _operand(expression.left, values)
            right = _operand(expression.right, values)
            if left is None or right is None:
                continue
            if type(left.value).__name__ in _SYMBOLIC or type(right.value).__name__ in _SYMBOLIC:
                symbolic = True
                continue
            column_index = matrix_from_vectors(left.shape, right.shape)
            if column_index is None:
                continue
            column, flat = (left, right) if column_index == 0 else (right, left)
            key = (code.co_filename, expression.line, expression.text)
            if key in self._found or (code.co_filename, expression.line) in self.told:
                continue  # told in this cell, or in an earlier one: each cause once
            where = where_in_cells(self._locator, code.co_filename, expression.line)
            found = _broadcast(where, code, expression, column_index, column, flat)
            found = _with_other_operands(found, code.co_filename, values)
            text = (
                broadcast_text(found) + self._call_site(frame, found) + self._origin(frame, found)
            )
            self._found[key] = reports.note(text, SECTION)
        if symbolic:
            return  # a trace: the graph scan reads it; an eager call later is read here
        self._checked.add(_code_key(code))
        self._pending.discard(code.co_name)
        if not self._pending:
            self._stop()

    # --------------------------------------------------- after the cell, from its calls
    def _read_after_cell(self, namespace: dict[str, Any]) -> None:
        """The watched plain functions this cell called whose return the watch never
        read, read from their calls in the cell with the values the arguments' names
        hold now (see the module's docstring)."""
        tree = self._cell_tree
        if tree is None or not self._cell_calls:
            return
        files = self._locator.cell_files()
        if not files:
            return
        running = max(files, key=files.__getitem__)
        for name in self._cell_calls:
            function = namespace.get(name)
            code = (
                getattr(function, "__code__", None)
                if type(function).__name__ == "function"
                else None
            )
            if not isinstance(code, CodeType) or code.co_filename not in files:
                continue
            if _code_key(code) in self._checked:
                continue  # read at its return
            expressions = self._expressions_of(code)
            source = "".join(linecache.getlines(code.co_filename))
            definition = parsed_source(source) if expressions and source else None
            node = _function_node(definition, code) if definition is not None else None
            if node is None:
                continue
            unchanged = set(_unchanged_parameters(node))
            parameters = list(code.co_varnames[: code.co_argcount])
            for call in _cell_level_calls(tree, name):
                arguments = _arguments_by_parameter(call, parameters)
                for expression in expressions:
                    self._read_call(
                        code, expression, call, arguments, unchanged, tree, running, namespace
                    )

    def _read_call(
        self,
        code: CodeType,
        expression: Expression,
        call: ast.Call,
        arguments: dict[str, ast.expr],
        unchanged: set[str],
        tree: ast.Module,
        running: str,
        namespace: dict[str, Any],
    ) -> None:
        """One call's arguments against one reduced expression of the function."""
        # `labels * np.log(p)`: each side the parameter it is an element-wise function of.
        sides = (
            _parameter_of(expression.left, unchanged),
            _parameter_of(expression.right, unchanged),
        )
        if sides[0] is None or sides[1] is None or sides[0] == sides[1]:
            return
        given = [arguments.get(sides[0]), arguments.get(sides[1])]
        if given[0] is None or given[1] is None:
            return
        if _assigned_after(tree, given, call.end_lineno or call.lineno):
            return  # the names hold other values now than at the call
        lines = self._cell_lines
        line = lines[call.lineno - 1] if 0 < call.lineno <= len(lines) else ""
        texts = [_segment_on(line, node) for node in given]
        if texts[0] is None or texts[1] is None:
            return
        left, right = (_operand(text, namespace) for text in texts)
        if left is None or right is None:
            return
        if type(left.value).__name__ in _SYMBOLIC or type(right.value).__name__ in _SYMBOLIC:
            return
        column_index = matrix_from_vectors(left.shape, right.shape)
        if column_index is None:
            return
        key = (code.co_filename, expression.line, expression.text)
        if key in self._found or (code.co_filename, expression.line) in self.told:
            return
        column, flat = (left, right) if column_index == 0 else (right, left)
        parameters = (sides[0], sides[1])
        call_where = where_in_cells(self._locator, running, call.lineno)
        also = self._same_line_calls(code, call, tree, sides, column_index, line, namespace)
        call_fix = _reshaped_call(line, given, texts, parameters, column_index, call_where, also)
        where = where_in_cells(self._locator, code.co_filename, expression.line)
        found = _broadcast(where, code, expression, column_index, column, flat, call_fix)
        self._found[key] = reports.note(broadcast_text(found), SECTION)

    @staticmethod
    def _same_line_calls(
        code: CodeType,
        call: ast.Call,
        tree: ast.Module,
        sides: tuple[str, str],
        column_index: int,
        line: str,
        namespace: dict[str, Any],
    ) -> list[tuple[ast.expr, str]]:
        """The other calls of the function on the call's line whose arguments broadcast
        the same way (``nll(before, y), nll(after, y)``): their ``(N,)`` arguments, to be
        widened by the same fix, which would otherwise leave them wrong."""
        if not isinstance(call.func, ast.Name):
            return []
        parameters = list(code.co_varnames[: code.co_argcount])
        found: list[tuple[ast.expr, str]] = []
        for other in _cell_level_calls(tree, call.func.id):
            if other is call or other.lineno != call.lineno:
                continue
            arguments = _arguments_by_parameter(other, parameters)
            given = [arguments.get(sides[0]), arguments.get(sides[1])]
            if given[0] is None or given[1] is None:
                continue
            texts = [_segment_on(line, node) for node in given]
            if texts[0] is None or texts[1] is None:
                continue
            left, right = (_operand(text, namespace) for text in texts)
            if left is None or right is None:
                continue
            if matrix_from_vectors(left.shape, right.shape) == column_index:
                flat = given[1 - column_index]
                text = texts[1 - column_index]
                if flat is not None and text is not None:
                    found.append((flat, text))
        return found

    def _read_batch_sums(self, code: CodeType, values: Any, returned: Any) -> None:
        """A loss function that sums over the batch axis (``batch_sums.py``)."""
        sums = self._sums.get(_code_key(code))
        if not sums:
            return
        described = describe("returned", returned)
        if described is None or described.shape != ():
            return  # not a loss: sums over axis 0 are what it computes
        if type(returned).__name__ in _SYMBOLIC:
            return
        parameters = list(code.co_varnames[: code.co_argcount])
        size = batch_size(values, parameters)
        if size is None:
            return
        for found in sums:
            shape = summed_over_batch(found, values, size)
            key = (code.co_filename, found.line, found.text)
            if shape is None or key in self._found:
                continue
            if (code.co_filename, found.line) in self.told:
                continue
            where = where_in_cells(self._locator, code.co_filename, found.line)
            text = batch_sum_text(found, shape, where, code.co_qualname)
            self._found[key] = reports.note(text, BATCH_SECTION)

    def _origin(self, frame: FrameType, found: Broadcast) -> str:
        """Where the ``(N,)`` operand's name was made a vector, followed out through the
        running frames (``broadcast_origins.py``), as one more sentence."""
        expression = found.expression
        if expression is None:
            return ""
        flat = (expression.left, expression.right)[1 - found.column_index]
        if not flat.isidentifier():
            return ""
        chain: list[tuple[str, int, str]] = [
            (frame.f_code.co_filename, expression.line, frame.f_code.co_name)
        ]
        outer = frame.f_back
        while outer is not None and len(chain) < MAX_ORIGIN_FRAMES:
            chain.append((outer.f_code.co_filename, outer.f_lineno, outer.f_code.co_name))
            outer = outer.f_back
        files = self._locator.cell_files()
        query = follow_operand(flat, chain, files)
        if query is None:
            return ""
        namespace = (
            _frame_values(frame) if query.function == frame.f_code.co_name else frame.f_globals
        )
        origin = vector_origin(
            query,
            found.flat_shape,
            files,
            lambda filename, line: where_in_cells(self._locator, filename, line),
            namespace,
        )
        if origin is None:
            return ""
        return origin.sentence(
            show_shape(found.flat_shape),
            show_shape(found.column_shape),
            with_fix=found.flat_elsewhere is None,
        )

    def _call_site(self, frame: FrameType, found: Broadcast) -> str:
        """`` The call at line 4 of this cell gave `y_flat`, a (112,) ... as `y_true`...``"""
        caller = frame.f_back
        code = frame.f_code
        if caller is None or caller.f_code.co_filename not in self._files:
            return ""
        line = linecache.getline(caller.f_code.co_filename, caller.f_lineno).strip()
        parsed = _call_on_line(line, code.co_name)
        if parsed is None:
            return ""
        call, parsed_line = parsed
        parameters = list(code.co_varnames[: code.co_argcount])
        if parameters and parameters[0] == "self" and isinstance(call.func, ast.Attribute):
            parameters = parameters[1:]
        arguments = {
            parameter: ast.get_source_segment(parsed_line, node)
            for parameter, node in zip(parameters, call.args, strict=False)
        }
        arguments.update(
            {
                kw.arg: ast.get_source_segment(parsed_line, kw.value)
                for kw in call.keywords
                if kw.arg
            }
        )
        expression = found.expression
        assert expression is not None
        operands = [expression.left, expression.right]
        column, flat = operands[found.column_index], operands[1 - found.column_index]
        caller_values = _frame_values(caller)
        given: list[str] = []
        reshape: str | None = None
        for operand, shape, kind in (
            (flat, found.flat_shape, "flat"),
            (column, found.column_shape, "column"),
        ):
            argument = arguments.get(operand)
            if not argument:
                continue
            described = _operand(argument, caller_values)
            if described is None or described.shape != shape:
                continue
            given.append(f"`{argument}`, {show_shape(shape)}, as `{operand}`")
            if reshape is None:
                reshape = (
                    _indexed(argument, "[:, None]")
                    if kind == "flat"
                    else squeezed_operand(argument, described.kind)
                )
        if not given:
            return ""
        where = where_in_cells(self._locator, caller.f_code.co_filename, caller.f_lineno)
        return (
            f" The call `{line}` ({where}) gave {' and '.join(given)}; giving "
            f"`{reshape}` there instead makes the shapes agree for this call only."
        )


def _class_at(path: tuple[str, ...], namespace: dict[str, Any]) -> Any | None:
    """What ``keras.metrics.AUC`` names: attributes are read on modules only (a
    library's module, never a user object), else on the namespace's own value."""
    if path[0] not in namespace:
        return None
    value = namespace[path[0]]
    for attribute in path[1:]:
        if not isinstance(value, ModuleType):
            return None
        try:
            value = getattr(value, attribute)
        except Exception:
            return None
    return value


def _loop_before(tree: ast.Module, line: int) -> bool:
    """Whether a top-level statement ending before ``line`` is or holds a ``for`` or
    ``while`` loop that runs in the cell (one inside a ``def`` or ``lambda`` does not)."""
    for statement in tree.body:
        if statement.lineno > line or (statement.end_lineno or statement.lineno) >= line:
            return False
        pending: list[ast.AST] = [statement]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.For | ast.AsyncFor | ast.While):
                return True
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            pending.extend(ast.iter_child_nodes(node))
    return False


def _code_key(code: CodeType) -> tuple[str, int, str]:
    return code.co_filename, code.co_firstlineno, code.co_name


def _frame_values(frame: FrameType) -> dict[str, Any]:
    """The frame's locals over its globals, as the dict the shape readers take, without
    copying the kernel's namespace."""
    try:
        return _Layered(frame.f_locals, frame.f_globals)
    except Exception:
        return {}


class _Layered(dict):  # type: ignore[type-arg]
    """Two namespaces read as one (locals first) without copying either."""

    def __init__(self, first: dict[str, Any], second: dict[str, Any]) -> None:
        super().__init__()
        self._first, self._second = first, second

    def __contains__(self, key: object) -> bool:
        return key in self._first or key in self._second

    def __getitem__(self, key: str) -> Any:
        if key in self._first:
            return self._first[key]
        return self._second[key]

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[key] if key in self else default


def _call_on_line(line: str, name: str) -> tuple[ast.Call, str] | None:
    """The one call of ``name`` on a source line, and the text it was parsed from (a
    ``for``/``with`` header gets a body, a ``return`` loses its keyword)."""
    for candidate in (line, line + " pass", line.removeprefix("return ")):
        try:
            tree = ast.parse(candidate)
        except SyntaxError:
            continue
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and call_name(n) == name]
        return (calls[0], candidate) if len(calls) == 1 else None
    return None


def _with_other_operands(found: Broadcast, filename: str, values: Any) -> Broadcast:
    """The finding with the line's other ``(N, 1)``/``(N,)`` operands, when it has any."""
    expression = found.expression
    if expression is None:
        return found
    line = linecache.getline(filename, expression.line)
    column, flat = other_operands(line, expression, values, found.column_shape[0])
    if column is None and flat is None:
        return found
    return dataclasses.replace(found, column_elsewhere=column, flat_elsewhere=flat)


def _cell_level_calls(tree: ast.Module, name: str) -> list[ast.Call]:
    """The calls ``name(...)`` the cell runs itself: at its top level or in its loops,
    ``with`` blocks and branches, not in a ``def``, ``lambda``, class or comprehension,
    whose names would be another scope's."""
    found: list[ast.Call] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, _OTHER_SCOPES):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda call: (call.lineno, call.col_offset))


_OTHER_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _arguments_by_parameter(call: ast.Call, parameters: list[str]) -> dict[str, ast.expr]:
    """The call's arguments by the parameter they fill; none when it unpacks ``*args``
    or ``**kwargs`` (which fill parameters the call does not show)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return {}
    if any(keyword.arg is None for keyword in call.keywords):
        return {}
    arguments: dict[str, ast.expr] = dict(zip(parameters, call.args, strict=False))
    arguments.update({kw.arg: kw.value for kw in call.keywords if kw.arg in parameters})
    return arguments


def _assigned_after(tree: ast.Module, nodes: list[ast.expr | None], line: int) -> bool:
    """Whether a name the argument ``nodes`` read is assigned in the cell after ``line``."""
    names = {
        name.id
        for node in nodes
        if node is not None
        for name in ast.walk(node)
        if isinstance(name, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if node.id in names and node.lineno > line:
                return True
    return False


def _segment_on(line: str, node: ast.expr) -> str | None:
    """The source of ``node`` written on the one ``line`` (None across lines)."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return None
    encoded = line.encode()
    text = encoded[node.col_offset : node.end_col_offset].decode(errors="replace")
    return text or None


def _parameter_of(side: str, parameters: set[str]) -> str | None:
    """The one parameter an operand of a reduced expression has the shape of: the
    parameter itself, or an element-wise function of it and numbers (``np.log(p)``,
    ``1 - labels``, ``-scores``, ``tf.square(err)``, ``p ** 2``); None for anything else."""
    if side in parameters:
        return side
    try:
        node: ast.AST = ast.parse(side, mode="eval").body
    except SyntaxError:
        return None
    for _ in range(_MAX_SIDE_DEPTH):
        if isinstance(node, ast.Name):
            return node.id if node.id in parameters else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            node = node.operand
        elif isinstance(node, ast.BinOp):
            numbers = [_is_number(node.left), _is_number(node.right)]
            if numbers.count(True) != 1:
                return None
            node = node.right if numbers[0] else node.left
        elif (
            isinstance(node, ast.Call)
            and (call_name(node) or "") in SHAPE_KEEPING
            and len(node.args) == 1
            and not node.keywords
        ):
            node = node.args[0]
        else:
            return None
    return None


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


_MAX_SIDE_DEPTH = 6


def _reshaped_call(
    line: str,
    given: list[ast.expr | None],
    texts: list[str | None],
    parameters: tuple[str, str],
    column_index: int,
    where: str,
    also: list[tuple[ast.expr, str]] | None = None,
) -> tuple[str, str, str, str, str] | None:
    """``Broadcast.call_fix`` for a call read after the cell: its line with the ``(N,)``
    argument widened by ``[:, None]`` (the ``(N, 1)`` one keeps its shape), when the call
    is written on that one line; ``also``: the same line's other calls' ``(N,)``
    arguments, widened too."""
    flat_index = 1 - column_index
    node, text = given[flat_index], texts[flat_index]
    if node is None or text is None:
        return None
    encoded = line.encode()
    widen = sorted([(node, text), *(also or [])], key=lambda pair: pair[0].col_offset, reverse=True)
    for each, written in widen:
        start, end = each.col_offset, each.end_col_offset or 0
        widened = _indexed(written, "[:, None]").encode()
        encoded = encoded[:start] + widened + encoded[end:]
    fixed = encoded.decode(errors="replace").strip()
    shown = line.strip()
    if not shown or fixed == shown:
        return None
    return where, shown, fixed, text, parameters[flat_index]


def _broadcast(
    where: str,
    code: CodeType,
    expression: Expression,
    column_index: int,
    column: Any,
    flat: Any,
    call_fix: tuple[str, str, str, str, str] | None = None,
) -> Broadcast:
    """The ``Broadcast`` of the ``(N, 1)`` operand ``column`` against the ``(N,)`` one
    ``flat`` (described operands) on ``expression`` in the function ``code`` runs."""
    return Broadcast(
        where=f"{where}, in `{code.co_qualname}`",
        expression=expression,
        column_index=column_index,
        column_text=column.description,
        flat_text=flat.description,
        column_shape=column.shape,
        flat_shape=flat.shape,
        result_shape=(column.shape[0], flat.shape[0]),
        column_kind=column.kind,
        call_fix=call_fix,
    )
