"""Which ``GradientTape`` binding a ``tape.method(...)`` call uses (TFC006, TFC008), and
where a module-level tape is released (``del``) after its last use (TFC006's fix, so that
TFC007 has nothing to say about the persistent tape the fix makes)."""

from __future__ import annotations

import ast
import bisect
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Edit
from jupyterlab_tfcoach.analysis.model import Binding, Model, Scope, Site
from jupyterlab_tfcoach.analysis.values import TAPE, Value


class TapeCall(NamedTuple):  # one per tape method call in the file: cheap to build
    site: Site
    call: ast.Call
    method: str
    tape_name: str
    binding: Binding  # the one binding creating the tape this call uses
    tape: Value


def tape_calls(ctx: RuleContext, methods: frozenset[str]) -> Iterator[TapeCall]:
    """Calls ``<name>.<method>(...)`` where ``<name>`` surely is one tape created in this scope."""
    for site in ctx.calls_named(*sorted(methods)):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in methods
            and isinstance(func.value, ast.Name)
        ):
            continue
        name = func.value
        resolution = ctx.bindings.names.resolve(
            site.scope, name.id, (name.lineno, name.col_offset), site.path
        )
        # Only a tape bound in this very scope: from a nested function we cannot
        # know how many times, or in which order, the calls run.
        if resolution is None or not resolution.flow_sensitive or len(resolution.bindings) != 1:
            continue
        binding = resolution.bindings[0]
        if binding.kind not in ("with", "assign"):
            continue
        tape = ctx.bindings.binding_value(binding)
        if tape.kind == TAPE:
            yield TapeCall(site, call, func.attr, name.id, binding, tape)


@dataclass(frozen=True)
class HelperTapeUse:
    """A call ``helper(tape, ...)`` passing a tape to a function of this file that computes
    gradients with it: ``calls`` are the helper's own ``<param>.<method>(...)`` calls."""

    site: Site
    call: ast.Call
    helper: str
    tape_name: str
    binding: Binding  # the binding creating the tape passed in
    tape: Value
    calls: tuple[Site, ...]  # in source order


def _parameter_tape_calls(
    ctx: RuleContext, methods: frozenset[str]
) -> dict[ast.AST, dict[str, list[Site]]]:
    """Per function definition, the ``<param>.<method>(...)`` calls on each parameter.

    One pass over the method calls; a parameter rebound in the function is not followed.
    """
    found: dict[ast.AST, dict[str, list[Site]]] = {}
    for site in ctx.calls_named(*sorted(methods)):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            continue
        function = site.scope.function
        if function is None or function is not site.scope or function.kind != "function":
            continue  # only the helper's own body: a nested def may run any number of times
        bindings = function.bindings.get(func.value.id, ())
        if len(bindings) != 1 or bindings[0].kind != "param":
            continue
        found.setdefault(function.node, {}).setdefault(func.value.id, []).append(site)
    return found


def _parameter_for(definition: ast.AST, call: ast.Call, argument: ast.expr) -> str | None:
    """The parameter of ``definition`` that ``argument`` of ``call`` binds."""
    assert isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef))
    positional = [*definition.args.posonlyargs, *definition.args.args]
    for index, passed in enumerate(call.args):
        if passed is argument:
            if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
                return None
            return positional[index].arg if index < len(positional) else None
    for passed_keyword in call.keywords:
        if passed_keyword.value is argument and passed_keyword.arg is not None:
            return passed_keyword.arg
    return None


def helper_tape_uses(ctx: RuleContext, methods: frozenset[str]) -> Iterator[HelperTapeUse]:
    """Calls of same-file functions that compute gradients on a tape passed to them."""
    by_definition = _parameter_tape_calls(ctx, methods)
    if not by_definition:
        return
    names = sorted({definition.name for definition in by_definition})  # type: ignore[attr-defined]
    for site in ctx.calls_named(*names):
        call = site.node
        assert isinstance(call, ast.Call)
        if not isinstance(call.func, ast.Name):
            continue  # ``obj.helper(tape)``: which definition runs is not known here
        callee = ctx.bindings.names.resolve(
            site.scope, call.func.id, (call.func.lineno, call.func.col_offset), site.path
        )
        if callee is None or len(callee.bindings) != 1 or callee.bindings[0].kind != "def":
            continue
        definition = callee.bindings[0].node
        per_parameter = by_definition.get(definition)
        if per_parameter is None:
            continue
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            if not isinstance(argument, ast.Name):
                continue
            parameter = _parameter_for(definition, call, argument)
            if parameter is None or parameter not in per_parameter:
                continue
            resolution = ctx.bindings.names.resolve(
                site.scope, argument.id, (argument.lineno, argument.col_offset), site.path
            )
            if resolution is None or not resolution.flow_sensitive:
                continue
            if len(resolution.bindings) != 1 or resolution.bindings[0].kind not in (
                "with",
                "assign",
            ):
                continue
            binding = resolution.bindings[0]
            tape = ctx.bindings.binding_value(binding)
            if tape.kind == TAPE:
                yield HelperTapeUse(
                    site,
                    call,
                    call.func.id,
                    argument.id,
                    binding,
                    tape,
                    tuple(per_parameter[parameter]),
                )


# -- releasing a module-level tape ---------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_Chain = list[tuple[list[ast.stmt], ast.stmt]]  # (statement list, its statement), outermost first


def released_later(ctx: RuleContext, binding: Binding) -> bool:
    """Whether TFC007 leaves this tape binding alone: it is not at module level, or the
    name is deleted or rebound later (also from a function, via ``global``)."""
    if binding.scope is not ctx.model.module:
        return True
    has_remote, latest = _facts(ctx).rebinds(ctx, binding.name)
    return has_remote or latest > binding.pos


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _containing(statements: list[ast.stmt], position: tuple[int, int]) -> ast.stmt | None:
    """The statement of a (sorted) list whose span holds ``position``: a binary search, as a
    notebook may have thousands of tapes in one long list."""
    index = bisect.bisect_right(statements, position, key=_start) - 1
    if index < 0:
        return None
    statement = statements[index]
    end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
    return statement if position < end else None


def _statement_chain(body: list[ast.stmt], position: tuple[int, int]) -> _Chain:
    """The statements containing ``position``, outermost first, each with its list; never
    into a function or class body (code there runs at another time)."""
    chain: _Chain = []
    statements: list[ast.stmt] | None = body
    while statements is not None:
        inner = _containing(statements, position)
        if inner is None:
            break
        chain.append((statements, inner))
        statements = None
        if isinstance(inner, _SCOPES):
            break
        lists: list[list[ast.stmt]] = [
            getattr(inner, field)
            for field in ("body", "orelse", "finalbody")
            if hasattr(inner, field)
        ]
        lists += [handler.body for handler in getattr(inner, "handlers", ())]
        lists += [case.body for case in getattr(inner, "cases", ())]
        statements = next(
            (block for block in lists if _containing(block, position) is not None), None
        )
    return chain


class _ModuleFacts:
    """What the release fix asks of one model, per name, computed once: many findings may
    share a tape name (a notebook of training cells), each asking the same."""

    def __init__(self) -> None:
        self._reads: dict[str, list[tuple[int, int]] | None] = {}
        self._rebinds: dict[str, tuple[bool, tuple[int, int]]] = {}

    def rebinds(self, ctx: RuleContext, name: str) -> tuple[bool, tuple[int, int]]:
        """Whether a function rebinds the module's name, and its latest binding's place."""
        if name not in self._rebinds:
            bindings = ctx.model.module.bindings.get(name, ())
            self._rebinds[name] = (
                any(binding.remote for binding in bindings),
                max((binding.pos for binding in bindings), default=(0, 0)),
            )
        return self._rebinds[name]

    def reads(self, ctx: RuleContext, name: str) -> list[tuple[int, int]] | None:
        """Where the module's own code names ``name``, in order; None when a function,
        class or lambda may read it too (then it may run after any ``del``)."""
        if name not in self._reads:
            self._reads[name] = _walk_reads(ctx, name)
        return self._reads[name]


_FACTS: weakref.WeakKeyDictionary[Model, _ModuleFacts] = weakref.WeakKeyDictionary()


def _facts(ctx: RuleContext) -> _ModuleFacts:
    facts = _FACTS.get(ctx.model)
    if facts is None:
        facts = _FACTS[ctx.model] = _ModuleFacts()
    return facts


def _walk_reads(ctx: RuleContext, name: str) -> list[tuple[int, int]] | None:
    """Where module-level code names ``name`` (``(line, byte column)``); None if the code of
    a function, class or lambda may read the module's ``name`` (one that binds its own
    ``name`` does not).

    Read from the text, not the tree (a notebook may be thousands of statements long): every
    occurrence of the word that is not an attribute counts, in strings and comments too,
    which can only withhold the fix, never misplace the ``del``."""
    source = ctx.source
    line_starts = [0]
    for line in source.lines:
        line_starts.append(line_starts[-1] + len(line) + 1)
    occurrences: list[tuple[int, int]] = []
    for match in re.finditer(rf"(?<![\w.]){re.escape(name)}(?!\w)", source.text):
        line = bisect.bisect_right(line_starts, match.start())
        text = source.line_text(line)
        column = match.start() - line_starts[line - 1]
        if not text.isascii():
            column = len(text[:column].encode("utf-8"))
        occurrences.append((line, column))
    scopes = sorted(
        (scope for scope in ctx.model.scopes if scope.kind in ("function", "lambda", "class")),
        key=lambda scope: _start(scope.node),
    )
    reads: list[tuple[int, int]] = []
    open_scopes: list[Scope] = []  # around the current occurrence, outermost first
    next_scope = 0
    for occurrence in occurrences:
        while next_scope < len(scopes) and _start(scopes[next_scope].node) <= occurrence:
            scope = scopes[next_scope]
            while open_scopes and _end(open_scopes[-1].node) <= _start(scope.node):
                open_scopes.pop()
            open_scopes.append(scope)
            next_scope += 1
        while open_scopes and _end(open_scopes[-1].node) <= occurrence:
            open_scopes.pop()
        if not open_scopes:
            reads.append(occurrence)
        elif not any(
            scope.kind != "class" and name in scope.bindings and name not in scope.global_names
            for scope in open_scopes
        ):
            return None
    return reads


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def release_after_last_use(ctx: RuleContext, binding: Binding) -> Edit | None:
    """``del <tape>`` on a line of its own after the statement holding the tape's last use,
    in the statement list that also holds (a statement around) the binding, at that list's
    indentation; None where that is not safe to write: the name is read in a function,
    class or lambda (it may run after the ``del``), or the statement shares its line."""
    name = binding.name
    tree = ctx.model.tree
    reads = _facts(ctx).reads(ctx, name)
    where = binding.node.context_expr if isinstance(binding.node, ast.withitem) else binding.node
    bound = _statement_chain(tree.body, _start(where))
    if reads is None or not bound:
        return None
    # The last mention in a statement (one in a comment after it is no use).
    used: _Chain = []
    for read in reversed(reads):
        if read <= binding.pos:
            return None
        used = _statement_chain(tree.body, read)
        if used:
            break
    used_lists = {id(statements): statement for statements, statement in used}
    after = next(
        (
            used_lists[id(statements)]
            for statements, _ in reversed(bound)
            if id(statements) in used_lists
        ),
        None,
    )
    if after is None:
        return None
    first_line = ctx.source.line_text(after.lineno)
    indent = first_line[: ctx.source.char_column(after.lineno, after.col_offset)]
    end_line = after.end_lineno or after.lineno
    end_text = ctx.source.line_text(end_line)
    rest = end_text[ctx.source.char_column(end_line, after.end_col_offset or 0) :].strip()
    if indent.strip() or (rest and not rest.startswith("#")):
        return None  # ``x = 1; tape.gradient(...)`` or ``if c: tape.gradient(...)``
    column = len(end_text) + 1
    return Edit(end_line, column, end_line, column, f"\n{indent}del {name}")
