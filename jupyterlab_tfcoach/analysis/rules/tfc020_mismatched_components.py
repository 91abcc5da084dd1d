"""TFC020: components read by index used twice, or paired with the wrong partner."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity

CODE = "TFC020"
NAME = "mismatched-components"
SEVERITY = Severity.WARNING
SECTION = "indexing-slicing"

DOCS = """
## What it does
Flags two slips in code that takes an array apart by its last index (`o[..., 2]`,
`b[:, 3]`):
- **a component read twice, another never**: two assignments next to each other written
  the same way except for their names (`h = ah * tf.exp(o[..., 2])` and
  `w = aw * tf.exp(o[..., 2])`) that read the same component `c`, in a function or cell
  whose other lines read `o`'s components one per line (`0`, `1`, ...) and never read
  component `c + 1`. The fix reads `c + 1` in the second line.
- **a position added to the wrong size**: components unpacked in order
  (`x, y, w, h = b[:, 0], b[:, 1], b[:, 2], b[:, 3]`, the first half positions, the second
  half sizes) put back in a list as the positions followed by each position plus a size
  (`[y, x, y + w, x + h]`), where the size added to a position is not the one unpacked at
  the same place in the second half (`x` goes with `w`, `y` with `h`). The fix adds the
  matching size (`[y, x, y + h, x + w]`).

## Why is this bad?
The code runs and the shapes are right; only the numbers are wrong. A decoder that reads
the height's component for the width makes every box square; a conversion that adds the
width to `y` swaps the extent of every box that is not square. Nothing raises, and the loss
or the score is merely worse than it should be.

## Example
```python
cy = acy + o[..., 0] * ah
cx = acx + o[..., 1] * aw
h = ah * tf.exp(o[..., 2])
w = aw * tf.exp(o[..., 2])
```

## Use instead
```python
cy = acy + o[..., 0] * ah
cx = acx + o[..., 1] * aw
h = ah * tf.exp(o[..., 2])
w = aw * tf.exp(o[..., 3])
```

## Course module
Module 1, *Reading parts of a tensor: indexing and slicing* (`indexing-slicing`).
"""

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def check(ctx: RuleContext) -> Iterator[Finding]:
    blocks: list[list[ast.stmt]] = [ctx.model.tree.body]
    blocks.extend(
        node.body for node in ast.walk(ctx.model.tree) if isinstance(node, _FUNCTION_NODES)
    )
    for block in blocks:
        yield from _repeated(ctx, block)
        yield from _mispaired(ctx, block)


# -- a component read twice ------------------------------------------------------------


def _component(node: ast.AST) -> tuple[str, int] | None:
    """``("o", 2)`` for ``o[..., 2]`` or ``o[:, 2]``: a name indexed on its last axis."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return None
    index = node.slice
    if not isinstance(index, ast.Tuple) or len(index.elts) != 2:
        return None
    lead, last = index.elts
    leading = (isinstance(lead, ast.Constant) and lead.value is Ellipsis) or (
        isinstance(lead, ast.Slice) and lead.lower is None and lead.upper is None
    )
    if not (leading and isinstance(last, ast.Constant) and type(last.value) is int):
        return None
    return node.value.id, last.value


def _components(node: ast.AST) -> list[tuple[ast.Subscript, tuple[str, int]]]:
    found = []
    for child in ast.walk(node):
        component = _component(child)
        if component is not None:
            found.append((child, component))  # type: ignore[arg-type]
    return found


def _shape(node: ast.AST) -> str:
    """The expression's structure with every name and component index left out."""

    class _Blank(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.AST:
            return ast.Name(id="_", ctx=ast.Load())

    copy = _Blank().visit(ast.parse(ast.unparse(node), mode="eval"))
    return ast.dump(copy)


def _names(node: ast.AST) -> list[str]:
    return [child.id for child in ast.walk(node) if isinstance(child, ast.Name)]


def _repeated(ctx: RuleContext, block: list[ast.stmt]) -> Iterator[Finding]:
    single = [
        statement
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        else None
        for statement in block
    ]
    # Per array name: the component indices the block's assignments read, one per line.
    per_line: dict[str, list[int]] = {}
    for statement in block:
        for _, (array, index) in _components(statement):
            per_line.setdefault(array, []).append(index)
    for first, second in itertools.pairwise(single):
        if first is None or second is None:
            continue
        first_parts = _components(first.value)
        second_parts = _components(second.value)
        if len(first_parts) != 1 or len(second_parts) != 1:
            continue
        (_, (array, index)), (node, again) = first_parts[0], second_parts[0]
        if again != (array, index) or index < 1:
            continue
        read = per_line.get(array, [])
        # The other lines take one component each, counting up to this one; the next
        # component is never read.
        if index + 1 in read or any(earlier not in read for earlier in range(index)):
            continue
        if read.count(index) != 2:
            continue
        if _shape(first.value) != _shape(second.value):
            continue
        first_names = [name for name in _names(first.value) if name != array]
        second_names = [name for name in _names(second.value) if name != array]
        if first_names == second_names:
            continue
        target = second.targets[0].id  # type: ignore[attr-defined]
        other = first.targets[0].id  # type: ignore[attr-defined]
        last = node.slice.elts[1]  # type: ignore[attr-defined]
        fix = Fix(
            f"Read component {index + 1} for `{target}`",
            (ctx.replace(last, str(index + 1)),),
        )
        yield ctx.finding(
            CODE,
            node,
            f"`{target}` reads `{ctx.text(node)}`, the component `{other}` reads on the line "
            f"above, and no line reads component {index + 1} of `{array}`: one component is "
            f"used twice and the next never. If each line takes its own component, "
            f"`{target}` reads `{array}[..., {index + 1}]`",
            fix=fix,
        )


# -- a position added to the wrong size ------------------------------------------------


def _unpacked(block: list[ast.stmt]) -> Iterator[list[str]]:
    """Names bound in one statement to components 0..n-1 of one array, in that order."""
    for statement in block:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
            and isinstance(statement.value, ast.Tuple)
        ):
            continue
        targets, values = statement.targets[0].elts, statement.value.elts
        if len(targets) != len(values) or len(targets) < 4 or len(targets) % 2:
            continue
        parts = [_component(value) for value in values]
        if not all(isinstance(target, ast.Name) for target in targets):
            continue
        if any(part is None for part in parts):
            continue
        arrays = {part[0] for part in parts if part is not None}
        indices = [part[1] for part in parts if part is not None]
        if len(arrays) == 1 and indices == list(range(len(targets))):
            yield [target.id for target in targets]  # type: ignore[attr-defined]


def _sum_of_names(node: ast.expr) -> tuple[ast.Name, ast.Name] | None:
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.left, ast.Name)
        and isinstance(node.right, ast.Name)
    ):
        return node.left, node.right
    return None


def _mispaired(ctx: RuleContext, block: list[ast.stmt]) -> Iterator[Finding]:
    orders = list(_unpacked(block))
    if not orders:
        return
    for statement in block:
        for node in ast.walk(statement):
            if isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load):
                for names in orders:
                    yield from _check_layout(ctx, node, names)


def _check_layout(
    ctx: RuleContext, display: ast.List | ast.Tuple, names: list[str]
) -> Iterator[Finding]:
    half = len(names) // 2
    elements = display.elts
    if len(elements) != len(names):
        return
    positions, sums = elements[:half], elements[half:]
    if not all(isinstance(element, ast.Name) for element in positions):
        return
    heads = [element.id for element in positions]  # type: ignore[attr-defined]
    if sorted(heads) != sorted(names[:half]):
        return
    pairs = [_sum_of_names(element) for element in sums]
    if any(pair is None for pair in pairs):
        return
    sizes = names[half:]
    wrong = []
    for head, pair in zip(heads, pairs, strict=True):
        assert pair is not None
        left, right = pair
        if left.id != head or right.id not in sizes:
            return
        partner = sizes[names.index(head)]
        if right.id != partner:
            wrong.append((head, right, partner))
    if len(wrong) < 2 or len({right.id for _, right, _ in wrong}) != len(wrong):
        return
    fix = Fix(
        "Add to each position the size unpacked at its place",
        tuple(ctx.replace(right, partner) for _, right, partner in wrong),
    )
    described = ", ".join(f"`{head} + {right.id}`" for head, right, _ in wrong)
    matching = ", ".join(f"`{head} + {partner}`" for head, _, partner in wrong)
    order = ", ".join(names)
    yield ctx.finding(
        CODE,
        display,
        f"{described} add to each position a size unpacked at another place: `{order}` pairs "
        f"each of the first {half} with the one {half} places later, so the list needs "
        f"{matching}",
        fix=fix,
    )
