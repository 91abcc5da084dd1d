"""The numerics and reproducibility module (issue #28): what a blind review asked of it.

What its examples print is checked elsewhere (``test_course_examples.py`` runs every block,
``test_course_notebooks.py`` the notebook).
"""

from __future__ import annotations

import re

from jupyterlab_tfcoach.course import Module, get_course

TITLE = "Numerics and reproducibility"
_FOLDED_ANSWER = re.compile(
    r"<details><summary>(?P<question>[^<\n]+\?)</summary>\n\n(?P<answer>.+?)\n\n</details>", re.S
)


def numerics_module() -> Module:
    [module] = [module for module in get_course().modules if module.title == TITLE]
    return module


def test_interleave_is_taught_where_the_module_first_uses_it() -> None:
    """Review 8 (#28): the module used ``interleave``, which no module teaches. Two lines
    say what it does in the first sentence that names it."""
    text = numerics_module().markdown
    first_use = text.index("interleave")
    taught = text.index("`interleave(fn, cycle_length=n)` calls `fn` on each element")
    assert taught - first_use < 400  # in the same bullet
    review = text.index("\n## Review\n")
    assert taught < review < text.index("interleave(..., num_parallel_calls")


def test_one_review_question_asks_about_tf32() -> None:
    """Review 8 (#28): two review questions overlapped on TF32; one kept it, the other asks
    about an out-of-range id, which a CPU refuses and a GPU reads as zeros."""
    text = numerics_module().markdown
    review = text[text.index("\n## Review\n") :]
    answers = [(m["question"], m["answer"]) for m in _FOLDED_ANSWER.finditer(review)]
    assert len([q for q, a in answers if "TF32" in q + a]) == 1
    [embedding] = [a for q, a in answers if "Embedding" in q]
    assert "GPU only" in embedding and "zeros" in embedding
