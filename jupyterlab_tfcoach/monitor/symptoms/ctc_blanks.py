"""A CTC loss left at its default blank while the session's other CTC calls take another
class as the blank.

``tf.nn.ctc_loss`` takes class 0 as the blank unless given ``blank_index``, while
``tf.nn.ctc_greedy_decoder`` (by default) and ``tf.nn.ctc_beam_search_decoder`` take the
last class. A model has one blank: trained with one and decoded (or trained before) with
another, a real label is learnt as the blank and the blank as a label, and nothing
raises. When a cell writes ``ctc_loss(...)`` without ``blank_index`` and a CTC call of the
session whose blank is known (this cell or an earlier one, the newest first) takes a
blank that is surely not 0 (an explicit ``blank_index`` whose value is read, or a
decoder's last class), the note names both calls and the loss's fix: the same
``blank_index`` as written there, or ``-1`` (the last class) for a decoder's default.

A cell without ``ctc_loss(`` costs one substring test; reading the session's cells is
bounded (``MAX_HISTORY_CELLS``, each tested for ``ctc_`` before it is parsed). Only
source and plain integers of the namespace are read; nothing here imports TensorFlow.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "labels-and-loss"
MAX_HISTORY_CELLS = 200
MAX_CELL_CHARS = 50_000
_LAST = "last"
_DECODERS = ("ctc_greedy_decoder", "ctc_beam_search_decoder")


def _session_cells(source: str, namespace: Mapping[str, Any]) -> list[tuple[str, str]]:
    """This cell, then the last cells of ``In`` newest first (this cell's own entry left
    out), each with where it is said to be: the cells a CTC call is looked for in."""
    history = namespace.get("In")
    cells: list[tuple[str, str]] = [("this cell", source)]
    if type(history) is list:
        earlier = list(enumerate(history))[-MAX_HISTORY_CELLS:]
        if earlier and earlier[-1][1] == source:
            earlier = earlier[:-1]
        cells += [(f"cell In[{n}]", text) for n, text in reversed(earlier) if type(text) is str]
    return cells


def _integer(node: ast.expr, namespace: Mapping[str, Any]) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if type(value) is int else None
    return None


def _ctc_calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (call_name(node) or "").startswith(("ctc_loss", *_DECODERS))
    ]


def _is_v1(call: ast.Call) -> bool:
    """``tf.compat.v1.nn.ctc_loss`` takes the last class as its blank, with no flag."""
    return "v1" in ast.unparse(call.func).split(".")


def _blank(call: ast.Call, namespace: Mapping[str, Any]) -> tuple[int | str, str] | None:
    """(the blank the call takes: an index or ``_LAST``, how the fix writes it), for a
    call whose blank is written or a decoder's default; None for a loss left at its
    default, or a blank that cannot be read."""
    name = call_name(call) or ""
    written = next((k.value for k in call.keywords if k.arg == "blank_index"), None)
    if written is None:
        if name.startswith(_DECODERS) or _is_v1(call):
            return _LAST, "-1"
        return None
    value = _integer(written, namespace)
    if value is None:
        return None
    if value == -1:
        return _LAST, ast.unparse(written)
    return (value, ast.unparse(written)) if value >= 0 else None


def _default_losses(tree: ast.AST) -> list[ast.Call]:
    return [
        call
        for call in _ctc_calls(tree)
        if (call_name(call) or "").startswith("ctc_loss")
        and not _is_v1(call)
        and not any(k.arg in ("blank_index", None) for k in call.keywords)
    ]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a CTC loss whose default blank (0) is not the session's blank."""
    if "ctc_loss(" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    losses = _default_losses(tree)
    if not losses:
        return []
    for where, text in _session_cells(source, namespace):
        if "ctc_" not in text or len(text) > MAX_CELL_CHARS:
            continue
        other_tree = tree if where == "this cell" else parsed_source(text)
        if other_tree is None:
            continue
        # The newest call whose blank is known decides: 0 agrees with the loss.
        for call in sorted(_ctc_calls(other_tree), key=lambda c: c.lineno, reverse=True):
            found = _blank(call, namespace)
            if found is None:
                continue
            if found[0] == 0:
                return []
            return [_note(losses[0], source, call, text, where, found)]
    return []


def _note(
    loss: ast.Call,
    source: str,
    other: ast.Call,
    other_source: str,
    where: str,
    blank: tuple[int | str, str],
) -> Note:
    written = ast.get_source_segment(source, loss) or "ctc_loss(...)"
    shown = re.sub(r"\s*\n\s*", " ", written)
    other_func = ast.get_source_segment(other_source, other.func) or "a CTC call"
    value, text = blank
    takes = "the last class" if value == _LAST else f"class {value}"
    why = (
        f"its `blank_index={text}`"
        if any(k.arg == "blank_index" for k in other.keywords)
        else "its default"
    )
    head = shown[: shown.rfind(")")].rstrip()
    separator = " " if head.endswith(("(", ",")) else ", "
    fixed = f"{head}{separator}blank_index={text})"
    note = (
        f"`{ast.get_source_segment(source, loss.func) or 'ctc_loss'}` (line "
        f"{loss.lineno} of this cell) is not given `blank_index`, so it trains class 0 as "
        f"the CTC blank, but `{other_func}` in {where} takes {takes} as the blank ({why}). "
        "A model has one blank: with two, a real label is learnt or read as the blank and "
        "the blank as a label, and nothing raises. Give the "
        f"loss the same blank: `{fixed}`."
    )
    return reports.note(note, SECTION)


# --- the beam-search decoder, whose blank is always the last class --------------------

_BEAM = "ctc_beam_search_decoder"


def _zero_blank(call: ast.Call, namespace: Mapping[str, Any]) -> str | None:
    """``blank_index=0`` / ``mask_index=0`` as written, for a call that says its blank is
    class 0 (a TF CTC loss or greedy decoder, Keras's ``ctc_decode``/``ctc_loss``)."""
    for keyword in call.keywords:
        if keyword.arg in ("blank_index", "mask_index") and _integer(keyword.value, namespace) == 0:
            return f"{keyword.arg}={ast.unparse(keyword.value)}"
    return None


def _session_zero_blank(
    source: str, namespace: Mapping[str, Any], before: int
) -> tuple[str, str, str] | None:
    """(the call's function as written, where, its keyword) for the newest CTC call of
    the session (this cell above line ``before``, then the cells of ``In``) whose blank
    is known: only when that blank is class 0."""
    for where, text in _session_cells(source, namespace):
        if "ctc_" not in text or len(text) > MAX_CELL_CHARS:
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (call_name(node) or "").startswith(("ctc_loss", "ctc_greedy_decoder", "ctc_decode"))
            and (where != "this cell" or node.lineno < before)
        ]
        for call in sorted(calls, key=lambda c: c.lineno, reverse=True):
            zero = _zero_blank(call, namespace)
            if zero is not None:
                shown = ast.get_source_segment(text, call.func) or "a CTC call"
                return shown, where, zero
            found = _blank(call, namespace)
            if found is not None:
                return None  # the session's blank is another class
    return None


def beam_search_blank(
    call: ast.Call,
    statement: ast.stmt | None,
    source: str,
    namespace: Mapping[str, Any],
    dropped: ast.keyword | None = None,
) -> tuple[str, list[str]] | None:
    """For ``tf.nn.ctc_beam_search_decoder(scores, ...)`` while the session's CTC calls
    take class 0 as the blank: why the decoder reads the scores with another blank, and
    the fix as two statements: the call given the scores rolled one class down (class 0
    becomes the last, the decoder's blank; ``dropped`` left out), then each path's ids
    moved back up by one. None for another call or session."""
    if (call_name(call) or "") != _BEAM or _is_v1(call):
        return None
    scores = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "inputs":
            scores = keyword.value
    if scores is None:
        return None
    if isinstance(scores, ast.Call) and call_name(scores) == "roll":
        return None  # the scores already moved for the decoder's blank
    session = _session_zero_blank(source, namespace, call.lineno)
    if session is None:
        return None
    other, where, zero = session
    func = ast.get_source_segment(source, call.func) or ""
    written_scores = ast.get_source_segment(source, scores) or ""
    why = (
        f"`{func}` always takes the last class of its scores as the CTC blank (it has no "
        f"`blank_index`), while `{other}` in {where} takes class 0 (its `{zero}`): the "
        "decoder would read the blank's scores as a label's and the last label as the "
        "blank. Roll the scores one class down so class 0 comes last, then move the "
        "decoded ids back up by one"
    )
    module = func.split(".")[0] if "." in func else "tf"
    target = None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    paths = None
    if isinstance(target, ast.Tuple | ast.List) and target.elts:
        first = target.elts[0]
        paths = first.id if isinstance(first, ast.Name) else None
    rolled = f"{module}.roll({written_scores}, shift=-1, axis=-1)"
    parts: list[str] = []
    for argument in call.args:
        text = rolled if argument is scores else ast.get_source_segment(source, argument)
        parts.append(text or "")
    for keyword in call.keywords:
        if keyword is dropped:
            continue
        value = rolled if keyword.value is scores else ast.get_source_segment(source, keyword.value)
        parts.append(f"{keyword.arg}={value}" if keyword.arg else f"**{value}")
    target_text = ast.get_source_segment(source, target) if target is not None else None
    if (
        paths is None
        or not target_text
        or not all(parts)
        or any("\n" in part for part in (*parts, target_text, written_scores))
    ):
        return why, []
    decode = f"{target_text} = {func}({', '.join(parts)})"
    shift = (
        f"{paths} = [{module}.SparseTensor(p.indices, p.values + 1, p.dense_shape) "
        f"for p in {paths}]"
    )
    return why, [decode, shift]


def beam_search_notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a cell that ran ``ctc_beam_search_decoder`` in a session whose CTC
    blank is class 0."""
    if _BEAM not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in ast.walk(tree):
        if not isinstance(statement, ast.Assign):
            continue
        for node in ast.walk(statement.value):
            if isinstance(node, ast.Call) and (call_name(node) or "") == _BEAM:
                found = beam_search_blank(node, statement, source, namespace)
                if found is None:
                    continue
                why, fixes = found
                text = f"Line {node.lineno} of this cell: {why}."
                if fixes:
                    text += f" Write `{fixes[0]}`, then `{fixes[1]}`."
                return [reports.note(text, SECTION)]
    return []
