"use strict";
// The part of ms-python.python's API that tfcoach uses: `environments`.
const vscode = require("vscode");

function activate() {
  const changed = new vscode.EventEmitter();
  const selected = () => vscode.workspace.getConfiguration("fakePython").get("interpreter");
  vscode.workspace.onDidChangeConfiguration((event) => {
    if (event.affectsConfiguration("fakePython.interpreter")) {
      changed.fire({ id: selected(), path: selected() });
    }
  });
  return {
    environments: {
      getActiveEnvironmentPath: () => ({ id: selected(), path: selected() }),
      resolveEnvironment: async (env) => ({
        id: env.id,
        path: env.path,
        executable: { uri: vscode.Uri.file(env.path) },
      }),
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
}

module.exports = { activate };
