"""Which local names refer to TensorFlow or Keras, under whatever alias the file chose.

Every TensorFlow name is reported in one canonical spelling rooted at ``tf``
(``tf.function``, ``tf.Variable``, ``tf.keras.layers``), so rules compare
strings and never care how the file imported things.

Keras 3 (``import keras``, ``from keras import layers, ops``) is the package ``tf.keras``
is with TensorFlow 2.16 and later (``tf.keras.Variable is keras.Variable``, measured with
TF 2.21 and Keras 3): its names are spelled ``tf.keras.<name>``, so ``keras.ops.mean``,
``tf.keras.ops.mean`` and ``ops.mean`` after ``from keras import ops`` are one name, and
a file that imports only Keras is analysed like one that imports TensorFlow.
"""

from __future__ import annotations

import ast

TF_ROOT = "tf"

# Module paths that expose the TF2 API under another name.
_CANONICAL_MODULES = {
    "tensorflow": TF_ROOT,
    "tensorflow.compat.v2": TF_ROOT,
    "keras": TF_ROOT + ".keras",
}
# Cheap text tests before any parsing: a source naming none of these imports neither.
IMPORT_MARKERS = ("tensorflow", "keras")


def canonical_module(dotted: str) -> str | None:
    """``tensorflow.keras`` / ``keras`` -> ``tf.keras``; other paths -> None."""
    best = ""
    for prefix in _CANONICAL_MODULES:
        if (dotted == prefix or dotted.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    if not best:
        return None
    return _CANONICAL_MODULES[best] + dotted[len(best) :]


class TFImports:
    """Local name -> canonical TensorFlow name, fed with every import of a file.

    ``imports_tensorflow``: the file imports TensorFlow or Keras (either is enough for
    the rules to apply)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.imports_tensorflow = False

    def add(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                canonical = canonical_module(alias.name)
                if canonical is None:
                    continue
                self.imports_tensorflow = True
                if alias.asname:
                    self.names[alias.asname] = canonical
                else:
                    # ``import tensorflow.keras`` binds ``tensorflow`` itself.
                    head = alias.name.split(".", 1)[0]
                    self.names[head] = canonical_module(head) or TF_ROOT
            return
        if node.level or not node.module:
            return
        base = canonical_module(node.module)
        if base is None:
            return
        self.imports_tensorflow = True
        for alias in node.names:
            if alias.name == "*":
                continue  # star imports: nothing can be resolved with certainty
            self.names[alias.asname or alias.name] = f"{base}.{alias.name}"

    def resolve(self, node: ast.AST) -> str | None:
        """The canonical TensorFlow name an expression denotes, or None."""
        if type(node) is ast.Name:
            return self.names.get(node.id)  # type: ignore[attr-defined]
        attrs: list[str] = []
        while type(node) is ast.Attribute:
            attrs.append(node.attr)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        if type(node) is not ast.Name:
            return None
        root = self.names.get(node.id)
        if root is None:
            return None
        if not attrs:
            return root
        return root + "." + ".".join(reversed(attrs))

    def reference(self, canonical: str) -> str | None:
        """Source text naming ``canonical`` with this file's imports (``t.print``), or None."""
        best: str | None = None
        for local, bound in self.names.items():
            if canonical == bound:
                candidate = local
            elif canonical.startswith(bound + "."):
                candidate = local + canonical[len(bound) :]
            else:
                continue
            if best is None or (len(candidate), candidate) < (len(best), best):
                best = candidate
        return best
