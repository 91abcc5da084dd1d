"""The library's own check that refused the learner's argument (issue #25).

When TensorFlow or Keras raise from Python, the innermost library frame of the traceback
holds the test that failed: a ``raise`` under ``if not 0 <= rate <= 1``, an
``_assert(height >= target_height + offset_height, ...)`` helper whose ``if not cond``
is its caller's condition, or a line that failed by itself (``input_shape[self.axis]``
raising IndexError). This module reads that test from the library's source (``linecache``
and ``ast``, read-only) and says what each name in it held, naming the learner's argument
where the value came from the failing line:

    TensorFlow's check `height >= (target_height + offset_height)` (in
    `crop_to_bounding_box`) was false: `height` is 50; `target_height` is your `60`;
    `offset_height` is your `10`.

A name is the learner's argument when it is a parameter of the library function the
failing line called (bound as Python binds the call's arguments), when its value is the
very object a name on the failing line holds (``is``), or when it is ``self.<attr>`` of a
library object and the line gave the keyword ``<attr>``. Only library frames are read
(the frame objects the traceback keeps, followed through ``f_back`` past TensorFlow's and
Keras's traceback filtering); values are shown only when they are Python numbers, short
strings, shapes (tuples of sizes) or tensors described by ``failing_line.describe``, never
by ``repr`` of anything else. Without a name from the learner's line, nothing is said.
"""

from __future__ import annotations

import ast
import linecache
import textwrap
import types
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    ParsedError,
    code,
    instance_attribute,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, library_attribute

_LIBRARY_ROOTS = ("tensorflow", "keras")
_MAX_FRAMES = 4
_MAX_FUNCTION_LINES = 400
_MAX_TEST = 100
_MAX_NAMES = 4
_MAX_TRACEBACK = 200
_MAX_OUTWARDS = 30
_SCALARS = (int, float, bool)
_type_name = type.__dict__["__name__"].__get__
_sources: dict[tuple[str, int], ast.AST | None] = {}
_MAX_CACHED = 256


@dataclass(frozen=True)
class _Check:
    test: ast.expr  # the condition, as written in the library
    text: str  # its source
    failed_when: bool  # the raise ran when the test was this (an ``if``), or
    frame: types.FrameType  # whose locals its names are read in
    line_only: bool = False  # the library's statement failed by itself


def library_check(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> str | None:
    """The library's failing test with the learner's arguments named in it, or None."""
    try:
        return _said(line, context)
    except Exception:
        return None


def _said(line: FailingLine, context: ErrorContext) -> str | None:
    frame = _innermost_library_frame(context)
    if frame is None:
        return None
    arguments = _line_arguments(line, context)
    check = _check_in(frame)
    said = _check_said(check, arguments, line) if check is not None else None
    if said is None:
        # The innermost test names none of the learner's arguments: the innermost line,
        # outwards up to the function the learner called, where one of them meets a value
        # of the library's own (``convert_to_tensor(default_value, dtype=self._value_dtype)``);
        # a line that only hands the arguments on says nothing new.
        current: types.FrameType | None = frame.f_back
        codes = {id(bound[1]) for bound in arguments.values() if bound[1] is not None}
        for _ in range(_MAX_OUTWARDS):
            if current is None or not _is_library(current):
                break
            said = _check_said(_line_check(current), arguments, line, library_value=True)
            if said is not None or id(current.f_code) in codes:
                break
            current = current.f_back
    return said


def _line_check(frame: types.FrameType) -> _Check | None:
    parsed = _function_tree(frame)
    if parsed is None:
        return None
    tree, offset = parsed
    path = _statement_path(tree, frame.f_lineno - offset)
    return _statement_check(path[-1] if path else None, frame)


def _statement_check(statement: ast.AST | None, frame: types.FrameType) -> _Check | None:
    """The statement a library frame stopped on, as a check on its whole line (a raise
    inside the call it makes, not under an ``if`` of its own)."""
    if not isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.Return)):
        return None
    text = ast.unparse(statement).strip()
    if statement.value is None or len(text) > _MAX_TEST:
        return None
    return _Check(statement.value, text, True, frame, line_only=True)


def _check_said(
    check: _Check | None,
    arguments: dict[str, tuple[str, Any]],
    line: FailingLine,
    library_value: bool = False,
) -> str | None:
    """The check with its names' values; None unless one is the learner's argument (and,
    with ``library_value``, one is a value of the library's own, not a parameter)."""
    if check is None:
        return None
    names = [(name, node) for name, node in _names(check.test) if name != "name"]
    parts: list[str] = []
    mapped = 0
    own = 0
    for name, node in names[:_MAX_NAMES]:
        value_known, value = _local_value(check.frame, node)
        ours = _argument_for(
            name, node, value if value_known else None, check.frame, arguments, line
        )
        shown = _shown_value(value) if value_known else None
        if ours is not None:
            mapped += 1
            parts.append(
                f"{code(name)} is your {code(ours)}"
                + (f" ({shown})" if shown and not ours.endswith(shown) else "")
            )
        elif shown is not None and shown != "None":
            parts.append(f"{code(name)} is {shown}")
            if isinstance(node, ast.Attribute) or not _is_parameter(check.frame, name):
                own += 1
    if not mapped or (library_value and not own):
        return None
    where = code(_function_name(check.frame))
    library = "Keras" if _module(check.frame).startswith("keras") else "TensorFlow"
    if check.line_only:
        head = f"{library} failed on its line {code(check.text)} (in {where})"
    else:
        verdict = "true" if check.failed_when else "false"
        head = f"{library}'s check {code(check.text)} (in {where}) was {verdict}"
    return f"{head}: {'; '.join(parts)}."


def _module(frame: types.FrameType) -> str:
    name = frame.f_globals.get("__name__") if type(frame.f_globals) is dict else None
    return name if type(name) is str else ""


def _is_library(frame: types.FrameType) -> bool:
    return _module(frame).partition(".")[0] in _LIBRARY_ROOTS


def _innermost_library_frame(context: ErrorContext) -> types.FrameType | None:
    traceback = context.exception.__traceback__
    last = None
    for _ in range(_MAX_TRACEBACK):
        if traceback is None:
            break
        last = traceback
        traceback = traceback.tb_next
    if last is None or not _is_library(last.tb_frame):
        return None
    return last.tb_frame


def _function_tree(frame: types.FrameType) -> tuple[ast.AST, int] | None:
    """The frame's function parsed from the library's file, and the line offset of the
    parsed text (cached per function: library files do not change in a session)."""
    code_object = frame.f_code
    key = (code_object.co_filename, code_object.co_firstlineno)
    if key in _sources:
        tree = _sources[key]
        return (tree, code_object.co_firstlineno - 1) if tree is not None else None
    lines = linecache.getlines(code_object.co_filename)
    start = code_object.co_firstlineno - 1
    tree = None
    if 0 <= start < len(lines):
        block = lines[start : start + _MAX_FUNCTION_LINES]
        first = block[0]
        indent = len(first) - len(first.lstrip())
        end = len(block)
        seen_def = False
        for index, text in enumerate(block[1:], start=1):
            if not text.strip():
                continue
            this = len(text) - len(text.lstrip())
            if not seen_def and text.lstrip().startswith(("def ", "async def ")):
                seen_def = True
                continue
            # Before the ``def``: more decorators; after it, a signature's closing line.
            allowed = (")",) if seen_def else (")", "@")
            if this <= indent and not text.lstrip().startswith(allowed):
                end = index
                break
        try:
            tree = ast.parse(textwrap.dedent("".join(block[:end])))
        except (SyntaxError, ValueError):
            tree = None
    if len(_sources) >= _MAX_CACHED:
        _sources.clear()
    _sources[key] = tree
    return (tree, start) if tree is not None else None


def _statement_path(tree: ast.AST, line: int) -> list[ast.AST]:
    """The nodes from the function down to the innermost statement on ``line``."""
    path: list[ast.AST] = []
    node: ast.AST | None = tree
    while node is not None:
        path.append(node)
        inner = None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler):
                end = getattr(child, "end_lineno", None) or child.lineno
                if child.lineno <= line <= end:
                    inner = child
                    break
        node = inner
    return path


def _check_in(frame: types.FrameType) -> _Check | None:
    for _ in range(_MAX_FRAMES):
        parsed = _function_tree(frame)
        if parsed is None:
            return None
        tree, offset = parsed
        path = _statement_path(tree, frame.f_lineno - offset)
        statement = path[-1] if path else None
        if not isinstance(statement, ast.stmt):
            return None
        if not isinstance(statement, ast.Raise):
            return _statement_check(statement, frame)
        branch = next(
            (
                (node, path[index + 1])
                for index, node in reversed(list(enumerate(path[:-1])))
                if isinstance(node, ast.If)
            ),
            None,
        )
        if branch is None:
            return None
        condition, child = branch
        failed_when = any(child is node for node in condition.body)
        test = condition.test
        # ``if not cond: raise``, where ``cond`` is a parameter: the caller's argument is
        # the real test (``_assert(height >= target + offset, ...)``).
        inner = (
            test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        )
        if isinstance(inner, ast.Name) and _is_parameter(frame, inner.id):
            caller = frame.f_back
            if caller is None or not _is_library(caller):
                return None
            passed = _passed_argument(caller, frame, inner.id)
            if passed is None:
                return None
            negated = inner is not test
            return _Check(passed, _source(passed), failed_when != negated, caller)
        text = _source(test)
        if len(text) > _MAX_TEST:
            return None
        return _Check(test, text, failed_when, frame)
    return None


def _source(node: ast.AST) -> str:
    return ast.unparse(node)


def _is_parameter(frame: types.FrameType, name: str) -> bool:
    code_object = frame.f_code
    count = code_object.co_argcount + code_object.co_kwonlyargcount
    return name in code_object.co_varnames[:count]


def _passed_argument(
    caller: types.FrameType, callee: types.FrameType, parameter: str
) -> ast.expr | None:
    """The expression ``caller``'s line passed for ``callee``'s ``parameter``."""
    parsed = _function_tree(caller)
    if parsed is None:
        return None
    tree, offset = parsed
    line = caller.f_lineno - offset
    code_object = callee.f_code
    positional = list(code_object.co_varnames[: code_object.co_argcount])
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not (node.lineno <= line <= (node.end_lineno or 0)):
            continue
        name = (
            node.func.attr
            if isinstance(node.func, ast.Attribute)
            else getattr(node.func, "id", None)
        )
        if name != code_object.co_name:
            continue
        for keyword in node.keywords:
            if keyword.arg == parameter:
                return keyword.value
        if parameter in positional:
            index = positional.index(parameter)
            if index < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args):
                return node.args[index]
    return None


def _names(test: ast.expr) -> list[tuple[str, ast.expr]]:
    """Names and ``self.<attr>`` reads of the test, in order, each once."""
    found: list[tuple[str, ast.expr]] = []
    seen: set[str] = set()
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            key = f"self.{node.attr}"
        elif isinstance(node, ast.Name) and node.id not in (
            "self",
            "len",
            "isinstance",
            "any",
            "all",
        ):
            key = node.id
        else:
            continue
        if key not in seen:
            seen.add(key)
            found.append((key, node))
    found.sort(key=lambda item: (item[1].lineno, item[1].col_offset))
    return found


def _local_value(frame: types.FrameType, node: ast.expr) -> tuple[bool, Any]:
    local_names = frame.f_locals
    if isinstance(node, ast.Name):
        if node.id in local_names:
            return True, local_names[node.id]
        return False, None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner = local_names.get(node.value.id)
        if owner is None:
            return False, None
        if not is_library_class(type(owner)):
            return False, None
        return instance_attribute(owner, node.attr)
    return False, None


def _line_arguments(line: FailingLine, context: ErrorContext) -> dict[str, tuple[str, Any]]:
    """The failing call's arguments by parameter name (and, for a layer called on the
    line, its constructor's): parameter -> (source, the function's code or None)."""
    from jupyterlab_tfcoach.monitor.errors.documented_arguments import line_bindings

    return line_bindings(line, context)


def _argument_for(
    name: str,
    node: ast.expr,
    value: Any,
    frame: types.FrameType,
    arguments: dict[str, tuple[str, Any]],
    line: FailingLine,
) -> str | None:
    if isinstance(node, ast.Attribute):
        bound = arguments.get(node.attr)
        if bound is not None:
            return (
                f"{node.attr}={bound[0]}" if not bound[0].startswith(f"{node.attr}=") else bound[0]
            )
        return None
    bound = arguments.get(name)
    if bound is not None and (bound[1] is None or bound[1] is frame.f_code):
        return bound[0]
    if bound is not None and type(value) in (*_SCALARS, str) and _is_parameter(frame, name):
        # A parameter of the same name deeper in the library, holding the number or text
        # the learner wrote (``default_value`` handed on to a base class).
        written = bound[0].partition("=")[2] if "=" in bound[0] else bound[0]
        try:
            literal = ast.literal_eval(written)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if type(literal) is type(value) and literal == value:
            return bound[0]
        return None
    if value is not None and type(value) not in (*_SCALARS, str, tuple, list, dict):
        for operand in line.operands:
            if operand.value is value:
                return operand.source
    return None


def _shown_value(value: Any) -> str | None:
    cls = type(value)
    if value is None:
        return "None"
    if cls in _SCALARS:
        return repr(value)
    if cls is str:
        return repr(value) if len(value) <= 30 else None
    if cls is tuple and all(type(item) is int or item is None for item in value):
        return show_shape(value)
    if _type_name(cls) == "DType" and is_library_class(cls):
        name = library_attribute(value, "name")
        return name if type(name) is str else None
    described = describe("", value)
    if described is not None and described.kind not in ("list", "dict", "none", "scalar"):
        return described.description
    return None


def _function_name(frame: types.FrameType) -> str:
    code_object = frame.f_code
    qualified = getattr(code_object, "co_qualname", None)
    return qualified if type(qualified) is str else code_object.co_name


# At most this many values are read from one library function's comparisons.
_MAX_COMPARED = 16
_STRING_SETS = (tuple, list, set, frozenset)


def compared_strings(context: ErrorContext, value: str) -> list[str]:
    """The strings the library compared the learner's string option with before it
    raised: ``if method == ResizeMethod.BILINEAR: ... elif ...: else: raise`` gives every
    method's value. Read from the innermost library function (then outwards, library
    frames only) whose local holds ``value`` (any case): its comparisons of that local with
    string literals, with names or class attributes of the library holding strings, or
    with a collection of them (a set, a dict's keys). Empty when none is found."""
    try:
        return _compared_strings(context, value)
    except Exception:
        return []


def _compared_strings(context: ErrorContext, value: str) -> list[str]:
    frame = _innermost_library_frame(context)
    wanted = value.lower()
    for _ in range(_MAX_FRAMES):
        if frame is None or not _is_library(frame):
            break
        parsed = _function_tree(frame)
        if parsed is not None:
            names = {
                name
                for name, held in frame.f_locals.items()
                if type(held) is str and held.lower() == wanted
            }
            found: list[str] = []
            for node in ast.walk(parsed[0]) if names else ():
                if not isinstance(node, ast.Compare):
                    continue
                sides = [node.left, *node.comparators]
                for op, left, right in zip(node.ops, sides, sides[1:], strict=False):
                    if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                        continue
                    if isinstance(left, ast.Name) and left.id in names:
                        found += _strings_of(right, frame)
                    elif isinstance(right, ast.Name) and right.id in names:
                        found += _strings_of(left, frame)
            found = [text for text in dict.fromkeys(found) if text.lower() != wanted]
            if found:
                return found[:_MAX_COMPARED]
        frame = frame.f_back
    return []


def _strings_of(node: ast.expr, frame: types.FrameType) -> list[str]:
    """The strings an expression of the library's source holds, read without running it:
    a literal, a collection of literals, a name of the frame or its module, a class's or
    module's attribute (from its ``__dict__``, never through a descriptor)."""
    if isinstance(node, ast.Constant):
        return [node.value] if type(node.value) is str else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [text for element in node.elts for text in _strings_of(element, frame)]
    held = _held_by(node, frame)
    if type(held) is str:
        return [held]
    if isinstance(held, _STRING_SETS) and len(held) <= _MAX_COMPARED:
        return [text for text in held if type(text) is str]
    if type(held) is dict and len(held) <= _MAX_COMPARED:
        return [text for text in held if type(text) is str]
    return []


def _held_by(node: ast.expr, frame: types.FrameType) -> Any:
    if isinstance(node, ast.Name):
        if node.id in frame.f_locals:
            return frame.f_locals[node.id]
        return frame.f_globals.get(node.id) if type(frame.f_globals) is dict else None
    if isinstance(node, ast.Attribute):
        owner = _held_by(node.value, frame)
        if isinstance(owner, (type, types.ModuleType)):
            return vars(owner).get(node.attr)
    return None
