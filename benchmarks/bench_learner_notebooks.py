"""How far the kernel monitor reaches on learner notebooks it was not built for.

usage: python benchmarks/bench_learner_notebooks.py <folder> [--out results.json] [--with-static]

Each notebook in ``<folder>`` runs top to bottom in a real kernel (nbclient) after
``%load_ext jupyterlab_tfcoach``, which shows each cell's report inline; the report travels in
the cell's outputs under ``application/vnd.tfcoach.report+json``. The figures printed compare
them with the folder's ``answers.json`` (see ``benchmarks/learner_notebooks/README.md``).
Nothing is written into the folder: each notebook runs in a temporary working folder.

With ``--with-static``, each cell's record also carries the static findings JupyterLab shows
inline in that cell by default (the notebook's code cells analysed together, as the panel's
inline findings are), as entries of kind ``static``: what a learner in JupyterLab sees on the
cell, next to the kernel's report. The figures are then printed twice, with and without them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPORT_MIME = "application/vnd.tfcoach.report+json"


def report_entries(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Everything a report says to the learner, as (kind, text, course) records."""
    found: list[dict[str, Any]] = []
    for trace in report.get("traces") or []:
        for reason in trace.get("reasons") or []:
            # A first trace, and the one extra trace of a last partial batch, are normal.
            if reason.get("counts_as", reason.get("kind")) != "first_trace":
                found.append(
                    {"kind": "trace", "text": reason.get("text", ""), "course": trace.get("course")}
                )
    for change in report.get("variables") or []:
        found.append(
            {"kind": "variable", "text": change.get("text", ""), "course": change.get("course")}
        )
    error = report.get("error")
    if isinstance(error, dict):
        found.append(
            {"kind": "error", "text": error.get("explanation", ""), "course": error.get("course")}
        )
    for note in report.get("notes") or []:
        text = note.get("text", "") if isinstance(note, dict) else str(note)
        course = note.get("course") if isinstance(note, dict) else None
        found.append({"kind": "note", "text": text, "course": course})
    return found


def run_notebook(path: Path) -> list[dict[str, Any]]:
    notebook = nbformat.read(path, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    notebook.cells = [nbformat.v4.new_code_cell("%load_ext jupyterlab_tfcoach"), *code_cells]
    # Each notebook runs in a folder of its own that goes away after it: a learner's
    # notebook may save models or logs where it runs, and the set's folder stays as it is.
    with tempfile.TemporaryDirectory(prefix="tfcoach-learner-") as workdir:
        client = NotebookClient(
            notebook,
            timeout=180,
            allow_errors=True,
            kernel_name="python3",
            resources={"metadata": {"path": workdir}},
        )
        started = time.perf_counter()
        client.execute()
    print(f"{path.name}: ran in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    records = []
    for index, cell in enumerate(notebook.cells[1:]):
        error = None
        entries: list[dict[str, Any]] = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                error = {"ename": output.get("ename"), "evalue": str(output.get("evalue"))[:300]}
            report = (output.get("data") or {}).get(REPORT_MIME)
            if isinstance(report, dict):
                entries.extend(report_entries(report))
        records.append(
            {
                "notebook": path.name,
                "cell": index,
                "source": cell.source,
                "error": error,
                "entries": entries,
            }
        )
    return records


def static_entries(sources: list[str]) -> dict[int, list[dict[str, Any]]]:
    """The inline findings of a notebook's code cells, by cell index (0-based among them)."""
    from jupyterlab_tfcoach.analysis import check_cells

    by_cell: dict[int, list[dict[str, Any]]] = {}
    for finding in check_cells(sources).findings:
        if finding.cell is None:
            continue
        text = f"{finding.code} {finding.message}"
        if finding.fix is not None:
            text += f" Fix: {finding.fix.description}."
        by_cell.setdefault(finding.cell, []).append(
            {"kind": "static", "text": text, "course": finding.section_id}
        )
    return by_cell


def without_static(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**record, "entries": [e for e in record["entries"] if e["kind"] != "static"]}
        for record in records
    ]


def figures(records: list[dict[str, Any]], answers: list[dict[str, Any]]) -> str:
    expected = {(answer["notebook"], answer["cell"]): answer for answer in answers}
    mistakes = reached = named = correct = silent = 0
    for record in records:
        answer = expected.get((record["notebook"], record["cell"]))
        if answer is None:
            continue
        said = " ".join(entry["text"] for entry in record["entries"])
        if answer["kind"] == "mistake":
            mistakes += 1
            if record["entries"]:
                reached += 1
                identifiers = answer.get("identifiers") or []
                if all(identifier in said for identifier in identifiers):
                    named += 1
        else:
            correct += 1
            silent += not record["entries"]
    return (
        f"mistakes with an entry: {reached}/{mistakes}\n"
        f"mistakes whose entries name every expected identifier: {named}/{mistakes}\n"
        f"correct cells left silent: {silent}/{correct}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, help="write each cell's entries here as JSON")
    parser.add_argument(
        "--with-static",
        action="store_true",
        help="add the static findings JupyterLab shows inline in each cell",
    )
    args = parser.parse_args()
    records = [
        record for path in sorted(args.folder.glob("*.ipynb")) for record in run_notebook(path)
    ]
    if args.with_static:
        by_notebook: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            by_notebook.setdefault(record["notebook"], []).append(record)
        for cells in by_notebook.values():
            found = static_entries([record["source"] for record in cells])
            for record in cells:
                record["entries"].extend(found.get(record["cell"], []))
    if args.out is not None:
        args.out.write_text(json.dumps(records, indent=1), encoding="utf-8")
    answers = json.loads((args.folder / "answers.json").read_text(encoding="utf-8"))
    if args.with_static:
        print("kernel reports only:")
        print(figures(without_static(records), answers))
        print("kernel reports and inline static findings:")
    print(figures(records, answers))


if __name__ == "__main__":
    main()
