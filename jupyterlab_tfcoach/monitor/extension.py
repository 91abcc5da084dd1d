"""The IPython extension: hooks, the per-cell report and the ``%tfcoach`` magic.

Rules every hook here follows: catch everything (a callback that raises makes
IPython print "Error in callback" into the user's cell), print nothing, hold
no strong reference to user objects, and never import TensorFlow: until the
user imports it, a cell costs one ``sys.modules`` lookup and one small message.
"""

from __future__ import annotations

import time
from typing import Any

from jupyterlab_tfcoach.monitor import errors
from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.gradients import GradientWatcher
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.tftypes import TfTypes, tensorflow_module
from jupyterlab_tfcoach.monitor.tracing import TraceRegistry
from jupyterlab_tfcoach.monitor.variables import VariableWatcher

MAGIC_NAME = "tfcoach"


class Monitor:
    """Everything the extension keeps for one shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.locator = CellLocator(shell)
        self.types: TfTypes | None = None
        self.traces: TraceRegistry | None = None
        self.variables: VariableWatcher | None = None
        self.gradients: GradientWatcher | None = None
        self._setup_notes: list[str] = []

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)
        self._attach_tensorflow(imported_during_cell=False)

    def stop(self) -> None:
        for event, callback in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                self.shell.events.unregister(event, callback)
            except Exception:
                pass
        if self.traces is not None:
            self.traces.uninstall()
        if self.gradients is not None:
            self.gradients.uninstall()

    def _attach_tensorflow(self, imported_during_cell: bool) -> None:
        """Hook TensorFlow once the user has imported it (never import it here)."""
        if self.traces is not None or tensorflow_module() is None:
            return
        self.types = TfTypes.resolve()
        self.traces = TraceRegistry(self.locator)
        self.variables = VariableWatcher(self.types)
        self.gradients = GradientWatcher(self.locator, self.variables.classifier)
        self._setup_notes.extend(self.traces.install(report_existing_traces=imported_during_cell))
        self._setup_notes.extend(self.gradients.install())
        self.traces.begin_cell(self.locator.cell_token())
        if not imported_during_cell:
            # The namespace as it is now is the baseline for the next cell.
            self.variables.scan(self._namespace(), self._hidden())

    def _refresh_types(self) -> None:
        if self.types is None or self.types.complete or self.variables is None:
            return
        types = TfTypes.resolve()
        if types.missing == self.types.missing:
            # Nothing new was found: keep the classifier's cache and the namespace
            # baseline instead of classifying every name again on every cell.
            return
        self.types = types
        self.variables.refresh_types(self.types)
        if self.gradients is not None:
            self.gradients.classifier = self.variables.classifier

    def _namespace(self) -> dict[str, Any]:
        namespace = getattr(self.shell, "user_ns", None)
        return namespace if isinstance(namespace, dict) else {}

    def _hidden(self) -> dict[str, Any]:
        hidden = getattr(self.shell, "user_ns_hidden", None)
        return hidden if isinstance(hidden, dict) else {}

    # ----------------------------------------------------------------- hooks
    def pre_run_cell(self, info: Any = None) -> None:
        try:
            self.locator.begin_cell()
            self._attach_tensorflow(imported_during_cell=False)
            if self.traces is not None:
                self.traces.begin_cell(self.locator.cell_token())
            if self.gradients is not None:
                self.gradients.take_notes()
        except BaseException:
            pass

    def post_run_cell(self, result: Any = None) -> None:
        try:
            report = self.build_report(result)
        except BaseException:
            return
        try:
            reports.keep(report)
            reports.publish(self.shell, report)
        except BaseException:
            pass

    def build_report(self, result: Any) -> dict[str, Any]:
        started = time.perf_counter()
        info = getattr(result, "info", None)
        report = reports.new_report(self._execution_count(result), getattr(info, "cell_id", None))
        notes: list[str] = report["notes"]
        try:
            self._attach_tensorflow(imported_during_cell=True)
            self._refresh_types()
            if self._setup_notes:
                notes.extend(self._setup_notes)
                self._setup_notes = []
            if self.traces is not None:
                report["traces"], trace_notes = self.traces.collect()
                notes.extend(trace_notes)
            if self.variables is not None:
                report["variables"], variable_notes = self.variables.scan(
                    self._namespace(), self._hidden()
                )
                notes.extend(variable_notes)
            if self.gradients is not None:
                notes.extend(self.gradients.take_notes())
            report["error"] = errors.explain(getattr(result, "error_in_exec", None))
        except Exception:
            notes.append("tfcoach could not finish this report (internal error).")
        report["monitor_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
        return report

    def _execution_count(self, result: Any) -> int | None:
        count = getattr(result, "execution_count", None)
        if type(count) is int:
            return count
        # When IPython's own error display fails (an exception whose __str__ raises),
        # ipykernel passes a result without a count; the cell's number is the
        # shell counter minus one, as in ipykernel's execute_reply.
        shell_count = getattr(self.shell, "execution_count", None)
        return shell_count - 1 if type(shell_count) is int and shell_count > 1 else None

    # ----------------------------------------------------------------- magic
    def magic(self, line: str = "") -> None:
        argument = line.strip()
        if argument == "json":
            import json

            print(json.dumps(reports.last_report(), indent=2))
            return
        print(reports.format_report(reports.last_report()))
        print(self.status())

    def status(self) -> str:
        if self.traces is None:
            return "tfcoach: waiting for `import tensorflow` (nothing is watched until then)."
        tf = tensorflow_module()
        version = getattr(tf, "__version__", "?") if tf is not None else "?"
        return (
            f"tfcoach: TensorFlow {version}; watching "
            f"{self.traces.live_function_count()} tf.function objects."
        )


_monitor: Monitor | None = None


def current_monitor() -> Monitor | None:
    return _monitor


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext jupyterlab_tfcoach``; loading again is a no-op."""
    global _monitor
    if _monitor is not None:
        if _monitor.shell is shell:
            return
        unload_ipython_extension(_monitor.shell)
    monitor = Monitor(shell)
    monitor.start()
    try:
        shell.register_magic_function(monitor.magic, magic_kind="line", magic_name=MAGIC_NAME)
    except Exception:
        pass
    _monitor = monitor


def unload_ipython_extension(shell: Any) -> None:
    global _monitor
    if _monitor is None or _monitor.shell is not shell:
        return
    _monitor.stop()
    try:
        del shell.magics_manager.magics["line"][MAGIC_NAME]
    except Exception:
        pass
    _monitor = None
