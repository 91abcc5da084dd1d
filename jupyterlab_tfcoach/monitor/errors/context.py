"""What an error explanation may know besides the message: where in the user's cells it
failed, the source of that statement, and what kind of value a name holds.

Everything here is read-only and short-lived: a context lives for one ``explain`` call,
so the frame locals and namespace it reads are not kept. Values found through names are
only classified by exact ``type()`` checks against classes from ``sys.modules`` (never
``isinstance``, ``getattr`` or ``str`` on user objects, which may run user code).
"""

from __future__ import annotations

import abc
import ast
import io
import linecache
import re
import sys
import tokenize
from dataclasses import dataclass, field
from types import GetSetDescriptorType, TracebackType
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import instance_dict, is_library_class
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

# Frames TensorFlow lists in an "in user code:" message: ``File "<path>", line <n>, in <fn>``.
_USER_CODE_FRAME = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>[\w<>]*)', re.MULTILINE
)
# AutoGraph's generated copy of a traced function: its frame holds the function's locals
# under the learner's names (``tf__head`` for ``head``).
_CONVERTED_FILE = "__autograph_generated_file"
_CONVERTED_PREFIX = "tf__"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Cells longer than this are not parsed: an explanation must stay cheap.
_MAX_CELL_CHARS = 100_000


def strip_ansi(text: str) -> str:
    """Keras 3 wraps parts of its messages in terminal bold escapes."""
    return _ANSI.sub("", text)


@dataclass(frozen=True)
class ParsedError:
    type: str
    message: str
    inside_tf_function: bool
    # The whole text, uncapped: key phrases of long TF messages sit near the end.
    full_message: str = ""


@dataclass(frozen=True)
class Position:
    """A source range in a cell, as in ``ast`` (1-based lines, UTF-8 byte columns)."""

    line: int
    end_line: int | None = None
    column: int | None = None
    end_column: int | None = None


@dataclass
class CellFrame:
    """One place in a notebook cell the error went through, innermost first in a context."""

    filename: str
    position: Position
    # A function frame's locals (a copy made by Python); None for frames known only
    # from TF's message, and for module frames (their locals are the namespace).
    local_names: Any = None
    _tree: ast.Module | None = field(default=None, repr=False)
    _source: str | None = field(default=None, repr=False)

    def source(self) -> str:
        if self._source is None:
            self._source = "".join(linecache.getlines(self.filename))
        return self._source

    def tree(self) -> ast.Module | None:
        if self._tree is None:
            source = self.source()
            if not source or len(source) > _MAX_CELL_CHARS:
                return None
            try:
                self._tree = ast.parse(source)
            except (SyntaxError, ValueError):
                return None
        return self._tree

    def statement(self) -> ast.stmt | None:
        """The innermost statement containing the failing line."""
        tree = self.tree()
        if tree is None:
            return None
        line = self.position.line
        found: ast.stmt | None = None
        body: list[ast.stmt] = tree.body
        while True:
            inner = None
            for statement in body:
                end = statement.end_lineno or statement.lineno
                if statement.lineno <= line <= end:
                    inner = statement
                    # ``a = f(); b = g()``: the statement holding the failing column.
                    if self._holds_column(statement):
                        break
            if inner is None:
                return found
            found = inner
            body = [
                child
                for name in ("body", "orelse", "finalbody", "handlers")
                for child in getattr(inner, name, []) or []
                if isinstance(child, ast.stmt)
            ]
            for handler in getattr(inner, "handlers", []) or []:
                body.extend(handler.body)

    def _holds_column(self, statement: ast.stmt) -> bool:
        """Whether the failing column lies in ``statement`` (True when unknown)."""
        position = self.position
        if position.column is None or statement.end_lineno != position.line:
            return True
        return position.column < (statement.end_col_offset or 0)

    def following(self, statement: ast.stmt) -> ast.stmt | None:
        """The statement right after ``statement`` in the same block, if any."""
        tree = self.tree()
        if tree is None:
            return None
        for node in ast.walk(tree):
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if type(block) is list and any(child is statement for child in block):
                    index = next(i for i, child in enumerate(block) if child is statement)
                    return block[index + 1] if index + 1 < len(block) else None
        return None

    def header(self) -> list[ast.AST]:
        """The parts of the failing statement that run on its line: a compound
        statement's condition or iterable, not its body."""
        statement = self.statement()
        if statement is None:
            return []
        if isinstance(statement, (ast.If, ast.While)):
            return [statement.test]
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            return [statement.iter]
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            return [item.context_expr for item in statement.items]
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return list(statement.decorator_list)
        if isinstance(statement, ast.Try):
            return []
        return [statement]

    def segment(self, node: ast.AST) -> str | None:
        return ast.get_source_segment(self.source(), node)

    def enclosing_functions(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda]:
        """The functions (and lambdas) of the cell whose body holds the failing line."""
        tree = self.tree()
        if tree is None:
            return []
        line = self.position.line
        return [
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ]

    def function_bound_names(self) -> set[str]:
        """Names the enclosing functions bind (parameters, assignments): where the frame's
        locals are unknown (a traced function known from TensorFlow's message), the
        namespace's value of such a name is not the one the line used."""
        names: set[str] = set()
        for function in self.enclosing_functions():
            names |= bound_names(function)
        return names

    def at_position(self, node: ast.AST) -> bool:
        """Whether ``node`` is exactly the expression the failing instruction belongs to."""
        position = self.position
        if position.column is None:
            return False
        return (
            getattr(node, "lineno", None) == position.line
            and getattr(node, "end_lineno", None) == position.end_line
            and getattr(node, "col_offset", None) == position.column
            and getattr(node, "end_col_offset", None) == position.end_column
        )


class ErrorContext:
    """The cells an error went through, innermost first, and the user's names."""

    def __init__(
        self,
        exception: BaseException,
        parsed: ParsedError,
        namespace: dict[str, Any] | None,
        cell_files: dict[str, int] | None,
    ) -> None:
        self.namespace = namespace if type(namespace) is dict else {}
        self._cell_files = cell_files if type(cell_files) is dict else {}
        self._exception = exception
        self._parsed = parsed
        self._frames: list[CellFrame] | None = None
        # Names the report's variable entries already explain as rebound to a tensor (with
        # their fix): an explanation of the same cause points there instead of repeating it.
        self.reported_rebinds: frozenset[str] = frozenset()

    @property
    def exception(self) -> BaseException:
        return self._exception

    @property
    def cell_files(self) -> dict[str, int]:
        """The cells' code file names -> their ``In[n]`` numbers."""
        return self._cell_files

    def failing_name_assignment(self) -> tuple[CellFrame, ast.Module, ast.Assign, str] | None:
        """(the innermost cell frame, its tree, the failing statement, the name it binds)
        when that statement is ``name = value``; None otherwise."""
        frames = self.frames()
        if not frames:
            return None
        frame = frames[0]
        statement = frame.statement()
        tree = frame.tree()
        if (
            tree is None
            or not isinstance(statement, ast.Assign)
            or len(statement.targets) != 1
            or not isinstance(statement.targets[0], ast.Name)
        ):
            return None
        return frame, tree, statement, statement.targets[0].id

    def frames(self) -> list[CellFrame]:
        if self._frames is None:
            try:
                self._frames = self._collect_frames()
            except Exception:
                self._frames = []
        return self._frames

    def _collect_frames(self) -> list[CellFrame]:
        files = self._cell_files
        if not files:
            return []
        frames: list[CellFrame] = []
        converted: list[tuple[str, Any]] = []
        traceback: TracebackType | None = self._exception.__traceback__
        while traceback is not None:
            code = traceback.tb_frame.f_code
            if _CONVERTED_FILE in code.co_filename and code.co_name.startswith(_CONVERTED_PREFIX):
                converted.append(
                    (code.co_name[len(_CONVERTED_PREFIX) :], traceback.tb_frame.f_locals)
                )
            if code.co_filename in files:
                frames.append(
                    CellFrame(
                        code.co_filename,
                        _position(traceback),
                        None if code.co_name == "<module>" else traceback.tb_frame.f_locals,
                    )
                )
            traceback = traceback.tb_next
        # Inside a tf.function the user's frames only appear in TF's message (the
        # traceback runs through AutoGraph's generated copy); they are deeper still.
        if self._parsed.inside_tf_function:
            for match in _USER_CODE_FRAME.finditer(self._parsed.full_message):
                if match.group("file") in files:
                    frame = CellFrame(match.group("file"), Position(int(match.group("line"))))
                    frame.local_names = _converted_locals(frame, match.group("function"), converted)
                    frames.append(frame)
        frames.reverse()
        return frames

    def lookup(self, name: str, frame: CellFrame | None) -> tuple[bool, Any]:
        """The value ``name`` has where ``frame`` runs: its locals, else the namespace."""
        if frame is not None and frame.local_names is not None and name in frame.local_names:
            return True, frame.local_names[name]
        if frame is not None and frame.local_names is None and frame.position.line:
            # A traced function's frame whose locals were not found: a name the function
            # binds is its own local, never the namespace's value of the same name.
            try:
                if name in frame.function_bound_names():
                    return False, None
            except Exception:
                return False, None
        if name in self.namespace:
            return True, self.namespace[name]
        return False, None

    def module_alias(self, module_name: str, default: str) -> str:
        """The name the user imported a module under (``tf``, ``np``)."""
        module = sys.modules.get(module_name)
        if module is None:
            return default
        if self.namespace.get(default) is module:
            return default
        for name, value in self.namespace.items():
            if value is module and type(name) is str and not name.startswith("_"):
                return name
        return default

    def resolve(self, node: ast.AST, frame: CellFrame | None) -> tuple[bool, Any]:
        """The value of a plain name, ``name.attr`` chain or ``name[int]`` without running
        user code: attributes only from instance dictionaries, items only from lists."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id, frame)
        if isinstance(node, ast.Attribute):
            found, value = self.resolve(node.value, frame)
            if not found:
                return False, None
            return instance_attribute(value, node.attr)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found, value = self.resolve(node.value, frame)
            index = node.slice.value
            if (
                found
                and type(value) is list
                and type(index) is int
                and -len(value) <= index < len(value)
            ):
                return True, value[index]
        return False, None


def _converted_locals(frame: CellFrame, function: str, converted: list[tuple[str, Any]]) -> Any:
    """The locals of AutoGraph's copy of the traced function the message frame ran in:
    the innermost copy of that name whose locals hold every parameter the cell's
    function declares; None when none does (a lambda, a function AutoGraph left as is)."""
    if not function or not converted:
        return None
    try:
        enclosing = frame.enclosing_functions()
        inner = max(enclosing, key=lambda node: node.lineno) if enclosing else None
        if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) or inner.name != function:
            return None
        arguments = inner.args
        parameters = {
            a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        }
        for name, local_names in reversed(converted):
            if name == function and type(local_names) is dict and parameters <= set(local_names):
                return local_names
    except Exception:
        return None
    return None


def _position(traceback: TracebackType) -> Position:
    line = traceback.tb_lineno
    try:
        positions = list(traceback.tb_frame.f_code.co_positions())
        start, end, column, end_column = positions[traceback.tb_lasti // 2]
        if start == line and None not in (end, column, end_column):
            return Position(line, end, column, end_column)
    except Exception:
        pass
    return Position(line)


def instance_attribute(value: Any, name: str) -> tuple[bool, Any]:
    """An object's own ``__dict__`` entry (``stored_state.instance_dict``), only when that
    dictionary is Python's own slot: a class may define ``__dict__`` itself, as a property
    whose code would run."""
    slot = next(
        (
            namespace["__dict__"]
            for namespace in map(_class_namespace, class_mro(value))
            if "__dict__" in namespace
        ),
        None,
    )
    if type(slot) is not GetSetDescriptorType:
        return False, None
    attributes = instance_dict(value)
    if attributes is not None and name in attributes:
        return True, attributes[name]
    return False, None


# Read through ``type``'s own slots: never an attribute lookup a metaclass could hook.
_type_mro = type.__dict__["__mro__"].__get__
_class_namespace = type.__dict__["__dict__"].__get__
_SAFE_METACLASSES = (type, abc.ABCMeta)


def class_mro(value: Any) -> tuple[type, ...]:
    """The MRO of ``type(value)``, the one policy for every explainer: read from ``type``'s
    slot (no attribute lookup), and only for classes whose metaclass is ``type``,
    ``abc.ABCMeta`` or TensorFlow's/Keras's own (``tf.Variable``'s ``VariableMetaclass``).
    A user metaclass gives ``()``: its ``mro()`` is the user's code and may claim any base."""
    cls = type(value)
    metaclass = type(cls)
    if metaclass not in _SAFE_METACLASSES and not is_library_class(metaclass):
        return ()
    try:
        mro = _type_mro(cls)
    except Exception:
        return ()
    return mro if type(mro) is tuple else ()


# What a value is, by exact types and MROs of classes from ``sys.modules``: the fine kinds
# (``value_kind``) the failing line describes; ``kind_of`` groups them for older explainers.
_CLASSES: dict[str, tuple[str, str]] = {
    "eager": ("tensorflow.python.framework.ops", "EagerTensor"),
    "symbolic": ("tensorflow.python.framework.ops", "SymbolicTensor"),
    "tensor": ("tensorflow.python.framework.tensor", "Tensor"),
    "variable": ("tensorflow.python.ops.variables", "Variable"),
    "keras_variable": ("keras.src.backend.common.variables", "Variable"),
    "keras_tensor": ("keras.src.backend.common.keras_tensor", "KerasTensor"),
    "layer": ("keras.src.layers.layer", "Layer"),
    "model": ("keras.src.models.model", "Model"),
    "module": ("tensorflow.python.module.module", "Module"),
    "dataset": ("tensorflow.python.data.ops.dataset_ops", "DatasetV2"),
    "schedule": ("keras.src.optimizers.schedules.learning_rate_schedule", "LearningRateSchedule"),
}
_KIND_ORDER = (
    ("variable", "variable"),
    ("keras_variable", "keras_variable"),
    ("symbolic", "symbolic"),
    ("eager", "tensor"),
    ("tensor", "tensor"),
    ("keras_tensor", "keras_tensor"),
    ("model", "model"),
    ("layer", "layer"),
    ("module", "module"),
    ("dataset", "dataset"),
)


def library_class(key: str) -> type | None:
    return loaded_class(*_CLASSES[key])


def value_kind(value: Any) -> str | None:
    """``"array"``, ``"variable"``, ``"keras_variable"``, ``"symbolic"``, ``"tensor"``,
    ``"keras_tensor"``, ``"model"``, ``"layer"``, ``"module"``, ``"dataset"`` or None."""
    cls = type(value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and cls is getattr(numpy, "ndarray", None):
        return "array"
    mro = class_mro(value)
    if not mro:
        return None
    for key, kind in _KIND_ORDER:
        found = library_class(key)
        if found is not None and found in mro:
            return kind
    return None


_COARSE = {
    "array": "array",
    "tensor": "tensor",
    "symbolic": "symbolic",
    "dataset": "dataset",
    "layer": "keras",
    "model": "keras",
}


def kind_of(value: Any) -> str | None:
    """``"array"``, ``"tensor"`` (an eager tensor), ``"symbolic"``, ``"dataset"``,
    ``"keras"`` (a layer or model) or None: ``value_kind`` grouped."""
    kind = value_kind(value)
    if kind == "tensor" and type(value) is not loaded_class(*_CLASSES["eager"]):
        return None
    return _COARSE.get(kind) if kind is not None else None


def dotted_root(node: ast.AST) -> ast.Name | None:
    """``x`` for ``x``, ``x.a.b``, ``x[0]``: the name an expression starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def is_postfix_safe(node: ast.AST) -> bool:
    """Whether ``<source>[...]`` / ``<source>.batch(...)`` needs no parentheses."""
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))


def _offset(lines: list[str], line: int, column: int) -> int:
    # ast columns count UTF-8 bytes; string offsets count characters.
    before = sum(len(text) for text in lines[: line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8", "ignore"))


def rewrite(frame: CellFrame, outer: ast.AST, inner: ast.AST, replacement: str) -> str | None:
    """The source of ``outer`` with the part that is ``inner`` replaced."""
    try:
        lines = frame.source().splitlines(keepends=True)
        start = _offset(lines, outer.lineno, outer.col_offset)  # type: ignore[attr-defined]
        end = _offset(lines, outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]
        inner_start = _offset(lines, inner.lineno, inner.col_offset)  # type: ignore[attr-defined]
        inner_end = _offset(lines, inner.end_lineno, inner.end_col_offset)  # type: ignore[attr-defined]
    except Exception:
        return None
    if not start <= inner_start <= inner_end <= end:
        return None
    source = frame.source()
    return on_one_line(source[start:inner_start] + replacement + source[inner_end:end])


def rewrite_all(
    frame: CellFrame, outer: ast.AST, replacements: list[tuple[ast.AST, str]]
) -> str | None:
    """The source of ``outer`` with each ``(inner, text)`` part replaced: every place of a
    statement a fix must change (``g.lr`` and ``d.lr`` on one line), not the first alone.
    None when a part lies outside ``outer`` or two parts overlap."""
    try:
        lines = frame.source().splitlines(keepends=True)
        start = _offset(lines, outer.lineno, outer.col_offset)  # type: ignore[attr-defined]
        end = _offset(lines, outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]
        spans = sorted(
            (
                _offset(lines, inner.lineno, inner.col_offset),  # type: ignore[attr-defined]
                _offset(lines, inner.end_lineno, inner.end_col_offset),  # type: ignore[attr-defined]
                text,
            )
            for inner, text in replacements
        )
    except Exception:
        return None
    source = frame.source()
    pieces, at = [], start
    for inner_start, inner_end, text in spans:
        if not at <= inner_start <= inner_end <= end:
            return None
        pieces += [source[at:inner_start], text]
        at = inner_end
    return on_one_line("".join(pieces) + source[at:end])


def on_one_source_line(node: ast.AST) -> bool:
    """Whether ``node`` was written on one line: a fix for a statement written over several
    lines (a layer in a ``Sequential([...])`` list) may prefer the one call it changes."""
    return getattr(node, "lineno", None) == getattr(node, "end_lineno", 0)


# A fix joined from several lines is printed as one backtick span: past this length it is
# no longer readable as one line, and the caller's own shorter form is printed instead.
_MAX_JOINED_CHARS = 200
_OPENING = "([{"
_CLOSING = ")]}"


def on_one_line(text: str) -> str:
    """A rewritten statement or expression written over several lines, on one, when that
    is the same code: line breaks inside brackets or after a backslash, and comments,
    dropped; the joined text must parse to the same tree (so a string spanning lines, a
    block or a second statement keeps the text as it is, and callers refuse it as
    before). An expression whose break lay outside its own brackets (``ds`` then
    ``.map(f)`` on the next line, part of a statement in parentheses) is read inside
    parentheses."""
    if "\n" not in text:
        return text
    joined = _joined_tokens(text)
    return joined if joined is not None and len(joined) <= _MAX_JOINED_CHARS else text


def _joined_tokens(text: str) -> str | None:
    for candidate, wrapped in ((text, False), (f"({text})", True)):
        try:
            tree = ast.dump(ast.parse(candidate))
        except (SyntaxError, ValueError):
            continue
        # A trailing comma left before a bracket closed on the next line is dropped,
        # unless the tree says it made a one-item tuple.
        for keep_commas in (False, True):
            joined = _join(candidate, keep_commas)
            if joined is None:
                return None
            if wrapped:
                if not (joined.startswith("(") and joined.endswith(")")):
                    return None
                joined = joined[1:-1]
            try:
                same = ast.dump(ast.parse(f"({joined})" if wrapped else joined)) == tree
            except (SyntaxError, ValueError):
                same = False
            if same:
                return joined
        return None
    return None


def _join(text: str, keep_trailing_commas: bool) -> str | None:
    """The tokens of ``text`` on one line: within a line their spacing as written, across
    a break one space (none after an opening bracket, before a closing one, or around a
    ``.``). None for a token that itself spans lines or for more than one statement."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    lines = text.splitlines(keepends=True)
    pieces: list[str] = []
    previous: tokenize.TokenInfo | None = None
    ends = (tokenize.NEWLINE, tokenize.ENDMARKER)
    for token in tokens:
        if token.type in (tokenize.NL, tokenize.COMMENT):
            continue
        if token.type in (tokenize.INDENT, tokenize.DEDENT):
            return None
        if token.type in ends:
            if any(
                later.type not in (*ends, tokenize.NL, tokenize.COMMENT, tokenize.DEDENT)
                for later in tokens[tokens.index(token) + 1 :]
            ):
                return None
            break
        if token.start[0] != token.end[0]:
            return None  # a string over several lines
        if previous is not None:
            if (
                not keep_trailing_commas
                and previous.string == ","
                and token.string in _CLOSING
                and previous.end[0] != token.start[0]
            ):
                pieces.pop()
            elif previous.end[0] == token.start[0]:
                pieces.append(lines[token.start[0] - 1][previous.end[1] : token.start[1]])
            elif not (
                previous.string in _OPENING
                or token.string in _CLOSING
                or "." in (previous.string, token.string)
                or token.string == ","
            ):
                pieces.append(" ")
        pieces.append(token.string)
        previous = token
    return "".join(pieces)


def code(text: str) -> str:
    """Inline code in an explanation: the frontend and the tests read backtick spans."""
    return f"`{text}`"


def one_line_code(fixed: str | None) -> str | None:
    """A rewritten statement as inline code, or None when there is none or it spans lines
    (a multi-line statement cannot be shown as one backtick span)."""
    return code(fixed) if fixed and "\n" not in fixed else None


@dataclass(frozen=True)
class IndexOrigin:
    """``one = xs[0]``: a name bound to one item of an array, which drops its first axis."""

    statement: str  # ``one = xs[0]``
    item: str  # ``xs[0]``
    kept: str  # ``xs[0:1]``: the same item, its batch axis kept
    fixed: str  # ``one = xs[0:1]``


_ARRAY_KINDS = ("array", "tensor", "variable", "keras_variable")


def index_origin(name: str, context: ErrorContext) -> IndexOrigin | None:
    """How ``name`` was bound, when it is ``name = base[k]`` for an array or tensor ``base``
    and a constant ``k``: in the cells the error went through (the running one first), else
    in the last cells IPython kept in ``In``."""
    if not name.isidentifier():
        return None
    sources: list[str] = []
    for frame in reversed(context.frames()):
        source = frame.source()
        if source and source not in sources:
            sources.append(source)
    history = context.namespace.get("In")
    if type(history) is list:
        sources.extend(
            cell
            for cell in reversed(history[-20:])
            if type(cell) is str and len(cell) <= _MAX_CELL_CHARS and name in cell
        )
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        found = _indexed_assignment(tree, source, name, context)
        if found is not None:
            return found
    return None


def _indexed_assignment(
    tree: ast.Module, source: str, name: str, context: ErrorContext
) -> IndexOrigin | None:
    last = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            if last is None or node.lineno > last.lineno:
                last = node
    if last is None or not isinstance(last.value, ast.Subscript):
        return None
    subscript = last.value
    index = subscript.slice
    if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
        return None
    base = ast.get_source_segment(source, subscript.value)
    item = ast.get_source_segment(source, subscript)
    if not base or not item or "\n" in item:
        return None
    root = dotted_root(subscript.value)
    if root is None:
        return None
    found, value = context.resolve(subscript.value, None)
    if not found or value_kind(value) not in _ARRAY_KINDS:
        return None
    start = index.value
    kept = f"{base}[{start}:{start + 1}]"
    return IndexOrigin(f"{name} = {item}", item, kept, f"{name} = {kept}")


def bound_names(
    function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
) -> set[str]:
    """The names a function binds: its parameters and every name assigned in its body."""
    arguments = function.args
    names = {
        argument.arg
        for argument in (
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            arguments.vararg,
            arguments.kwarg,
        )
        if argument is not None
    }
    names.update(
        inner.id
        for inner in ast.walk(function)
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)
    )
    return names


def innermost_function(tree: ast.AST, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function of the cell whose body holds ``line``."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            if node.body[0].lineno <= line <= (node.end_lineno or node.lineno):
                if found is None or node.lineno > found.lineno:
                    found = node
    return found
