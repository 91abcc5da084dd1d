"""The kernel monitor: an IPython extension that reports, after every cell, what
TensorFlow traced and why, variables that left training, and explained errors.

Importing this package is cheap and never imports TensorFlow.
"""

from __future__ import annotations

from jupyterlab_tfcoach.monitor.report import SCHEMA, last_report

__all__ = ["SCHEMA", "last_report"]
