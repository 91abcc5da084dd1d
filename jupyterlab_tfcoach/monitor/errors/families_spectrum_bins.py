"""A spectrogram's frequency axis met by a matrix made for another number of bins (issue
#25): ``tf.matmul(power, mel_matrix)`` of ``(..., 257)`` by ``(256, 64)``, where the mel
matrix was built with ``num_spectrogram_bins=512 // 2`` (or the FFT length itself).

A real FFT of length N gives N // 2 + 1 frequency bins (from 0 to the Nyquist frequency,
both included), so the spectrogram of an STFT with ``fft_length`` 512 has 257 bins, not
256. The shape message says only 257 vs 256. The reading recognises the pair of sizes (one
is 2**j + 1, the other 2**j or 2**(j + 1), j >= 4) when the cells show spectral code (an
STFT or real FFT call, a mel matrix, an ``fft_length`` or ``num_spectrogram_bins``
argument), names the FFT length and its bins, and writes the corrected
``num_spectrogram_bins`` argument in the learner's own expression (``512 // 2`` becomes
``512 // 2 + 1``, ``fft_size`` becomes ``fft_size // 2 + 1``). Other pairs of sizes are
left to the matmul and broadcasting families.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import SourceCell, cell_frame, error_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    shape_list,
)
from jupyterlab_tfcoach.monitor.errors.written_numbers import whole_number

_MATMUL_EAGER = re.compile(
    r"Matrix size-incompatible: In\[0\]: \[(?P<a>[\d,]*)\], In\[1\]: \[(?P<b>[\d,]*)\]"
)
_GRAPH_MATMUL = re.compile(
    r"Dimensions must be equal, but are (?P<d1>\d+) and (?P<d2>\d+) for "
    r"'\{\{node [^}]*\}\} = (?P<op>\w*MatMul\w*)\["
)
# Calls and arguments that show the cells compute spectra.
_SPECTRAL_CALLS = frozenset(
    {"stft", "rfft", "rfft2d", "linear_to_mel_weight_matrix", "STFTSpectrogram", "MelSpectrogram"}
)
_SPECTRAL_KEYWORDS = frozenset({"fft_length", "num_spectrogram_bins"})
_BINS_KEYWORD = "num_spectrogram_bins"
_SMALLEST_POWER = 4  # 17 bins vs 16: smaller pairs are too common by chance
_MAX_NODES = 50_000


def _power_of_two(size: int) -> int | None:
    """j for size == 2**j (j >= the smallest power taken), else None."""
    if size < 2**_SMALLEST_POWER or size & (size - 1):
        return None
    return size.bit_length() - 1


def _bins_and_other(first: int, second: int) -> tuple[int, int, int] | None:
    """(the bins' size, the other size, the FFT length) when one size is N // 2 + 1 of a
    power-of-two N and the other N // 2 (the + 1 forgotten) or N (the length itself)."""
    for bins, other in ((first, second), (second, first)):
        half = _power_of_two(bins - 1)
        if half is not None and other in (bins - 1, 2 * (bins - 1)):
            return bins, other, 2 * (bins - 1)
    return None


def _sizes(error: Recognised) -> tuple[int, int] | None:
    if error.matched(_MATMUL_EAGER):
        a, b = shape_list(error.group("a")), shape_list(error.group("b"))
        if a is None or b is None or len(a) < 2 or len(b) < 2:
            return None
        first, second = a[-1], b[-2]
        if first is None or second is None:
            return None
        return first, second
    return int(error.group("d1")), int(error.group("d2"))


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _corrected(written: str, node: ast.expr, value: int, length: int) -> str:
    """The learner's expression for the bins, corrected: ``512 // 2`` -> ``512 // 2 + 1``,
    ``fft_size`` (the length) -> ``fft_size // 2 + 1``, a bare 256 -> ``512 // 2 + 1``."""
    if value == length:
        simple = isinstance(node, (ast.Name, ast.Constant, ast.Attribute))
        return f"{written} // 2 + 1" if simple else f"({written}) // 2 + 1"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return f"{written} + 1"
    return f"{length} // 2 + 1"


def _statement_of(tree: ast.Module, inner: ast.AST) -> ast.stmt | None:
    """The top-level statement of the cell holding ``inner``."""
    for statement in tree.body:
        if any(node is inner for node in ast.walk(statement)):
            return statement
    return None


def _read_bins(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    sizes = _sizes(error)
    if sizes is None:
        return None
    found = _bins_and_other(*sizes)
    if found is None:
        return None
    bins, other, length = found
    spectral = False
    # (label, written, node, value, the statement holding it, its cell)
    argument: tuple[str, str, ast.expr, int, ast.stmt, SourceCell] | None = None
    namespace = context.namespace
    for count, cell in enumerate(error_cells(context)):
        tree = cell.tree()
        if tree is None or count > 50:
            continue
        for seen, node in enumerate(ast.walk(tree)):
            if seen > _MAX_NODES:
                break
            if isinstance(node, ast.Call) and _called(node) in _SPECTRAL_CALLS:
                spectral = True
            if not isinstance(node, ast.keyword) or node.arg not in _SPECTRAL_KEYWORDS:
                continue
            spectral = True
            if node.arg == _BINS_KEYWORD and argument is None:
                value = whole_number(node.value, namespace)
                written = cell.segment(node.value)
                holder = _statement_of(tree, node)
                if value == other and written and "\n" not in written and holder is not None:
                    argument = (cell.label, written, node.value, value, holder, cell)
    if not spectral:
        return None
    names = [o for o in line.operands if o.shape and bins in o.shape[-2:]]
    spectrum = f"{code(names[0].source)}'s {bins}" if len(names) == 1 else f"the {bins}"
    rule = (
        f"A real FFT of length {length} gives {length} // 2 + 1 = {bins} frequency bins "
        f"(from 0 to the Nyquist frequency, both included): {spectrum} is that axis, "
        f"and the other operand was made for {other}"
    )
    if argument is None:
        return Finding(
            rule + f": make it for {bins} bins (for a mel matrix, "
            f"{code(f'{_BINS_KEYWORD}={length} // 2 + 1')}).",
            None,
        )
    label, written, node, value, statement, cell = argument
    fixed = f"{_BINS_KEYWORD}={_corrected(written, node, value, length)}"
    rule += f" ({code(f'{_BINS_KEYWORD}={written}')} in {label})"
    if len(names) == 1:
        rule += f"; {code(f'{_BINS_KEYWORD}={names[0].source}.shape[-1]')} reads it too"
    whole = _one_line(rewrite(cell_frame(cell), statement, node, fixed.split("=", 1)[1]))
    if whole is not None:
        return Finding(rule + ".", f"in {label}, {code(whole)}")
    return Finding(rule + ".", f"in {label}, write {code(fixed)}")


def _one_line(statement: str | None) -> str | None:
    """A statement written over several lines, on one (a call's arguments split over
    lines joined: ``f(a=1, b=2)``), or None when it holds a comment or a string or is too
    long."""
    if statement is None or "#" in statement or "'" in statement or '"' in statement:
        return None
    joined = " ".join(part.strip() for part in statement.splitlines())
    joined = re.sub(r"([(\[{]) ", r"\1", joined)
    joined = re.sub(r",? ([)\]}])", r"\1", joined)
    return joined if len(joined) <= 240 else None


SPECTRUM_BINS = ErrorFamily(
    "a spectrogram's bins met by a matrix made for another number",
    messages=(Message(_MATMUL_EAGER), Message(_GRAPH_MATMUL)),
    read=_read_bins,
    section="shape-dtype-device",
)
