"""The rule registry: one module per rule, in code order."""

from __future__ import annotations

from jupyterlab_tfcoach.analysis.rules import (
    tfc001_variable_rebound_to_tensor,
    tfc002_print_in_tf_function,
    tfc003_python_side_effect_in_tf_function,
    tfc004_python_loop_unrolled,
    tfc005_retrace_prone_call,
    tfc006_tape_reused,
    tfc007_persistent_tape_not_released,
    tfc008_unwatched_tensor_gradient,
    tfc009_mixed_dtype_arithmetic,
    tfc010_variable_created_in_tf_function,
    tfc011_numpy_in_tf_function,
    tfc012_fixed_batch_in_signature,
)
from jupyterlab_tfcoach.analysis.rules.base import DOC_HEADINGS, Rule

RULES: tuple[Rule, ...] = tuple(
    Rule.from_module(module)
    for module in (
        tfc001_variable_rebound_to_tensor,
        tfc002_print_in_tf_function,
        tfc003_python_side_effect_in_tf_function,
        tfc004_python_loop_unrolled,
        tfc005_retrace_prone_call,
        tfc006_tape_reused,
        tfc007_persistent_tape_not_released,
        tfc008_unwatched_tensor_gradient,
        tfc009_mixed_dtype_arithmetic,
        tfc010_variable_created_in_tf_function,
        tfc011_numpy_in_tf_function,
        tfc012_fixed_batch_in_signature,
    )
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def rule_by_code(code: str) -> Rule:
    """The rule with this code (case-insensitive) or its kebab-case name; KeyError otherwise."""
    wanted = code.strip()
    rule = RULES_BY_CODE.get(wanted.upper())
    if rule is not None:
        return rule
    for candidate in RULES:
        if candidate.name == wanted.lower():
            return candidate
    raise KeyError(code)


__all__ = ["DOC_HEADINGS", "RULES", "RULES_BY_CODE", "Rule", "rule_by_code"]
