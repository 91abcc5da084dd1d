"""Links of a course module rewritten for its notebook, which lives on its own.

A learner copies a course notebook into a folder of their own, away from the module
files, so a link to ``module-04.md#reproducibility`` leads nowhere there, and JupyterLab
scrolls to a section by the id it gives the rendered heading, not by our ``<a id>``
anchors. In a notebook, a link to a section of the same module points at its heading's
JupyterLab id; a link to another module becomes plain text naming the module and the
section, which the learner can open from the course.
"""

from __future__ import annotations

import re

from jupyterlab_tfcoach.course import Course, Section

# A course link as the modules write it: ``[text](#id)``, ``[text](module-02.md#id)``,
# ``[text](module-02#id)`` or ``[text](module-02.md)``; the text may wrap onto a new line.
# The text holds no ``[``: an interval written before a link (`` `[0, size)` ... ([module
# 1](...)``) is not part of it.
COURSE_LINK = re.compile(
    r"\[(?P<text>[^\[\]]+)\]\((?P<target>module-[0-9]+(?:\.md)?(?:#[a-z0-9-]+)?|#[a-z0-9-]+)\)"
)
# Inline code and emphasis marks render as elements; only their text is in the heading.
_INLINE_MARKS = re.compile(r"[`*]")


def heading_anchor(title: str) -> str:
    """The id JupyterLab gives a Markdown heading: its rendered text with each space
    made a ``-``, nothing else changed (``createHeaderId`` in ``@jupyterlab/rendermime``)."""
    return _INLINE_MARKS.sub("", title).replace(" ", "-")


def _module_number(module_id: str) -> int:
    return int(module_id.rsplit("-", 1)[1])


def notebook_links(course: Course, module_id: str, markdown: str) -> str:
    """``markdown`` of module ``module_id`` with its course links made to work in the
    module's notebook (see the module docstring); other links are left as they are."""

    def rewrite(match: re.Match[str]) -> str:
        text = match["text"]
        # Text that already names the module ("module 1") is not followed by its name again.
        names_module = " ".join(text.split()).lower()
        landed = course.resolve(match["target"])
        if not isinstance(landed, Section):
            where = f"module {_module_number(landed.id)}"
            return text if names_module == where else f"{text} ({where})"
        if landed.module_id == module_id:
            return f"[{text}](#{heading_anchor(landed.title)})"
        where = f"module {_module_number(landed.module_id)}"
        if text == landed.title:
            return f"*{text}* ({where})"
        if names_module == where:
            return f"{text} (*{landed.title}*)"
        return f"{text} ({where}, *{landed.title}*)"

    return COURSE_LINK.sub(rewrite, markdown)
