"""Links of a course module rewritten for its notebook, which lives on its own.

A learner copies a course notebook into a folder of their own, away from the module
files, so a link to ``module-04.md#reproducibility`` leads nowhere there, and JupyterLab
scrolls to a section by the id it gives the rendered heading, not by our ``<a id>``
anchors. In a notebook, a link to a section of the same module points at its heading's
JupyterLab id; a link to another module becomes plain text naming the module and the
section, which the learner can open from the course. Each is named once: a link's text
is compared with the module's name and the section's title as words, whatever the line
breaks inside it (Markdown wraps a long link's text like any other), so text that already
is the title, or a run of its words, is not followed by the title again; and a link that
is a whole parenthetical gets its module after a comma, not in parentheses of its own
(and the section's title in place of text that is part of it).
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


def _words(text: str) -> str:
    """``text`` as the words a reader sees: inline marks dropped, every run of spaces and
    line breaks one space, lower case."""
    return " ".join(_INLINE_MARKS.sub("", text).split()).lower()


def _part_of(words: str, title: str) -> bool:
    """Whether ``words`` are a run of whole words of ``title``: "the batch axis" of "One
    example or a batch: the batch axis and None"."""
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", _words(title)) is not None


def notebook_links(course: Course, module_id: str, markdown: str) -> str:
    """``markdown`` of module ``module_id`` with its course links made to work in the
    module's notebook (see the module docstring); other links are left as they are."""

    def rewrite(match: re.Match[str]) -> str:
        text = match["text"]
        words = _words(text)
        # A link that is all of a parenthetical, "([module 6](module-06.md#x))", reads
        # "(module 6, *Title*)", not "(module 6 (*Title*))".
        whole_aside = (
            markdown[match.start() - 1 : match.start()] == "("
            and markdown[match.end() : match.end() + 1] == ")"
        )

        def named(name: str, where: str) -> str:
            return f"{name}, {where}" if whole_aside else f"{name} ({where})"

        landed = course.resolve(match["target"])
        if not isinstance(landed, Section):
            where = f"module {_module_number(landed.id)}"
            return text if words == where else named(text, where)
        if landed.module_id == module_id:
            return f"[{text}](#{heading_anchor(landed.title)})"
        where = f"module {_module_number(landed.module_id)}"
        if words == _words(landed.title):  # the title itself, perhaps wrapped over lines
            return named(f"*{landed.title}*", where)
        if words == where:  # text that names the module ("module 1") is not named again
            return named(text, f"*{landed.title}*")
        if _part_of(words, landed.title):  # part of the title: not said twice
            if whole_aside:  # the aside names the section: "(*Title*, module 2)"
                return named(f"*{landed.title}*", where)
            if len(words.split()) > 1:  # "the batch axis (module 1)"
                return named(text, where)
            # One word of the sentence ("tracing" of "What tracing is") says too little
            # to stand for the section: the title follows it.
        if whole_aside:  # "(unrolled loops: module 2, *Title*)"
            return f"{text}: {where}, *{landed.title}*"
        return f"{text} ({where}, *{landed.title}*)"

    return COURSE_LINK.sub(rewrite, markdown)
