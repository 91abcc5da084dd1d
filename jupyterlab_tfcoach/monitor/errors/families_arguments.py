"""An argument value TensorFlow or Keras refused (issue #25): the last family tried.

``Conv2D(8, 3, padding="smae")``, ``Dropout(1.5)``, ``LSTM(4, return_sequence=True)``,
``tf.cast(x, "flaot32")``, ``tf.reduce_mean(x, axis=3)`` on a matrix, ``ds.batch(0)``:
each library writes its own message, and no list of them could be complete. The family
is recognised by reading instead: the error went through TensorFlow or Keras from a
call on the failing line (or from the constructor of the layer that line calls, for a
layer that only checks its arguments when it is built), and the message names one of
that call's arguments, as the learner wrote it:

- an unknown keyword, quoted where the message says it was not recognised or not
  expected (``{'return_sequence': True}``, ``unexpected keyword argument 'axes'``);
- ``name=value`` with the value written in the call (``Received: rate=1.5``);
- the text of a string literal, quoted or after ``Received:``, ``got``, ``:`` or ``=``
  (``Received: smae``, ``'flaot32'``); a number counts only beside its keyword name;
- the keyword's name itself (in backticks or quotes, or as the subject of ``must``,
  ``should``, ``cannot``), when the message also says what the argument must be.

The entry names the argument and the call, quotes the message's requirement (the
sentence with ``must``, ``should``, ``expected``, ``allowed values``, a range), and
writes a fix when the right value can be known: the closest (``difflib``) of the
values the message allows, of TensorFlow's dtype names for a dtype, of the parameter's
default, or, for an unknown keyword, of the callee's own keywords (``inspect.signature``
of a TensorFlow/Keras function or class found statically: ``inspect.getattr_static``
from a library module, or the class of a library object named on the line). A number
out of range gets the requirement only (and for an axis, the input's rank when the
message states it). Nothing runs user code; a user's own function is never read.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import re
import sys
import types
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import cell_frame, error_cells, string_literal
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    class_mro,
    code,
    on_one_source_line,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Recognised,
    raised_by_keras,
    raised_through_library,
)
from jupyterlab_tfcoach.monitor.errors.library_checks import compared_strings

_LIBRARY_ROOTS = ("tensorflow", "keras", "tf_keras")
_MAX_CHAIN = 8
_MESSAGE_CHARS = 3000
_MAX_REQUIREMENT = 220
_MAX_CALL = 120
_MAX_FIX = 200
# A CTC decoder's blank against the session's: the loss and labels section.
CTC_SECTION = "labels-and-loss"
_CUTOFF = 0.6
# Course sections: Keras's API (the family's own), dtypes, tf.data, any other TF function.
KERAS_SECTION = "keras-model-api"
DTYPE_SECTION = "dtype-casting"
DATA_SECTION = "tf-data"
# Parameters that carry the data a call works on, not a setting of it.
_DATA_PARAMETERS = frozenset(
    {"x", "y", "value", "values", "input", "inputs", "input_tensor", "tensor", "data", "name"}
)
# TF's op messages call an axis a dimension.
_SYNONYMS = {"axis": ("axis", "axes", "dim", "dimension")}
# Python type names learners write as a dtype: the dtype TensorFlow gives such values.
_PYTHON_DTYPES = {"int": "int32", "integer": "int32", "str": "string"}

# The parts of a message that are not the library's sentence about the call.
_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*")
_OP_SUFFIX = re.compile(r"\s*\[Op:\w+\](?: name: \S*)?")
_CALL_ARGUMENTS = re.compile(r"\n\s*Arguments received by ")
_KEYWORD_REFUSED = re.compile(
    r"keyword argument|not recognized|unrecognized|unexpected", re.IGNORECASE
)
_BINDING_ERROR = re.compile(
    r"unexpected keyword argument|missing \d+ required (?:positional |keyword-only )?argument",
    re.IGNORECASE,
)
_MISSING = re.compile(
    r"missing \d+ required (?:positional |keyword-only )?arguments?: (?P<names>.*)"
)
# Requirement clauses, most specific first.
_REQUIREMENTS = (
    re.compile(r"that do not satisfy `?(?P<clause>[^`\n]+)`?"),
    re.compile(
        r"(?P<clause>\b(?:must|should|cannot|can not|expected to)\b[^\n]*?)(?=\.(?:\s|$)|\n|$)"
    ),
    re.compile(r"(?P<clause>\b[Ee]xpected (?:a |an |one of |of one )[^\n]*?)(?=\.(?:\s|$)|\n|$)"),
    re.compile(r"(?P<clause>\b[Ee]xpected [^\n]*?in the range [\[(][^\])]*[\])])"),
    re.compile(r"(?P<clause>\b[Ee]xpected\b[^\n.]{0,40}?\bto be\b[^\n]*?)(?=\.(?:\s|$)|\n|$)"),
    re.compile(r"(?P<clause>\bdoes not support\b[^\n]*?)(?=\.(?:\s|$)|\n|$)"),
    re.compile(r"(?P<clause>Allowed values are:? [^\n]*?)(?=\.\s+Received|\.?$|\n)"),
    re.compile(r"(?P<clause>\bnot in (?:the )?(?:range )?[\[(][^\])]*[\])])"),
    # TensorFlow's op attributes: ``... is not in the list of allowed values: "SAME", ...``.
    re.compile(r"(?P<clause>\bis not in the list of allowed values:? [^\n;]*)"),
    re.compile(r"(?P<clause>\bValid \w+ include [^\n]*?)(?=\.(?:\s|$)|$)"),
    re.compile(r"(?P<clause>\bRequires [^:\n]+)"),
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"])|\n+")
_RECEIVED_TAIL = re.compile(r"[.,;]?\s*Received\b.*$", re.S)
_QUOTED = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"")
_RANK = re.compile(
    r"ndim=(?P<a>\d+)|with (?P<b>\d+) dimensions?\b|(?P<c>\d+) is the number of dimensions"
)
_NDIM_RANGE = "[-ndim, ndim)"


@dataclass(frozen=True)
class _Argument:
    """One argument of a call as written: the parameter it fills (None past the last
    one), the value's node, the keyword's node for a keyword argument."""

    parameter: str | None
    value: ast.expr
    keyword: ast.keyword | None
    literal: Any
    has_literal: bool


@dataclass(frozen=True)
class _Site:
    """A call whose arguments the message may name: where it is written."""

    frame: CellFrame
    statement: ast.stmt | ast.expr
    call: ast.Call
    label: str | None  # None on the failing line, else ``line 1 of this cell``


# ------------------------------------------------------------------ the message
def _message_text(message: str) -> str:
    """The library's own sentences: without TF's node prefix, op suffix and Keras's list
    of the call's arguments (which names every argument, refused or not)."""
    text = message[:_MESSAGE_CHARS]
    text = _CALL_ARGUMENTS.split(text, 1)[0]
    text = _FUNCTION_NODE.sub("", text)
    text = _OP_SUFFIX.sub("", text)
    return text.replace("Exception encountered when calling", "").strip()


def _name_pattern(parameter: str) -> str:
    """``batch_size`` -> ``batch[ _]sizes?``: the name as a message may write it."""
    words = [re.escape(word) for word in parameter.split("_") if word]
    if not words:
        return re.escape(parameter)
    last = words[-1]
    if last.endswith("s") and len(last) > 3:
        words[-1] = f"{last[:-1]}s?"
    else:
        words[-1] = f"{last}s?"
    return r"[ _]".join(words)


def _names(parameter: str) -> str:
    spellings = _SYNONYMS.get(parameter, (parameter,))
    return "(?:" + "|".join(_name_pattern(spelling) for spelling in spellings) + ")"


def _numbers(literal: Any) -> list[str]:
    """How a message writes a number or a tuple of numbers the user passed."""
    if type(literal) in (int, float):
        return [re.escape(repr(literal))]
    if type(literal) is tuple and literal and all(type(v) in (int, float) for v in literal):
        inner = r",\s*".join(re.escape(repr(v)) for v in literal)
        return [rf"[\(\[]{inner},?[\)\]]"]
    return []


def _strength(argument: _Argument, text: str) -> tuple[int, int]:
    """How strongly the message names the argument (0: not at all), and where."""
    parameter = argument.parameter
    keyword = argument.keyword.arg if argument.keyword is not None else None
    if keyword is not None and _KEYWORD_REFUSED.search(text):
        quoted = re.search(rf"['\"]{re.escape(keyword)}['\"]", text)
        if quoted is not None:
            return 4, quoted.start()
    if parameter is None or not argument.has_literal:
        return 0, -1
    if keyword is not None and _MISSING.search(text):
        return 0, -1
    names = _names(parameter)
    literal = argument.literal
    numbers = _numbers(literal)
    for number in numbers:
        found = re.search(rf"(?<![\w.]){names}`?\s*=\s*`?{number}(?![\w.])", text, re.I)
        if found is None:
            # "dimension (3", "dim index 4", "groups (3)", "but got 2" after the name.
            found = re.search(
                rf"(?<![\w.]){names}\W{{0,3}}(?:index\s+)?\(?{number}(?![\w.])", text, re.I
            ) or re.search(rf"(?<![\w.]){names}\b[^.\n]*\bgot:?\s*{number}(?![\w.])", text, re.I)
        if found is not None:
            return 3, found.start()
    if type(literal) is str and len(literal) >= 2:
        value = re.escape(literal)
        found = re.search(
            rf"(?:['\"`]{value}['\"`]|(?:[:=]|\breceived|\bgot)\s*{value}(?![\w-]))", text, re.I
        )
        if found is not None:
            return 3 if re.search(names, text[: found.start()][-40:], re.I) else 2, found.start()
    if parameter in _DATA_PARAMETERS:
        return 0, -1
    marked = re.search(rf"[`'\"]{names}[`'\"]", text, re.I)
    subject = re.search(
        rf"(?:(?:^|[.:]\s+|\n)(?:the |all )?{names}\b[^.\n]{{0,30}}?\b(?:must|should|cannot"
        rf"|can not)\b|\brequires\s+{names}\b)",
        text,
        re.I,
    )
    if (marked or subject) and (numbers or type(literal) in (str, bool) or literal is None):
        found = marked or subject
        return 1, found.start() if found is not None else -1
    return 0, -1


def _sentences(text: str) -> list[tuple[int, str]]:
    """The message's sentences with where each starts."""
    found = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        found.append((start, text[start : match.start()]))
        start = match.end()
    found.append((start, text[start:]))
    return [(at, sentence.strip()) for at, sentence in found if sentence.strip()]


def _requirement(text: str, at: int) -> str | None:
    """The sentence of the message that says what the argument must be: among the one
    naming it, the two before it and the next one, the most specific clause; without a
    trailing ``Received ...``."""
    sentences = _sentences(text)
    index = max((i for i, (start, _) in enumerate(sentences) if start <= at), default=0)
    order = [i for i in (index, index - 1, index - 2, index + 1) if 0 <= i < len(sentences)]
    for pattern in _REQUIREMENTS:
        for position in order:
            sentence = sentences[position][1]
            clause = pattern.search(sentence)
            if clause is None:
                continue
            if pattern is _REQUIREMENTS[0]:
                said = f"every value must satisfy {clause.group('clause').strip()}"
            elif pattern is _REQUIREMENTS[-1]:
                said = clause.group("clause").strip()
            else:
                start = clause.start()
                said = sentence[:start] + _RECEIVED_TAIL.sub("", sentence[start:])
                said = said.strip().rstrip(".")
            if 0 < len(said) <= _MAX_REQUIREMENT and said.count("`") % 2 == 0:
                return said
            return None
    return None


def _rank_in(text: str) -> int | None:
    found = _RANK.search(text)
    if found is None:
        return None
    return int(found.group("a") or found.group("b") or found.group("c"))


# ------------------------------------------------------------------ the call
def _is(value: Any, kinds: type | tuple[type, ...]) -> bool:
    """``isinstance`` read from ``type(value)`` alone: a user object's ``__class__``
    property never runs."""
    return issubclass(type(value), kinds)


def _library_module(value: Any) -> bool:
    """Whether a module, function or class belongs to TensorFlow or Keras."""
    if _is(value, types.ModuleType):
        name = value.__dict__.get("__name__")
    elif _is(value, types.FunctionType):
        name = value.__module__
    elif _is(value, type):
        name = _type_dict(value).get("__module__")
    else:
        return False
    return type(name) is str and name.partition(".")[0] in _LIBRARY_ROOTS


_type_dict = type.__dict__["__dict__"].__get__


def _callee(
    func: ast.expr, frame: CellFrame, context: ErrorContext, depth: int = 0
) -> tuple[Any, bool] | None:
    """The TensorFlow/Keras function or class ``func`` names, found without running
    anything, and whether it is a method called on an object (its ``self`` is bound)."""
    chain: list[str] = []
    node = func
    while isinstance(node, ast.Attribute) and len(chain) < _MAX_CHAIN:
        chain.append(node.attr)
        node = node.value
    bound = False
    if isinstance(node, ast.Call) and len(chain) == 1 and depth < _MAX_CHAIN:
        # ``Dataset.from_tensor_slices(...).batch(8)``: the class the inner call's
        # library function says it returns (its return annotation).
        inner = _callee(node.func, frame, context, depth + 1)
        returned = _returned_class(inner[0]) if inner is not None else None
        if returned is None:
            return None
        value, bound = returned, True
    elif isinstance(node, ast.Name):
        found, value = context.lookup(node.id, frame)
        if not found:
            return None
        if not _is(value, (types.ModuleType, type, types.FunctionType)):
            # A library object's method: ``ds.batch``, ``model.fit``.
            cls = type(value)
            if len(chain) != 1 or not class_mro(value) or not _library_module(cls):
                return None
            value, bound = cls, True
    else:
        return None
    if not _library_module(value):
        return None
    for name in reversed(chain):
        if not _is(value, (types.ModuleType, type)):
            return None
        try:
            value = inspect.getattr_static(value, name)
        except AttributeError:
            return None
        if _is(value, (staticmethod, classmethod)):
            bound = _is(value, classmethod)
            value = value.__func__
    if _is(value, (types.FunctionType, type)) and _library_module(value):
        return value, bound
    return None


def layer_constructor(
    name: str, line: FailingLine, context: ErrorContext
) -> tuple[CellFrame, ast.stmt, ast.Call, str] | None:
    """``name = keras.layers.X(...)`` that made the layer ``name`` holds (newest in the
    running cell before the failing line, else in the cells): its frame, statement, call
    and where it is (``line 1 of this cell``)."""
    try:
        site = _constructor(name, line, context)
    except Exception:
        return None
    if site is None or not isinstance(site.statement, ast.stmt) or site.label is None:
        return None
    return site.frame, site.statement, site.call, site.label


def library_callable(
    func: ast.expr, frame: CellFrame, context: ErrorContext
) -> tuple[Any, bool] | None:
    """The TensorFlow/Keras function or class ``func`` names (found statically, as for
    this family) and whether it is a method called on an object, None when unknown."""
    try:
        return _callee(func, frame, context)
    except Exception:
        return None


def keyword_names(callee: Any, parameters: list[inspect.Parameter]) -> list[str]:
    """The keyword names ``callee`` takes, with those of the library classes it derives
    from (a Keras layer's ``name``, ``dtype``...)."""
    return _keywords(callee, parameters)


def positional_names(func: ast.expr, frame: CellFrame, context: ErrorContext) -> list[str]:
    """The names of the positional parameters of the library function or class ``func``
    names (found statically, as for this family), [] when it is not known."""
    try:
        found = _callee(func, frame, context)
        parameters = _parameters(*found) if found is not None else None
    except Exception:
        return []
    return [
        p.name
        for p in parameters or []
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]


def _returned_class(function: Any) -> type | None:
    """The library class a library function's return annotation names."""
    if not _is(function, types.FunctionType):
        return None
    annotation = function.__annotations__.get("return")
    if type(annotation) is str and annotation.isidentifier():
        module = sys.modules.get(function.__module__)
        annotation = vars(module).get(annotation) if module is not None else None
    if _is(annotation, type) and _library_module(annotation):
        return annotation
    return None


def _parameters(callee: Any, bound: bool) -> list[inspect.Parameter] | None:
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    return parameters[1:] if bound and parameters else parameters


def _keywords(callee: Any, parameters: list[inspect.Parameter]) -> list[str]:
    """The keyword names the callee takes: its own, and for a class those of the
    library classes it derives from (a Keras layer's ``name``, ``dtype``...)."""
    names = [
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    if isinstance(callee, type):
        for base in class_mro(callee)[1:6]:
            init = _type_dict(base).get("__init__")
            if not isinstance(init, types.FunctionType) or not _library_module(base):
                continue
            for extra in _parameters(init, True) or []:
                if extra.name not in names and extra.kind in (
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    inspect.Parameter.KEYWORD_ONLY,
                ):
                    names.append(extra.name)
    return names


def _literal_value(node: ast.expr) -> tuple[bool, Any]:
    """A constant, a negative number or a tuple of constants, as written."""
    if isinstance(node, (ast.Constant, ast.UnaryOp, ast.Tuple)):
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False, None
        if type(value) in (int, float, str, bool) or value is None:
            return True, value
        if type(value) is tuple and len(value) <= 4 and all(type(v) in (int, float) for v in value):
            return True, value
    return False, None


def _named_value(node: ast.expr, site: _Site, context: ErrorContext) -> tuple[bool, Any]:
    """A Python number or string a name on the failing line holds (``axis=self.factor``),
    read as ``failing_line`` reads operands."""
    if site.label is not None or not isinstance(node, (ast.Name, ast.Attribute)):
        return False, None
    try:
        found, value = value_of(node, site.frame, context)
    except Exception:
        return False, None
    if found and type(value) in (int, float, str):
        return True, value
    return False, None


def _arguments(
    call: ast.Call,
    parameters: list[inspect.Parameter] | None,
    site: _Site,
    context: ErrorContext,
) -> list[_Argument]:
    positional = [
        p.name
        for p in parameters or []
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    found = []
    for index, value in enumerate(call.args):
        if isinstance(value, ast.Starred):
            break
        name = positional[index] if index < len(positional) else None
        has, literal = _literal_value(value)
        if not has:
            has, literal = _named_value(value, site, context)
        found.append(_Argument(name, value, None, literal, has))
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        has, literal = _literal_value(keyword.value)
        if not has:
            has, literal = _named_value(keyword.value, site, context)
        found.append(_Argument(keyword.arg, keyword.value, keyword, literal, has))
    return found


def _sites(line: FailingLine, context: ErrorContext) -> list[_Site]:
    """The calls whose arguments the message may name: the failing call first, the other
    calls of the statement (only those within the failing call when Python recorded
    which call raised), then the constructor of a layer the line calls or uses
    (``pool(x)``, ``norm.adapt(x)``: the layer checks some arguments when built)."""
    frame = line.frame
    statement = line.statement
    calls: list[ast.Call] = []
    if isinstance(line.call, ast.Call):
        calls.append(line.call)
    # Python named the call that raised: the calls outside it had not run yet, or had
    # returned; only it and the calls within it (a layer built inside it) can be blamed.
    exact = line.call is not None and frame.at_position(line.call)
    parts = [line.call] if exact else frame.header()
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Call) and all(node is not c for c in calls):
                calls.append(node)
    sites = [_Site(frame, statement or call, call, None) for call in calls]
    for call in calls:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else call.func
        if isinstance(receiver, ast.Name):
            built = _constructor(receiver.id, line, context)
            if built is not None:
                sites.append(built)
                break
    return sites


def _constructor(name: str, line: FailingLine, context: ErrorContext) -> _Site | None:
    """``name = keras.layers.X(...)``, the newest in the running cell before the failing
    line or in the cell history, for a name holding a Keras layer of that class."""
    found, value = value_of(ast.Name(name, ast.Load()), line.frame, context)
    if not found or value_kind(value) not in ("layer", "model"):
        return None
    running = context.frames()[-1] if context.frames() else None
    for cell in error_cells(context):
        if f"{name} =" not in cell.source and f"{name}=" not in cell.source:
            continue
        tree = cell.tree()
        if tree is None:
            continue
        here = running is not None and cell.source == running.source()
        assignments = [
            node
            for node in tree.body
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
            and (not here or node.lineno < running.position.line)  # type: ignore[union-attr]
        ]
        if not assignments:
            continue
        assignment = assignments[-1]
        frame = cell_frame(cell)
        callee = _callee(assignment.value.func, frame, context)  # type: ignore[attr-defined]
        if callee is None or callee[0] is not type(value):
            return None
        return _Site(
            frame, assignment, assignment.value, f"line {assignment.lineno} of {cell.label}"
        )  # type: ignore[arg-type]
    return None


# ------------------------------------------------------------------ the fix
def _dtype_names() -> list[str]:
    dtypes = sys.modules.get("tensorflow.python.framework.dtypes")
    table = vars(dtypes).get("_STRING_TO_TF") if dtypes is not None else None
    if type(table) is not dict:
        return []
    return [
        name
        for name in list(table)[:200]
        if type(name) is str
        and not name.endswith("_ref")
        and name not in ("resource", "variant")
        and not name.startswith(("q", "float8", "float4", "int4", "uint4", "int2", "uint2"))
    ]


def _about_dtype(parameter: str, text: str) -> bool:
    return parameter == "dtype" or parameter.endswith("_dtype") or "DType" in text


def _closest(value: str, candidates: list[str]) -> str | None:
    """The one closest candidate (``difflib``), None when none is close or two tie."""
    lowered: dict[str, str] = {}
    for candidate in candidates:
        lowered.setdefault(candidate.lower(), candidate)
    lowered.pop(value.lower(), None)
    scored = sorted(
        ((difflib.SequenceMatcher(None, value.lower(), key).ratio(), key) for key in lowered),
        reverse=True,
    )
    if not scored or scored[0][0] < _CUTOFF:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return lowered[scored[0][1]]


def _value_candidates(
    argument: _Argument, text: str, requirement: str | None, parameters: list[inspect.Parameter]
) -> list[str]:
    """Values the argument may take: those the message lists, TensorFlow's dtype names for
    a dtype, and the parameter's default."""
    allowed = [a or b for a, b in _QUOTED.findall(requirement or "")]
    parameter = argument.parameter or ""
    if _about_dtype(parameter, text):
        allowed += _dtype_names()
    default = next((p.default for p in parameters if p.name == parameter), None)
    if type(default) is str:
        allowed.append(default)
    return allowed


def _split_shape(
    argument: _Argument, site: _Site, parameters: list[inspect.Parameter], context: ErrorContext
) -> tuple[str, str | None] | None:
    """``tf.random.normal(16, latent_dim)``: the sizes written as separate positional
    arguments (NumPy's ``randn(16, 2)`` style), so the first alone became ``shape`` and the
    next filled the parameter after it. Read from the values: both whole numbers."""
    args = site.call.args
    if argument.parameter != "shape" or len(args) < 2 or args[0] is not argument.value:
        return None
    sizes = []
    for node in args[:2]:
        if isinstance(node, ast.Constant):
            found, value = True, node.value
        else:
            found, value = value_of(node, site.frame, context)
        if not found or type(value) is not int:
            return None
        sizes.append(site.frame.segment(node) or "")
    if not all(sizes):
        return None
    names = [parameter.name for parameter in parameters]
    after = names[names.index("shape") + 1] if "shape" in names[:-1] else None
    words = (
        "The shape is one argument, a tuple of sizes: written as separate numbers, the "
        "first alone became `shape`"
        + (f" and {code(sizes[1])} filled the next parameter, `{after}`" if after else "")
    )
    span = ast.Tuple(elts=[], ctx=ast.Load())
    span.lineno, span.col_offset = args[0].lineno, args[0].col_offset
    span.end_lineno, span.end_col_offset = args[1].end_lineno, args[1].end_col_offset
    return words, _fix(site, span, f"({sizes[0]}, {sizes[1]})")


def _fix(site: _Site, node: ast.AST, replacement: str) -> str | None:
    """The learner's statement with ``node`` replaced; for a statement over several lines
    (a layer in a ``Sequential([...])`` list), the call alone, said to replace the old,
    unless the call itself runs over lines: then the statement joined on one line."""
    fixed = rewrite(site.frame, site.statement, node, replacement)
    if fixed and on_one_source_line(site.statement) and len(fixed) <= _MAX_FIX:
        return code(fixed)
    call = rewrite(site.frame, site.call, node, replacement)
    old = site.frame.segment(site.call)
    if call and old and "\n" not in call + old and len(call) <= _MAX_FIX:
        return f"in place of {code(old)}, {code(call)}"
    # The call itself runs over several lines: the statement, joined on one line.
    if fixed and "\n" not in fixed and len(fixed) <= _MAX_FIX:
        return code(fixed)
    return None


def _shown_call(site: _Site) -> str | None:
    """The call as the entry names it: as written, or shortened to ``f(...)``."""
    shown = site.frame.segment(site.call)
    if shown and "\n" not in shown and len(shown) <= _MAX_CALL:
        return shown
    func = site.frame.segment(site.call.func)
    return f"{func}(...)" if func and "\n" not in func and len(func) <= _MAX_CALL else None


# ------------------------------------------------------------------ the reading
def _read_refused_argument(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    parsed = error.parsed
    text = _message_text(parsed.message)
    if not text:
        return None
    through = raised_through_library(context, parsed)
    # Python refuses an unknown keyword before the library's code runs.
    if not through and not (parsed.type == "TypeError" and _BINDING_ERROR.search(text)):
        return None
    best: tuple[int, int, _Site, _Argument, Any, list[inspect.Parameter]] | None = None
    tied = False
    for site in _sites(line, context):
        callee = _callee(site.call.func, site.frame, context)
        if callee is None and (not through or site.label is not None):
            continue
        parameters = _parameters(*callee) if callee is not None else None
        for argument in _arguments(site.call, parameters, site, context):
            strength, at = _strength(argument, text)
            if strength == 0:
                continue
            if best is None or strength > best[0]:
                best, tied = (strength, at, site, argument, callee, parameters or []), False
            elif strength == best[0] and argument.parameter != best[3].parameter:
                tied = True
        if best is not None:
            break
    if best is None:
        best = _misspelt_required(text, line, context)
        tied = False
    if best is None or tied:
        return None
    strength, at, site, argument, callee, parameters = best
    part = _refusing_part(through, site, callee, context)
    shown = _shown_call(site)
    if shown is None:
        return None
    where = f" ({site.label})" if site.label else ""
    section = _section(argument, text, site, context, part, callee)
    if strength == 4:
        missing = _MISSING.search(text) is not None
        return _unknown_keyword(
            argument, callee, parameters, site, shown, where, part, section, missing, context
        )
    requirement = _requirement(text, at)
    written = site.frame.segment(argument.keyword or argument.value) or ""
    rule = (
        f"{part} refused the {code(argument.parameter or '')} argument of {code(shown)}"
        f"{where}, written {code(written)}"
    )
    value = argument.literal
    known = _dtype_names() if _about_dtype(argument.parameter or "", text) else []
    unknown_dtype = type(value) is str and bool(known) and value not in known
    if requirement:
        rule += f": {_lowered(requirement)}"
    elif not unknown_dtype:
        rule += " (the message above says why)"
    rule += _axis_range(argument, text, requirement)
    split = _split_shape(argument, site, parameters, context)
    if split is not None:
        return Finding(rule + ". " + split[0] + ".", split[1], section)
    if type(value) is not str:
        return Finding(rule + ".", None, section)
    if unknown_dtype:
        rule += f'{"; " if requirement else ": "}"{value}" is not a dtype name TensorFlow knows'
    better = _PYTHON_DTYPES.get(value.lower()) if known else None
    if better is None:
        candidates = _value_candidates(argument, text, requirement, parameters)
        compared: list[str] = []
        listed = [a or b for a, b in _QUOTED.findall(requirement or "")]
        if not listed and through:
            # The message lists nothing: the values the library's code compared it with.
            compared = compared_strings(context, value)
            if compared:
                candidates += compared
                shown = ", ".join(f'"{option}"' for option in compared)
                rule = rule.replace(" (the message above says why)", "")
                rule += f"; the values {part}'s code checks it against are {shown}"
        better = _closest(value, candidates)
        cased = [c for c in candidates if c != value and c.lower() == value.lower()]
        if part != "Keras" and len(set(cased)) == 1:
            # The right word in another case (TensorFlow's ops take "SAME", not "same").
            better = cased[0]
            rule += f'; it is written "{better}"'
        if better is not None and part == "Keras" and value.islower() and better.isupper():
            # A TensorFlow op's attribute ("SAME") under a Keras layer, which takes the
            # learner's lower case as well.
            better = better.lower()
        if compared and better is not None:
            rule += f', the closest "{better}"'
    if better is None:
        return Finding(rule + ".", None, section)
    written_value = site.frame.segment(argument.value)
    if _literal_value(argument.value)[0]:
        fixed = _fix(site, argument.value, string_literal(written_value, better))
        return Finding(rule + ".", fixed, section)
    # A name holds the value: where it was set is the learner's to change.
    rule += (
        f'; the closest value it takes is "{better}" ({code(written_value or "")} holds "{value}")'
    )
    return Finding(rule + ".", None, section)


def _misspelt_required(
    text: str, line: FailingLine, context: ErrorContext
) -> tuple[int, int, _Site, _Argument, Any, list[inspect.Parameter]] | None:
    """``Conv2D(8, kernal_size=3)``: a required parameter is missing and the call has a
    keyword the callee does not take (a layer's ``**kwargs`` swallowed it)."""
    missing = _MISSING.search(text)
    if missing is None or not isinstance(line.call, ast.Call):
        return None
    wanted = [a or b for a, b in _QUOTED.findall(missing.group("names"))]
    site = _Site(line.frame, line.statement or line.call, line.call, None)
    callee = _callee(line.call.func, line.frame, context)
    if callee is None or not wanted:
        return None
    parameters = _parameters(*callee) or []
    known = _keywords(callee[0], parameters)
    for argument in _arguments(line.call, parameters, site, context):
        keyword = argument.keyword
        if keyword is None or keyword.arg is None or keyword.arg in known:
            continue
        if _closest(keyword.arg, wanted) is not None:
            return 4, missing.start(), site, argument, callee, parameters
    return None


def _refusing_part(through: bool, site: _Site, callee: Any, context: ErrorContext) -> str:
    """Who refused: Python (binding the call to the signature), else the library of the
    function called on the failing line (Keras filters TensorFlow's frames out of the
    traceback of a layer's call), else the innermost library frame's."""
    if not through:
        return "Python"
    if callee is not None and site.label is None:
        module = callee[0].__module__
        if type(module) is str and module.partition(".")[0] in ("keras", "tf_keras"):
            return "Keras"
        if type(module) is str and module.partition(".")[0] == "tensorflow":
            return "TensorFlow"
    return "Keras" if raised_by_keras(context) else "TensorFlow"


def _lowered(requirement: str) -> str:
    first = requirement.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower():
        return requirement[0].lower() + requirement[1:]
    return requirement


def _axis_range(argument: _Argument, text: str, requirement: str | None) -> str:
    """For an axis the message judged against the input's rank without numbers: the
    range that rank gives (a reduction's axis, ``[-ndim, ndim)``)."""
    if argument.parameter != "axis" or type(argument.literal) not in (int, tuple):
        return ""
    rank = _rank_in(text)
    if rank is None:
        return ""
    if (requirement and _NDIM_RANGE in requirement) or "reduction dimension" in text:
        return (
            f"; the input has {rank} ax{'is' if rank == 1 else 'es'}, so an axis is "
            f"from {-rank} to {rank - 1}"
        )
    return ""


# Keywords of Keras 1/2 that Keras 3 spells otherwise (too far apart for difflib).
_RENAMED_KEYWORDS = {
    "lr": "learning_rate",
    "nb_epoch": "epochs",
    "init": "kernel_initializer",
    "W_regularizer": "kernel_regularizer",
    "b_regularizer": "bias_regularizer",
}


def _unknown_keyword(
    argument: _Argument,
    callee: Any,
    parameters: list[inspect.Parameter],
    site: _Site,
    shown: str,
    where: str,
    part: str,
    section: str,
    missing: bool,
    context: ErrorContext,
) -> Finding | None:
    keyword = argument.keyword
    if keyword is None or keyword.arg is None:
        return None
    owner = str(getattr(callee[0], "__name__", "")) if callee is not None else ""
    if keyword.arg == "training" and owner in _INFERENCE_ONLY:
        found = _training_in_predict(keyword, owner, site, context)
        if found is not None:
            return found
    if part == "Python" and owner:
        # Python refused the call before the library's code ran: the signature says why.
        rule = f"{code(owner)} takes no keyword argument {code(keyword.arg)} ({code(shown)})"
    else:
        rule = (
            f"{part} does not recognise the keyword argument {code(keyword.arg)} of "
            f"{code(shown)}{where}"
        )
    if callee is None:
        return Finding(rule + ".", None, section)
    names = _keywords(callee[0], parameters)
    renamed = _RENAMED_KEYWORDS.get(keyword.arg)
    close = renamed if renamed in names else _closest(keyword.arg, names)
    if close is not None and _already_given(close, parameters, site.call):
        # ``Conv1D(4, 3, pool_size=2)``: ``kernel_size`` is close but already given (the
        # 3), so the keyword is not its misspelling.
        close = None
    if close is None:
        older = _tf1_keyword(keyword, callee[0], site, context)
        if older is not None:
            return _dropped_tf1_keyword(rule, keyword, older, site, section, context)
        elsewhere = _keyword_owners(keyword.arg, callee[0], site, context)
        if elsewhere:
            return _keyword_of_other_class(rule, keyword, owner, elsewhere, site, section, context)
        listed = ", ".join(code(n) for n in names[:10])
        more = ", ..." if len(names) > 10 else ""
        rule += f"; the keywords of {code(owner)} are {listed}{more}" if names else ""
        return Finding(rule + ".", None, section)
    if missing:
        rule += f", so its required {code(close)} was missing"
    else:
        rule += f"; {code(owner)} takes {code(close)}"
    value = site.frame.segment(keyword.value)
    fixed = _fix(site, keyword, f"{close}={value}") if value else None
    return Finding(rule + ".", fixed, section)


# Keras methods that always run the model in inference mode (no ``training`` keyword).
_INFERENCE_ONLY = ("predict", "predict_on_batch")


def _training_in_predict(
    keyword: ast.keyword, owner: str, site: _Site, context: ErrorContext
) -> Finding | None:
    """``model.predict(x, training=True)`` (dropout kept on for Monte Carlo dropout):
    predict has no ``training`` keyword and always runs in inference mode; calling the
    model itself takes it. The fix keeps what predict gave, a NumPy array (``.numpy()``),
    so the rest of the line (``.ravel()``, NumPy functions) still works. A model that
    also holds BatchNormalization is not called whole in training mode (that would move
    its statistics): the fix samples through its dropout only (``dropout_passes.py``)."""
    from jupyterlab_tfcoach.monitor.symptoms.dropout_passes import (
        dropout_passes,
        normalization_effect,
        split_advice,
    )

    call = site.call
    if not isinstance(call.func, ast.Attribute):
        return None
    model = site.frame.segment(call.func.value)
    inputs = (
        call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "x"), None)
    )
    value = site.frame.segment(keyword.value)
    data = site.frame.segment(inputs) if inputs is not None else None
    if not model or not value or not data:
        return None
    rule = f"`{owner}` always runs the model in inference mode and takes no `training` keyword"
    found, held = context.resolve(call.func.value, site.frame)
    passes = (
        dropout_passes(model, held, data, context.namespace)
        if found and value == "True" and "\n" not in model + data
        else None
    )
    if passes is not None:
        rule += f". {normalization_effect(model, passes)}"
        if not passes.setup:
            return Finding(f"{rule}: {split_advice(model)}.", None, section="training-argument")
        fixed = _fix(site, call, f"{passes.sampled}.numpy()")
        if fixed is None or not fixed.startswith("`"):
            return Finding(f"{rule}: {split_advice(model)}.", None, section="training-argument")
        setup = ", ".join(f"`{line}`" for line in passes.setup)
        rule += f" (`.numpy()` makes each pass the NumPy array `{owner}` would give, in one batch)"
        return Finding(
            rule + ".",
            f"once before the passes, {setup}, then {fixed}",
            section="training-argument",
        )
    rule += (
        f". To run its layers in training mode (Dropout kept on), call the model "
        f"itself, `{model}({data}, training={value})`: it returns a tensor, and `.numpy()` "
        f"makes it the NumPy array `{owner}` would give (in one batch)"
    )
    called = f"{model}({data}, training={value}).numpy()"
    return Finding(rule + ".", _fix(site, call, called), section="training-argument")


_MAX_SIBLINGS = 400
_MAX_OWNERS_SHOWN = 3


def _keyword_owners(
    keyword: str, refused: Any, site: _Site, context: ErrorContext
) -> list[tuple[str, bool]]:
    """The classes of the module the call reached the refused class through (``layers``
    in ``layers.GRU(...)``) whose own ``__init__`` names ``keyword`` (``mask_zero``:
    ``Embedding``): ``[(class name, used in the learner's cells)]``, those the cells use
    first. Signatures only (``inspect``), over the classes the module already holds."""
    func = site.call.func
    if not isinstance(func, ast.Attribute):
        return []
    module = _module_at(func.value, site, context)
    if module is None:
        return []
    written = " ".join(cell.source for cell in error_cells(context))
    owners: list[tuple[str, bool]] = []
    try:
        items = sorted(vars(module).items())[:_MAX_SIBLINGS]
    except Exception:
        return []
    for name, cls in items:
        if not isinstance(cls, type) or cls is refused or name.startswith("_"):
            continue
        if not _library_module(cls) or refused in class_mro(cls):
            continue
        init = _type_dict(cls).get("__init__")
        if not isinstance(init, types.FunctionType):
            continue
        parameters = _parameters(init, True) or []
        if any(
            p.name == keyword
            and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            for p in parameters
        ):
            owners.append((name, re.search(rf"\b{re.escape(name)}\(", written) is not None))
    owners.sort(key=lambda owner: not owner[1])
    return owners


def _already_given(name: str, parameters: list[inspect.Parameter], call: ast.Call) -> bool:
    """Whether the call gives parameter ``name`` already, by keyword or by position."""
    if any(keyword.arg == name for keyword in call.keywords):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for index, parameter in enumerate(parameters):
        if parameter.name == name:
            return parameter.kind in positional and index < len(call.args)
    return False


def _module_at(node: ast.expr, site: _Site, context: ErrorContext) -> types.ModuleType | None:
    """The module a dotted name written in the cell holds (``keras.layers``), read
    through each module's own ``vars``; None for anything that is not a module."""
    if isinstance(node, ast.Name):
        found, value = context.lookup(node.id, site.frame)
    elif isinstance(node, ast.Attribute):
        owner = _module_at(node.value, site, context)
        found, value = (owner is not None), (vars(owner).get(node.attr) if owner else None)
    else:
        return None
    return value if found and isinstance(value, types.ModuleType) else None


def _tf1_keyword(
    keyword: ast.keyword, refused: Any, site: _Site, context: ErrorContext
) -> str | None:
    """``tf.compat.v1.nn.ctc_beam_search_decoder`` when the call ``tf.nn.<same name>``
    refused a keyword that TensorFlow 1's function of that name takes (``merge_repeated``):
    a TF 1 example's argument, which TF 2's version dropped. Signatures only."""
    path: list[str] = []
    node: ast.expr = site.call.func
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not path:
        return None
    found, root = context.lookup(node.id, site.frame)
    if not found or not isinstance(root, types.ModuleType) or root.__name__ != "tensorflow":
        return None
    try:
        older: Any = root.compat.v1
        for part in path:
            older = getattr(older, part)
        if older is refused or keyword.arg not in inspect.signature(older).parameters:
            return None
        documented = older.__doc__
    except Exception:
        return None
    # Only a setting TF 1 documents as its own: an old spelling of a TF 2 parameter
    # (``reduction_indices``, "The old (deprecated) name for axis"), or one TF 1 does not
    # document (``softmax``'s ``dim``), must be renamed, not dropped.
    described = re.search(
        rf"^\s*{re.escape(keyword.arg or '')}:(.*)$", documented or "", re.MULTILINE
    )
    if described is None or re.search(r"deprecat|alias|old\b", described.group(1), re.I):
        return None
    return ".".join((node.id, "compat", "v1", *path))


def _dropped_tf1_keyword(
    rule: str,
    keyword: ast.keyword,
    older: str,
    site: _Site,
    section: str,
    context: ErrorContext,
) -> Finding:
    """The call without TensorFlow 1's keyword: TF 2's function has its own fixed
    behaviour for what the keyword set."""
    rule += (
        f". {code(keyword.arg or '')} is an argument of TensorFlow 1's version, "
        f"{code(older)}; TensorFlow 2's function has no such setting, so drop it (its "
        f"documentation says how it behaves without it), or call {code(older)} where the "
        "TensorFlow 1 behaviour is needed"
    )
    call = site.call
    # A beam-search decoder in a session whose CTC blank is class 0: dropping the
    # keyword alone would decode with the wrong blank. (Imported here: the symptom
    # module's own imports reach this module.)
    from jupyterlab_tfcoach.monitor.symptoms.ctc_blanks import beam_search_blank

    blank = beam_search_blank(
        call, site.statement, site.frame.source(), context.namespace, dropped=keyword
    )
    if blank is not None:
        why, fixes = blank
        rule += f". Also, {why[0].lower()}{why[1:]}"
        if len(fixes) == 2:
            return Finding(rule + ".", f"{code(fixes[0])}, then {code(fixes[1])}", CTC_SECTION)
        return Finding(rule + ".", None, section)
    func = site.frame.segment(call.func)
    parts = [site.frame.segment(argument) for argument in call.args]
    parts += [site.frame.segment(other) for other in call.keywords if other is not keyword]
    if not func or any(not part or "\n" in part for part in parts):
        return Finding(rule + ".", None, section)
    fixed = _fix(site, call, f"{func}({', '.join(p for p in parts if p)})")
    return Finding(rule + ".", fixed, section)


def _keyword_of_other_class(
    rule: str,
    keyword: ast.keyword,
    owner: str,
    elsewhere: list[tuple[str, bool]],
    site: _Site,
    section: str,
    context: ErrorContext,
) -> Finding:
    """A keyword of another class of the same module (``mask_zero`` belongs to
    ``Embedding``, not ``GRU``): said where it belongs; the fix is this call without it
    (a keyword the class does not take does nothing here)."""
    twin = _twin_class(keyword, owner, elsewhere, site, context)
    if twin is not None:
        return _keyword_of_twin_class(rule, keyword, owner, twin, site, section)
    shown = [code(name) for name, _used in elsewhere[:_MAX_OWNERS_SHOWN]]
    more = ", ..." if len(elsewhere) > _MAX_OWNERS_SHOWN else ""
    which = " and ".join((", ".join(shown[:-1]), shown[-1])) if len(shown) > 1 else shown[0]
    used = [name for name, is_used in elsewhere if is_used]
    rule += (
        f". {code(keyword.arg or '')} is a keyword of {which}{more}"
        f"{' (which the cells use)' if used else ''}, not of {code(owner)}: it belongs "
        f"on that class's call; {code(owner)} has no such setting, so drop it here"
    )
    if used:
        rule += f" and give it to the {code(used[0])} layer or object where that is what was meant"
    call = site.call
    func = site.frame.segment(call.func)
    parts = [site.frame.segment(argument) for argument in call.args]
    parts += [site.frame.segment(other) for other in call.keywords if other is not keyword]
    if not func or any(not part for part in parts):
        return Finding(rule + ".", None, section)
    fixed = _fix(site, call, f"{func}({', '.join(p for p in parts if p)})")
    return Finding(rule + ".", fixed, section)


_CAMEL_WORD = re.compile(r"[A-Z][a-z0-9]*")
# What the one word a twin class's name adds or drops changes in the data it is given.
_TWIN_WORDS = {
    "Sparse": (
        "the {sparse} class takes class ids, the {dense} class one-hot labels: give it "
        "one-hot labels too ({to_categorical})"
    ),
}


def _twin_class(
    keyword: ast.keyword,
    owner: str,
    elsewhere: list[tuple[str, bool]],
    site: _Site,
    context: ErrorContext,
) -> str | None:
    """The class of ``elsewhere`` that is the refused class's twin: its name the refused
    one's with one CamelCase word fewer or more (``CategoricalCrossentropy`` for
    ``SparseCategoricalCrossentropy``, ``BinaryFocalCrossentropy`` for
    ``BinaryCrossentropy``), the rest at least two words alike, and it accepts
    every other keyword the call gives and as many positional arguments. Keeping the
    setting then means calling the twin, not dropping the keyword."""
    words = _CAMEL_WORD.findall(owner)
    if "".join(words) != owner:
        return None
    func = site.call.func
    module = _module_at(func.value, site, context) if isinstance(func, ast.Attribute) else None
    if module is None:
        return None
    others = [other.arg for other in site.call.keywords if other is not keyword]
    twins: list[str] = []
    for name, _used in elsewhere:
        candidate = _CAMEL_WORD.findall(name)
        if "".join(candidate) != name:
            continue
        shorter, longer = sorted((words, candidate), key=len)
        if not (
            len(longer) == len(shorter) + 1 >= 3
            and any(longer[:at] + longer[at + 1 :] == shorter for at in range(len(longer)))
        ):
            continue
        cls = vars(module).get(name)
        init = _type_dict(cls).get("__init__") if isinstance(cls, type) else None
        parameters = _parameters(init, True) if isinstance(init, types.FunctionType) else None
        if parameters is None:
            continue
        accepted = _keywords(cls, parameters)
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [p for p in parameters if p.kind in kinds]
        if all(other in accepted for other in others) and len(site.call.args) <= len(positional):
            twins.append(name)
    return twins[0] if len(twins) == 1 else None


def _keyword_of_twin_class(
    rule: str, keyword: ast.keyword, owner: str, twin: str, site: _Site, section: str
) -> Finding:
    """``label_smoothing`` given to ``SparseCategoricalCrossentropy``: its twin
    ``CategoricalCrossentropy`` takes it; dropping it would drop what the cell is for."""
    owner_words, twin_words = _CAMEL_WORD.findall(owner), _CAMEL_WORD.findall(twin)
    extra = next(
        (w for w in (*owner_words, *twin_words) if (w in owner_words) != (w in twin_words)),
        "",
    )
    named = "with" if len(twin_words) > len(owner_words) else "without"
    rule += (
        f". {code(twin)}, the same class {named} {code(extra)}, takes "
        f"{code(keyword.arg or '')}: dropping {code(keyword.arg or '')} would drop the "
        f"setting the call asks for, so call {code(twin)} instead"
    )
    note = _TWIN_WORDS.get(extra)
    if note is not None:
        sparse, dense = (owner, twin) if extra in _CAMEL_WORD.findall(owner) else (twin, owner)
        to_categorical = (
            "`keras.utils.to_categorical(y, num_classes)`"
            if sparse == owner
            else "`tf.argmax(y, axis=-1)` gives class ids from one-hot labels"
        )
        rule += "; " + note.format(
            sparse=code(sparse), dense=code(dense), to_categorical=to_categorical
        )
        if sparse != owner:
            rule = rule.replace("give it one-hot labels too", "give it class ids")
    func = site.frame.segment(site.call.func)
    if not func or not func.endswith(owner):
        return Finding(rule + ".", None, section)
    renamed = func[: len(func) - len(owner)] + twin
    parts = [site.frame.segment(argument) for argument in site.call.args]
    parts += [site.frame.segment(other) for other in site.call.keywords]
    if any(not part for part in parts):
        return Finding(rule + ".", None, section)
    fixed = _fix(site, site.call, f"{renamed}({', '.join(p for p in parts if p)})")
    return Finding(rule + ".", fixed, section)


def _section(
    argument: _Argument, text: str, site: _Site, context: ErrorContext, part: str, callee: Any
) -> str:
    if argument.parameter and _about_dtype(argument.parameter, text):
        return DTYPE_SECTION
    if callee is not None and "Dataset" in str(getattr(callee[0], "__qualname__", "")):
        return DATA_SECTION
    func = site.call.func
    if isinstance(func, ast.Attribute):
        found, owner = value_of(func.value, site.frame, context)
        if found and value_kind(owner) == "dataset":
            return DATA_SECTION
    module = str(getattr(callee[0], "__module__", "")) if callee is not None else ""
    keras = part == "Keras" or (part == "Python" and module.startswith("keras"))
    return KERAS_SECTION if keras else GENERAL_SECTION


ARGUMENT_VALUE = ErrorFamily(
    "an argument value the library refused",
    messages=(),
    read=_read_refused_argument,
    section="keras-model-api",
    without_library=True,
)
