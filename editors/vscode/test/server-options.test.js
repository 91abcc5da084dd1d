"use strict";
// Plain Node checks of the extension's pure helpers: `npm run check`.
const assert = require("node:assert/strict");
const path = require("node:path");
const {
  DOCUMENT_SELECTOR,
  SETTINGS,
  describeCommand,
  installCommand,
  interpreterSetting,
  serverCommand,
  startFailureMessage,
  tfcoachSettings,
} = require("../server-options");

const none = () => false;
const isolated = ["-I", "-m", "lsp_server"];
assert.deepEqual(serverCommand("/opt/venv/bin/python", undefined, none), {
  python: "/opt/venv/bin/python",
  command: "/opt/venv/bin/python",
  args: isolated,
});
assert.deepEqual(serverCommand("", undefined, none), { python: "python3", command: "python3", args: isolated });
assert.deepEqual(serverCommand(undefined, undefined, none).args, isolated);
// The console script next to an interpreter given by its full path wins; never one found
// through a bare name (that would be looked up relative to the workspace).
const scripts = new Set(["/opt/venv/bin/tfcoach-lsp", "tfcoach-lsp"]);
const hasScript = (file) => scripts.has(file);
assert.deepEqual(serverCommand("/opt/venv/bin/python", undefined, hasScript), {
  python: "/opt/venv/bin/python",
  command: "/opt/venv/bin/tfcoach-lsp",
  args: [],
});
assert.deepEqual(serverCommand("python3", undefined, hasScript).command, "python3");
assert.equal(describeCommand(serverCommand("/opt/b/python", undefined, none)), "/opt/b/python -I -m lsp_server");
// An explicit setting wins over the Python extension's interpreter, which wins over python3.
assert.deepEqual(serverCommand("/opt/a/python", "/opt/b/python", none).python, "/opt/a/python");
assert.deepEqual(serverCommand("  ", "/opt/b/python", none).python, "/opt/b/python");
assert.deepEqual(serverCommand("", undefined, none).python, "python3");

// A workspace's interpreter setting counts only in a trusted workspace.
const section = (inspected) => ({
  get: (key) => (key === "interpreter" ? inspected.workspaceValue ?? inspected.globalValue : undefined),
  inspect: (key) => (key === "interpreter" ? inspected : undefined),
});
const both = section({ globalValue: "/usr/bin/python3", workspaceValue: "./evil/python" });
assert.equal(interpreterSetting(true, both), "./evil/python");
assert.equal(interpreterSetting(false, both), "/usr/bin/python3");
assert.equal(interpreterSetting(false, section({ workspaceValue: "./evil/python" })), undefined);

const values = { select: ["TFC001"], ignore: null, courseBaseUrl: "https://example.org/course", interpreter: "py" };
assert.deepEqual(tfcoachSettings((key) => values[key]), {
  select: ["TFC001"],
  courseBaseUrl: "https://example.org/course",
});

// The debounce and size limit reach the server too; 0 (no debounce) is a value, not "unset".
const tuned = { debounceMs: 0, maxDocumentCharacters: 4000000, interpreter: "py" };
assert.deepEqual(tfcoachSettings((key) => tuned[key]), { debounceMs: 0, maxDocumentCharacters: 4000000 });

// Every server setting declared in package.json is forwarded, and nothing else is: with
// nothing set, VS Code's `get` returns the declared defaults, and those are what is sent.
const declared = require(path.join(__dirname, "..", "package.json")).contributes.configuration.properties;
const clientOnly = new Set(["tfcoach.interpreter", "tfcoach.trace.server"]);
const serverKeys = Object.keys(declared)
  .filter((name) => !clientOnly.has(name))
  .map((name) => name.slice("tfcoach.".length));
assert.deepEqual([...SETTINGS].sort(), serverKeys.sort());
assert.deepEqual(
  tfcoachSettings((key) => declared[`tfcoach.${key}`]?.default),
  { debounceMs: 200, maxDocumentCharacters: 1048576 },
);

assert.ok(DOCUMENT_SELECTOR.some((s) => s.notebook && s.notebook.notebookType === "jupyter-notebook"));
assert.equal(installCommand("/opt/venv/bin/python"), "/opt/venv/bin/python -m pip install jupyterlab-tfcoach");
assert.equal(installCommand("C:\\Program Files\\py.exe"), '"C:\\Program Files\\py.exe" -m pip install jupyterlab-tfcoach');
const message = startFailureMessage(
  serverCommand("py", undefined, none),
  new Error("Traceback...\npy: No module named lsp_server"),
);
assert.match(message, /"py -I -m lsp_server"/);
assert.match(message, /tfcoach\.interpreter/);
assert.match(message, /py -m pip install jupyterlab-tfcoach/);
assert.match(message, /\(py: No module named lsp_server\)/);
console.log("server-options: ok");
