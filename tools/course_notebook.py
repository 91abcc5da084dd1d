"""Write a course module's notebook from its Markdown: the module cell for cell.

    python tools/course_notebook.py module-01 [module-02 ...]

Every ```python block outside a ``<details>`` fold becomes a code cell (tagged
``raises-exception`` when its first line is ``# raises: SomeError``); the prose between
them becomes Markdown cells, one per heading, and solutions and review answers stay
folded in Markdown. Links to course sections are rewritten for a notebook that lives on
its own (``jupyterlab_tfcoach.course.notebook_links``): to the heading's JupyterLab anchor
within the module, to plain text naming module and section across modules. Each
exercise's task (a block of ``## Your turn``) is followed by a cell for the learner's
own version, a comment that runs as it is and shows nothing. Cell ids are
derived from the module id and the cell's position, so writing again an unchanged module
gives the same file. The notebook keeps its current name
(``notebooks/<module-id>-*.ipynb``); a module without one needs ``--name``.
``tests/course/test_course_moved_sections.py`` checks that every module is mirrored.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyterlab_tfcoach.course import NOTEBOOKS_DIR, Course  # noqa: E402
from jupyterlab_tfcoach.course.notebook_links import notebook_links  # noqa: E402

_FENCE = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)
_DETAILS = re.compile(r"<details><summary>.*?</details>\n", re.S)
_HEADING_START = re.compile(r"\n(?=<a id=|## |### )")
_YOUR_TURN = "\n## Your turn\n"
YOUR_VERSION = "Your version of the program:"
# A comment only: the cell runs as it is and shows nothing (``...`` would show ``Ellipsis``).
PLACEHOLDER = (
    "# Copy the task's code here, then change or complete it until it does what the task asks."
)


def _markdown_cells(text: str) -> list[str]:
    """Prose split before each anchor or heading; an anchor stays with its heading."""
    cells: list[str] = []
    for part in _HEADING_START.split(text):
        if cells and cells[-1].startswith("<a id=") and "\n" not in cells[-1].strip():
            cells[-1] += "\n" + part
        else:
            cells.append(part)
    return [cell.strip("\n") for cell in cells if cell.strip()]


def _exercises_span(body: str) -> tuple[int, int]:
    """Where ``## Your turn`` runs in ``body``, up to the next level-two heading."""
    start = body.find(_YOUR_TURN)
    if start < 0:
        return (0, 0)
    end = body.find("\n## ", start + 1)
    return (start, end if end > 0 else len(body))


def module_cells(body: str) -> list[tuple[str, str]]:
    """``(kind, source)`` for each cell of a module's body (its text after the title)."""
    folded = [(match.start(), match.end()) for match in _DETAILS.finditer(body)]
    exercises_start, exercises_end = _exercises_span(body)
    cells: list[tuple[str, str]] = []
    position = 0
    for match in _FENCE.finditer(body):
        if any(start <= match.start() < end for start, end in folded):
            continue
        cells += [("markdown", cell) for cell in _markdown_cells(body[position : match.start()])]
        cells.append(("code", match.group(1).rstrip("\n")))
        if exercises_start <= match.start() < exercises_end:  # a task: the learner's turn
            cells += [("markdown", YOUR_VERSION), ("code", PLACEHOLDER)]
        position = match.end()
    cells += [("markdown", cell) for cell in _markdown_cells(body[position:])]
    return cells


def module_notebook(course: Course, module_id: str) -> nbformat.NotebookNode:
    module = course.module(module_id)
    number = int(module_id.rsplit("-", 1)[1])
    body = module.markdown[module.markdown.index("\n", module.markdown.index("# ")) + 1 :]
    intro = (
        f"# Module {number}: {module.title}\n\n"
        f"This notebook is module {number} of the course, cell for cell: every example of "
        "every section, the fixes, the exercises (their solutions folded) and the review. "
        "Run the cells from top to bottom; each example is a complete program. The cells "
        "that start with `# raises: SomeError` are meant to fail: their `raises-exception` "
        "tag lets *Run All* carry on past them. Each exercise's task is followed by a cell "
        "for your own version; it holds only a comment until you paste the task into it. "
        "Keep the **TF Coach** "
        "panel open (command "
        "palette: *Open the TF Coach panel*) to see what it notices."
    )
    cells = [nbformat.v4.new_markdown_cell(intro)]
    for kind, source in module_cells(body):
        if kind == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(notebook_links(course, module_id, source)))
            continue
        cell = nbformat.v4.new_code_cell(source)
        if source.startswith("# raises: "):
            cell.metadata["tags"] = ["raises-exception"]
        cells.append(cell)
    for index, cell in enumerate(cells):
        cell.id = hashlib.sha1(f"{module_id}:{index}".encode()).hexdigest()[:8]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    notebook.metadata = {
        "kernelspec": {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module_ids", nargs="+")
    parser.add_argument("--name", help="file name for a module that has no notebook yet")
    args = parser.parse_args(argv)
    course = Course.load()
    for module_id in args.module_ids:
        existing = course.module(module_id).notebook
        name = existing.name if existing else args.name
        if not name or not name.startswith(f"{module_id}-") or not name.endswith(".ipynb"):
            parser.error(f"{module_id} needs --name {module_id}-<short-name>.ipynb")
        nbformat.write(module_notebook(course, module_id), NOTEBOOKS_DIR / name)
        print(NOTEBOOKS_DIR / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
