"""What the call on the failing line expects, read from the library's own documentation
(issue #25): the generic entry's statement of the cause when no family knows the error.

No catalogue of messages can list every refusal of TensorFlow and Keras, but the function
the learner called documents its arguments: ``tf.linalg.inv``'s ``input`` "Shape is
`[..., M, M]`", ``tf.math.segment_sum``'s ``segment_ids`` "Values should be sorted",
``RaggedTensor.from_row_lengths``'s ``row_lengths`` "`sum(row_lengths)` must be `nvals`".
This module reads that text and puts it beside the learner's own argument:

    `segment_ids` (your `shop_ids`, a (4,) int32 tensor): TensorFlow documents it as "A
    1-D tensor whose size is equal to the size of `data`'s first dimension. Values should
    be sorted and can be repeated."

- the callee is found statically (``families_arguments.library_callable``: attribute reads
  of library modules and classes, ``inspect.getattr_static``); a layer called on the line
  (``keras.layers.X(...)(x)``, or a name holding a library layer) is its class's ``call``,
  documented in the class's "Call arguments" section;
- the call's arguments are bound to ``inspect.signature``'s parameters by position and
  keyword, as Python binds them;
- the parameters the error is about: those the message names (``params``, ``segment
  ids``), else those whose argument's shape or dtype the message quotes, else every
  argument the call was given (three at most);
- of each one's "Args:" entry, only the sentences that state a requirement (``must``,
  ``should``, a shape, a rank, allowed types), the ones about dtypes only when the message
  speaks of types; bounded in length.

Only library functions' and classes' own ``__doc__`` strings and signatures are read;
nothing of the user's runs, and a value is shown as the failing line already describes
it (``failing_line.describe``), never by ``repr``.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from dataclasses import dataclass, replace
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    ParsedError,
    code,
    one_line_code,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.documented_shapes import MET, VIOLATED, ShapeCheck
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.families_arguments import library_callable
from jupyterlab_tfcoach.monitor.errors.family_record import tf_alias
from jupyterlab_tfcoach.monitor.stored_state import class_attribute, is_library_class

_MAX_PARAMETERS = 3
_MAX_QUOTE = 220
_MAX_DOC = 20_000
_MAX_ARGUMENT = 40
_MESSAGE_CHARS = 2000
# Parameters that name the op or configure its bookkeeping, never the cause.
_IGNORED = frozenset({"name", "self", "kwargs", "args", "seed"})
# A sentence of an Args entry that states what the argument must be.
_REQUIREMENT = re.compile(
    r"\b(?:must|should|shape|shaped|rank|\d-D|dimensions?|positive|non-?negative|sorted|"
    r"between|at least|at most|greater|less|one of)\b",
    re.IGNORECASE,
)
# Sentences that only say which dtypes or Python types are taken: told when the message
# is about types.
_TYPES_LIST = re.compile(
    r"must be one of the following types|must have the same type|python integer|"
    r"\b(?:int32|int64|float32|float64)\b",
    re.I,
)
_SHAPE_WORDS = re.compile(r"\bshape|\brank\b|\b\d-D\b|`[\[(]", re.I)
# A sentence about another mode of the argument than the learner's ("If passing a file
# path, ...") or an aside.
_CONDITIONAL = ("if ", "when ", "note", "for instance", "for example", "defaults to", "default")
_ABOUT_TYPES = re.compile(r"\b(?:dtype|type|types|attr 'T')\b|not in the list of allowed", re.I)
_SECTION = re.compile(r"^(?P<indent>\s*)(?P<title>Args|Arguments|Call arguments|Call args):\s*$")
_ENTRY = re.compile(r"^(?P<name>\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(?P<text>.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")
_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*|\[Op:\w+\](?: name: \S*)?")


@dataclass(frozen=True)
class _Bound:
    parameter: str
    node: ast.expr
    source: str
    entry: str | None = None  # the parameter's documentation, on one line


@dataclass(frozen=True)
class _Callee:
    function: Any  # whose signature binds the call
    doc: str
    skip_first: bool  # its first parameter is ``self``
    library: str  # "TensorFlow" or "Keras"
    constructor: bool = False  # a class's ``__init__``: its arguments shown as keywords


def documented_arguments(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> str | None:
    """The documented requirement of each argument the error is about, next to the
    learner's argument; None when the callee, its documentation or a requirement in it is
    not found."""
    try:
        return _documented(parsed, line, context)
    except Exception:
        return None


def _documented(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> str | None:
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    callees = _callees(call, line, context)
    if not callees:
        return None
    candidates: list[_Bound] = []
    for node, callee in callees:
        candidates.extend(_bound_arguments(node, callee, line))
    if not candidates:
        return None
    text = _FUNCTION_NODE.sub("", (parsed.full_message or parsed.message or "")[:_MESSAGE_CHARS])
    about_types = bool(_ABOUT_TYPES.search(text))
    quoted: list[tuple[_Bound, str]] = []
    for argument in candidates[:8]:
        quote = _requirement(argument.entry, about_types) if argument.entry else None
        if quote is not None:
            quoted.append((argument, quote))
    checks, shown = _checked(quoted, line)
    swapped = _transposed(quoted, shown, line, context)
    if swapped is not None:
        return swapped
    named = [item for item in shown if _named_in(item[0].parameter, text) and item[2] != MET]
    violated = [item for item in shown if item[2] == VIOLATED]
    if violated:
        chosen = violated + [item for item in named if item not in violated]
    elif named:
        chosen = named
    else:
        chosen = [item for item in shown if item[2] != MET]
    mentioned = _message_names(candidates, text, line)
    if not chosen:
        return mentioned
    parts = []
    for argument, quote, verdict in chosen[:_MAX_PARAMETERS]:
        part = f"{code(argument.parameter)} ({_shown(argument, line)}): \u201c{quote}\u201d"
        extra = checks.explained(quote, argument.source) if verdict != MET else None
        parts.append(f"{part} ({extra})" if extra else part)
    library = callees[-1][1].library
    documented = (
        f"{library} documents what {code(_callee_name(call, line))} expects: "
        + "; ".join(parts)
        + "."
    )
    return f"{mentioned} {documented}" if mentioned else documented


def _checked(
    quoted: list[tuple[_Bound, str]], line: FailingLine
) -> tuple[ShapeCheck, list[tuple[_Bound, str, str]]]:
    """Each quote's verdict, with the blame for a letter's two sizes put on the one argument
    that disagrees with all the others. Read in call order, the first argument fixes the
    letters and the later, correct ones would look wrong (``indices`` (2, 430) for
    "`[N, ndims]`" makes ``values`` (430,) for "`[N]`" look wrong): when leaving exactly one
    argument out makes the rest agree, that argument is read last, so it alone is blamed."""
    order = list(range(len(quoted)))
    first_checks, first_verdicts = _verdicts(quoted, order, line)
    # No single argument to blame: every argument on either side of a letter's two sizes
    # is told, each with its documented shape, rather than whichever came later.
    in_call_order = (
        first_checks,
        [
            (argument, quote, VIOLATED if argument.source in first_checks.partners else verdict)
            for (argument, quote), verdict in zip(quoted, first_verdicts, strict=True)
        ],
    )
    if VIOLATED not in first_verdicts:
        return in_call_order
    odd_ones = []
    for left_out in order:
        rest = [index for index in order if index != left_out]
        _, verdicts = _verdicts(quoted, [*rest, left_out], line)
        if verdicts[-1] == VIOLATED and VIOLATED not in verdicts[:-1]:
            odd_ones.append(left_out)
    if len(odd_ones) != 1:
        return in_call_order
    last = odd_ones[0]
    reordered = [index for index in order if index != last] + [last]
    checks, verdicts = _verdicts(quoted, reordered, line)
    by_index = dict(zip(reordered, verdicts, strict=True))
    return checks, [(*quoted[index], by_index[index]) for index in order]


def _verdicts(
    quoted: list[tuple[_Bound, str]],
    order: list[int],
    line: FailingLine,
    shapes: dict[int, tuple[int | None, ...]] | None = None,
) -> tuple[ShapeCheck, list[str]]:
    checks = ShapeCheck()
    verdicts = []
    for index in order:
        argument, quote = quoted[index]
        shape = (shapes or {}).get(index) or _argument_shape(argument, line)
        verdicts.append(checks.verdict(quote, shape, argument.source))
    return checks, verdicts


def _transposed(
    quoted: list[tuple[_Bound, str]],
    shown: list[tuple[_Bound, str, str]],
    line: FailingLine,
    context: ErrorContext,
) -> str | None:
    """A 2-D argument written with its two axes the other way round (``indices`` (2, 430)
    where the documentation says `[N, ndims]` and ``dense_shape`` makes ``ndims`` 2): the
    one argument whose swapped shape makes every documented shape of the call agree. Told
    with its documented shape and, for a named array or tensor, the call with it
    transposed; None when no argument, or more than one, is set right by swapping."""
    if not any(verdict == VIOLATED for _, _, verdict in shown):
        return None
    found = []
    for index, (argument, quote) in enumerate(quoted):
        shape = _argument_shape(argument, line)
        if shape is None or len(shape) != 2 or None in shape or shape[0] == shape[1]:
            continue
        flipped = (shape[1], shape[0])
        order = [i for i in range(len(quoted)) if i != index] + [index]
        _, verdicts = _verdicts(quoted, order, line, {index: flipped})
        if VIOLATED not in verdicts and verdicts[-1] == MET:
            found.append((argument, quote, shape, flipped))
    if len(found) != 1:
        return None
    argument, quote, shape, flipped = found[0]
    said = (
        f"{code(argument.source)} is {shape}, and the documentation of "
        f"{code(argument.parameter)} says \u201c{quote}\u201d: with the call's other "
        f"arguments that is {flipped}, the same two sizes the other way round, so its axes "
        "are swapped (a stack or concatenation along the wrong axis gives this)"
    )
    operand = line.operand(argument.source)
    kind = operand.kind if operand is not None else None
    replacement = None
    if kind == "array" and isinstance(argument.node, ast.Name):
        replacement = f"{argument.source}.T"
    elif kind in ("tensor", "variable") and isinstance(argument.node, ast.Name):
        replacement = f"{tf_alias(context)}.transpose({argument.source})"
    statement = line.frame.statement()
    fixed = None
    if replacement is not None and statement is not None and not hasattr(statement, "body"):
        fixed = one_line_code(rewrite(line.frame, statement, argument.node, replacement))
    if fixed is None:
        return said + "."
    return f"{said}. Fix: {fixed}."


def _message_names(candidates: list[_Bound], text: str, line: FailingLine) -> str | None:
    """``In the message, `value` is your `tile` and `size` is your `[32, 32, 3]`.``: the
    call's parameters the message speaks of by name, read as the learner's arguments."""
    said = []
    for argument in candidates:
        if len(said) >= _MAX_PARAMETERS or argument.source == argument.parameter:
            continue
        if _named_in(argument.parameter, text, strict=True):
            said.append(f"{code(argument.parameter)} is your {code(argument.source)}")
    if not said:
        return None
    return f"In the message, {' and '.join(said)}."


def _callees(
    call: ast.Call, line: FailingLine, context: ErrorContext
) -> list[tuple[ast.Call, _Callee]]:
    """The library callables the failing call runs, each with the call that binds it: a
    function or class; for a layer called on the line, its constructor's call (when written
    there) and its ``call`` method."""
    frame = line.frame
    func = call.func
    layer_class: type | None = None
    found: list[tuple[ast.Call, _Callee]] = []
    if isinstance(func, ast.Call):
        # ``keras.layers.Concatenate(axis=1)([a, b])``: the constructor, then ``call``.
        inner = library_callable(func.func, frame, context)
        if inner is not None and isinstance(inner[0], type):
            layer_class = inner[0]
            constructor = _constructor(layer_class)
            if constructor is not None:
                found.append((func, constructor))
    elif isinstance(func, ast.Name):
        known, value = context.lookup(func.id, frame)
        if known and not isinstance(value, (type, types.FunctionType, types.ModuleType)):
            cls = type(value)
            if is_library_class(cls) and isinstance(
                class_attribute(cls, "call"), types.FunctionType
            ):
                layer_class = cls
    if layer_class is not None:
        method = class_attribute(layer_class, "call")
        if isinstance(method, types.FunctionType) and is_library_class(layer_class):
            doc = _call_section(_doc_of(layer_class))
            found.append((call, _Callee(method, doc, True, _library(layer_class.__module__))))
        return found
    callee = library_callable(func, frame, context)
    if callee is None:
        return []
    function, bound = callee
    if isinstance(function, type):
        constructor = _constructor(function)
        return [(call, constructor)] if constructor is not None else []
    return [(call, _Callee(function, _doc_of(function), bound, _library(function.__module__)))]


def line_bindings(line: FailingLine, context: ErrorContext) -> dict[str, tuple[str, Any]]:
    """The failing call's arguments by parameter name -> (their source, the code object of
    the function whose parameter it is, None for a class's constructor); a layer called on
    the line brings its constructor's keywords too (as ``axis=3``)."""
    call = line.call
    if not isinstance(call, ast.Call):
        return {}
    found: dict[str, tuple[str, Any]] = {}
    try:
        for node, callee in _callees(call, line, context):
            code_object = _code_of(callee.function)
            for argument in _bind(node, _parameters_of(callee), line):
                written = argument.source
                keyword = node is not call or callee.constructor
                shown = f"{argument.parameter}={written}" if keyword else written
                found.setdefault(argument.parameter, (shown, code_object))
    except Exception:
        return {}
    return found


def _code_of(function: Any) -> Any:
    """The code object of a library function, past ``functools.wraps`` decorators."""
    for _ in range(8):
        wrapped = (
            function.__dict__.get("__wrapped__")
            if isinstance(function, types.FunctionType)
            else None
        )
        if wrapped is None:
            break
        function = wrapped
    return function.__code__ if isinstance(function, types.FunctionType) else None


def _parameters_of(callee: _Callee) -> list[inspect.Parameter]:
    try:
        parameters = list(inspect.signature(callee.function).parameters.values())
    except (TypeError, ValueError):
        return []
    return parameters[1:] if callee.skip_first and parameters else parameters


def _constructor(cls: type) -> _Callee | None:
    """A class's ``__init__`` (its signature: a metaclass's ``__call__`` may hide it from
    ``inspect.signature`` of the class), documented by the class or by ``__init__``."""
    doc = _doc_of(cls)
    init = class_attribute(cls, "__init__")
    if not isinstance(init, types.FunctionType):
        return None
    if not _args_entries(doc):
        doc = _doc_of(init)
    return _Callee(init, doc, True, _library(cls.__module__), constructor=True)


def _bound_arguments(call: ast.Call, callee: _Callee, line: FailingLine) -> list[_Bound]:
    parameters = _parameters_of(callee)
    entries = _args_entries(callee.doc)
    return [replace(b, entry=entries.get(b.parameter)) for b in _bind(call, parameters, line)]


def _doc_of(value: Any) -> str:
    if isinstance(value, type):
        doc = type.__dict__["__dict__"].__get__(value).get("__doc__")
    else:
        doc = value.__doc__ if isinstance(value, types.FunctionType) else None
    return doc[:_MAX_DOC] if type(doc) is str else ""


def _library(module: Any) -> str:
    return "Keras" if type(module) is str and module.startswith("keras") else "TensorFlow"


def _callee_name(call: ast.Call, line: FailingLine) -> str:
    func = call.func.func if isinstance(call.func, ast.Call) else call.func
    written = line.frame.segment(func) or "the call"
    return written if len(written) <= 60 else written[:57] + "..."


def _call_section(doc: str) -> str:
    """A layer class's "Call arguments:" section, renamed "Args:" for the parser."""
    lines = doc.splitlines()
    for index, text in enumerate(lines):
        found = _SECTION.match(text)
        if found and found.group("title").lower().startswith("call"):
            return "\n".join([f"{found.group('indent')}Args:", *lines[index + 1 :]])
    return ""


def _args_entries(doc: str) -> dict[str, str]:
    """The entries of the docstring's (first) "Args:" section: parameter -> its text on
    one line."""
    if not doc:
        return {}
    lines = doc.expandtabs().splitlines()
    start = next(
        (
            index
            for index, text in enumerate(lines)
            if (found := _SECTION.match(text))
            and not found.group("title").lower().startswith("call")
        ),
        None,
    )
    if start is None:
        return {}
    entries: dict[str, list[str]] = {}
    entry_indent: int | None = None
    current: str | None = None
    for text in lines[start + 1 :]:
        if not text.strip():
            if current is not None:
                entries[current].append("")
            continue
        indent = len(text) - len(text.lstrip())
        section_indent = len(lines[start]) - len(lines[start].lstrip())
        if indent <= section_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        stripped = text.strip()
        if indent == entry_indent:
            found = _ENTRY.match(stripped)
            if found is None:
                break
            current = found.group("name").lstrip("*")
            entries[current] = [found.group("text")]
        elif current is not None:
            entries[current].append(stripped)
    return {name: _first_paragraph(parts) for name, parts in entries.items()}


def _first_paragraph(parts: list[str]) -> str:
    kept: list[str] = []
    for part in parts:
        if not part:
            if kept:
                break
            continue
        kept.append(part)
    return " ".join(kept)


def _requirement(entry: str, about_types: bool) -> str | None:
    """The sentences of an Args entry that state a requirement, bounded; the list of
    allowed dtypes only when the message is about types."""
    sentences = [s.strip() for s in _SENTENCE_END.split(entry) if s.strip()]
    kept = [
        sentence
        for sentence in sentences
        if _REQUIREMENT.search(sentence)
        and (about_types or not _only_types(sentence))
        and not sentence.lower().startswith(_CONDITIONAL)
    ]
    if not kept:
        return None
    quote = ""
    for sentence in kept:
        joined = f"{quote} {sentence}".strip()
        if len(joined) > _MAX_QUOTE:
            break
        quote = joined
    if not quote:
        quote = kept[0][: _MAX_QUOTE - 3].rstrip() + "..."
    return quote


def _only_types(sentence: str) -> bool:
    """A sentence that says which dtypes or Python types are taken, and no shape."""
    return bool(_TYPES_LIST.search(sentence)) and not _SHAPE_WORDS.search(sentence)


def _bind(call: ast.Call, parameters: list[inspect.Parameter], line: FailingLine) -> list[_Bound]:
    """The call's arguments bound to the parameters, as Python binds them (positional
    ones in order until ``*args``, keywords by name); starred arguments stop the binding."""
    frame = line.frame
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    names = {p.name for p in parameters}
    bound: list[_Bound] = []
    for index, node in enumerate(call.args):
        if isinstance(node, ast.Starred) or index >= len(positional):
            break
        source = frame.segment(node)
        if source:
            bound.append(_Bound(positional[index].name, node, source))
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in names:
            continue
        source = frame.segment(keyword.value)
        if source:
            bound.append(_Bound(keyword.arg, keyword.value, source))
    return [b for b in bound if b.parameter not in _IGNORED]


def _named_in(parameter: str, text: str, strict: bool = False) -> bool:
    """Whether the message speaks of ``parameter``: by its name (or its words, ``segment
    ids``), a short name only quoted; ``strict``, only as written, in quotes or backticks,
    or as code (``value.shape``)."""
    if strict:
        escaped = re.escape(parameter)
        pattern = (
            rf"[`'\"]{escaped}[`'\"]|(?<![\w.]){escaped}(?=\.\w|\[|\s*[<>=!]=?)"
            rf"|[<>=]=?\s*{escaped}(?![\w(])"
        )
        return bool(re.search(pattern, text))
    spellings = {parameter, parameter.replace("_", " ")}
    for spelling in spellings:
        if len(spelling) < 3:
            pattern = rf"[`'\"]{re.escape(spelling)}[`'\"]"
            flags = 0
        else:
            pattern = rf"(?<![\w.]){re.escape(spelling)}(?!\w)"
            flags = re.IGNORECASE
        if re.search(pattern, text, flags):
            return True
    return False


def _argument_shape(argument: _Bound, line: FailingLine) -> tuple[int | None, ...] | None:
    """The argument's shape: the value's (as the failing line read it), else a literal's
    written in the call (``[[0, 0], [1, 2]]`` is (2, 2), ``7`` is ())."""
    operand = line.operand(argument.source)
    if operand is not None:
        if operand.kind in ("scalar", "list"):
            return value_shape(operand.value)
        return operand.shape if operand.kind != "shape" else None
    written = literal_shape(argument.node)
    if written is None and isinstance(argument.node, (ast.List, ast.Tuple)):
        # ``[N, N]``: a flat list of names the line read as Python numbers is 1-D.
        kinds = [_scalar_item(item, line) for item in argument.node.elts]
        if kinds and all(kinds):
            return (len(kinds),)
    return written


def _scalar_item(node: ast.expr, line: FailingLine) -> bool:
    if literal_shape(node) == ():
        return True
    if not isinstance(node, ast.Name):
        return False
    operand = line.operand(node.id)
    return operand is not None and operand.kind == "scalar"


def value_shape(value: Any, depth: int = 0) -> tuple[int | None, ...] | None:
    """The shape of a Python number or nested list/tuple of numbers (exact types only, a
    bounded look), None for anything else or ragged lists."""
    if type(value) in (int, float, bool):
        return ()
    if type(value) in (list, tuple) and depth < 8 and len(value) <= 10_000:
        inner = {value_shape(item, depth + 1) for item in value[:64]}
        if len(inner) > 1 or None in inner:
            return None
        rest = next(iter(inner)) if inner else ()
        return (len(value), *rest) if rest is not None else None
    return None


def literal_shape(node: ast.AST, depth: int = 0) -> tuple[int | None, ...] | None:
    """The shape of a number or nested list/tuple of numbers written in the source; None
    when it is anything else or ragged."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return ()
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return literal_shape(node.operand, depth)
    if isinstance(node, (ast.List, ast.Tuple)) and depth < 8 and len(node.elts) <= 10_000:
        inner = {literal_shape(item, depth + 1) for item in node.elts[:64]}
        if len(inner) > 1 or None in inner:
            return None
        rest = next(iter(inner)) if inner else ()
        return (len(node.elts), *rest) if rest is not None else None
    return None


def _shown(argument: _Bound, line: FailingLine) -> str:
    """``your `shop_ids`, a (4,) int32 tensor``; a literal or expression as written."""
    operand = line.operand(argument.source)
    if len(argument.source) > _MAX_ARGUMENT:
        return operand.description if operand is not None else "your argument"
    if operand is not None:
        return f"your {code(argument.source)}, {operand.description}"
    return f"your {code(argument.source)}"
