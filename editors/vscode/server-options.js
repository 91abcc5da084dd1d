"use strict";
// Pure helpers (no `vscode` import) so they can be tested with plain Node.
const fs = require("fs");
const path = require("path");

// The server's keys (`KNOWN_KEYS` in lsp_server/settings.py), each a `tfcoach.<key>` in package.json.
const SETTINGS = ["select", "ignore", "courseBaseUrl", "debounceMs", "maxDocumentCharacters"];
const INSTALL_PACKAGE = "jupyterlab-tfcoach";
const CONSOLE_SCRIPTS = ["tfcoach-lsp", "tfcoach-lsp.exe"];

function isFile(file) {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The command that starts the server, run with the workspace folder as working directory.
 * The interpreter is `interpreter` (`tfcoach.interpreter`), else `fallback` (the Python
 * extension's interpreter), else `python3`. Nothing is imported from the workspace:
 * - the `tfcoach-lsp` console script next to an interpreter given by its full path, when it
 *   exists (its Python puts the script's folder first on `sys.path`, not the working directory);
 * - else `<python> -I -m lsp_server`: isolated mode, so the working directory, `PYTHON*`
 *   variables and the user site are not on `sys.path` (plain `-m` would import the workspace's
 *   `lsp_server/` or `argparse.py`). `python` is what the install command and messages name.
 */
function serverCommand(interpreter, fallback, exists = isFile) {
  const pick = (value) => (typeof value === "string" && value.trim() ? value.trim() : undefined);
  const python = pick(interpreter) ?? pick(fallback) ?? "python3";
  if (path.isAbsolute(python)) {
    for (const name of CONSOLE_SCRIPTS) {
      const script = path.join(path.dirname(python), name);
      if (exists(script)) {
        return { python, command: script, args: [] };
      }
    }
  }
  return { python, command: python, args: ["-I", "-m", "lsp_server"] };
}

/**
 * `tfcoach.interpreter` from `config` (the `tfcoach` section). In an untrusted workspace
 * (Restricted Mode) only the user's own value counts: a workspace's `.vscode/settings.json`
 * must not choose a program to run.
 */
function interpreterSetting(trusted, config) {
  if (trusted) {
    return config.get("interpreter");
  }
  const inspected = config.inspect("interpreter");
  return inspected ? inspected.globalValue : undefined;
}

/** `command args...` as the output channel shows it. */
function describeCommand({ command, args }) {
  return [command, ...args].join(" ");
}

/** The `tfcoach` section as the server expects it (unset values and client-only keys left out). */
function tfcoachSettings(get) {
  const settings = {};
  for (const key of SETTINGS) {
    const value = get(key);
    if (value !== undefined && value !== null) {
      settings[key] = value;
    }
  }
  return settings;
}

/** Files and notebook cells the server handles. */
const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "python" },
  { scheme: "untitled", language: "python" },
  { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
];

/**
 * Experimental client capabilities for the server: vscode-languageclient 9 pulls diagnostics
 * for files but never for notebook cells (microsoft/vscode-languageserver-node#1464), so the
 * server is asked to push them for notebooks.
 */
const EXPERIMENTAL_CAPABILITIES = { tfcoach: { notebookCellDiagnostics: "push" } };

/** The shell command that installs the server into `command`'s environment. */
function installCommand(command) {
  const quoted = /^[\w@%+=:,./-]+$/.test(command) ? command : `"${command.replace(/"/g, '\\"')}"`;
  return `${quoted} -m pip install ${INSTALL_PACKAGE}`;
}

/** Why the server did not start with `server` (a `serverCommand` result) and how to fix it. */
function startFailureMessage(server, error) {
  const reason = (error && error.message ? error.message : String(error)).trim().split("\n").pop();
  return (
    `tfcoach: the language server could not start with "${describeCommand(server)}" (${reason}). ` +
    `Install it with \`${installCommand(server.python)}\`, or set "tfcoach.interpreter" to a Python ` +
    "that has it."
  );
}

module.exports = {
  DOCUMENT_SELECTOR,
  EXPERIMENTAL_CAPABILITIES,
  SETTINGS,
  describeCommand,
  installCommand,
  interpreterSetting,
  serverCommand,
  startFailureMessage,
  tfcoachSettings,
};
