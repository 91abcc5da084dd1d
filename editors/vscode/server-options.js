"use strict";
// Pure helpers (no `vscode` import) so they can be tested with plain Node.

const SETTINGS = ["select", "ignore", "courseBaseUrl"];
const INSTALL_PACKAGE = "jupyterlab-tfcoach";

/**
 * The command that starts the server: `<interpreter> -m lsp_server`. An empty
 * `tfcoach.interpreter` means `fallback` (the Python extension's interpreter), else `python3`.
 */
function serverCommand(interpreter, fallback) {
  const pick = (value) => (typeof value === "string" && value.trim() ? value.trim() : undefined);
  const command = pick(interpreter) ?? pick(fallback) ?? "python3";
  return { command, args: ["-m", "lsp_server"] };
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

function startFailureMessage(command, error) {
  const reason = (error && error.message ? error.message : String(error)).trim().split("\n").pop();
  return (
    `tfcoach: the language server could not start with "${command} -m lsp_server" (${reason}). ` +
    `Install it with \`${installCommand(command)}\`, or set "tfcoach.interpreter" to a Python ` +
    "that has it."
  );
}

module.exports = {
  DOCUMENT_SELECTOR,
  EXPERIMENTAL_CAPABILITIES,
  SETTINGS,
  installCommand,
  serverCommand,
  startFailureMessage,
  tfcoachSettings,
};
