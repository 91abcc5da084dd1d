"use strict";
// Plain Node checks of the extension's pure helpers: `npm run check`.
const assert = require("node:assert/strict");
const {
  DOCUMENT_SELECTOR,
  installCommand,
  serverCommand,
  startFailureMessage,
  tfcoachSettings,
} = require("../server-options");

assert.deepEqual(serverCommand("/opt/venv/bin/python"), { command: "/opt/venv/bin/python", args: ["-m", "lsp_server"] });
assert.deepEqual(serverCommand(""), { command: "python3", args: ["-m", "lsp_server"] });
assert.deepEqual(serverCommand(undefined), { command: "python3", args: ["-m", "lsp_server"] });
// An explicit setting wins over the Python extension's interpreter, which wins over python3.
assert.deepEqual(serverCommand("/opt/a/python", "/opt/b/python").command, "/opt/a/python");
assert.deepEqual(serverCommand("  ", "/opt/b/python").command, "/opt/b/python");
assert.deepEqual(serverCommand("", undefined).command, "python3");

const values = { select: ["TFC001"], ignore: null, courseBaseUrl: "https://example.org/course", interpreter: "py" };
assert.deepEqual(tfcoachSettings((key) => values[key]), {
  select: ["TFC001"],
  courseBaseUrl: "https://example.org/course",
});

assert.ok(DOCUMENT_SELECTOR.some((s) => s.notebook && s.notebook.notebookType === "jupyter-notebook"));
assert.equal(installCommand("/opt/venv/bin/python"), "/opt/venv/bin/python -m pip install jupyterlab-tfcoach");
assert.equal(installCommand("C:\\Program Files\\py.exe"), '"C:\\Program Files\\py.exe" -m pip install jupyterlab-tfcoach');
const message = startFailureMessage("py", new Error("Traceback...\npy: No module named lsp_server"));
assert.match(message, /tfcoach\.interpreter/);
assert.match(message, /py -m pip install jupyterlab-tfcoach/);
assert.match(message, /\(py: No module named lsp_server\)/);
console.log("server-options: ok");
