"""The rule registry: one module per rule, in code order."""

from __future__ import annotations

import importlib
import pkgutil

from jupyterlab_tfcoach.analysis.rules.base import DOC_HEADINGS, Rule

# Every ``tfcNNN_<name>.py`` module beside this file is a rule: adding a rule is adding
# its module. Sorted names give code order.
_RULE_MODULE_NAMES = sorted(
    info.name for info in pkgutil.iter_modules(__path__) if info.name.startswith("tfc")
)

RULES: tuple[Rule, ...] = tuple(
    Rule.from_module(importlib.import_module(f"{__name__}.{name}")) for name in _RULE_MODULE_NAMES
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
