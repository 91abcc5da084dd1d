"use strict";
// tfcoach for VS Code: starts `tfcoach-lsp` (next to the interpreter, else
// `<interpreter> -I -m lsp_server`) over stdio.
const childProcess = require("child_process");
const vscode = require("vscode");
const {
  DidChangeConfigurationNotification,
  LanguageClient,
  RevealOutputChannelOn,
  State,
} = require("vscode-languageclient/node");
const {
  DOCUMENT_SELECTOR,
  EXPERIMENTAL_CAPABILITIES,
  SETTINGS,
  describeCommand,
  installCommand,
  interpreterSetting,
  serverCommand,
  startFailureMessage,
  tfcoachSettings,
} = require("./server-options");

let client;
let output;
let pythonApi; // the Python extension's API, when that extension is installed

function workspaceFolderPath() {
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length ? folders[0].uri.fsPath : undefined;
}

function currentSettings(scope) {
  const config = vscode.workspace.getConfiguration("tfcoach", scope);
  return tfcoachSettings((key) => config.get(key));
}

async function loadPythonApi() {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch (error) {
    output.appendLine(`tfcoach: the Python extension did not activate: ${error}`);
    return undefined;
  }
}

/** `tfcoach.interpreter`; in an untrusted workspace, the user's value only. */
function configuredInterpreter() {
  return interpreterSetting(vscode.workspace.isTrusted, vscode.workspace.getConfiguration("tfcoach"));
}

/**
 * The interpreter selected in the Python extension, if it is installed. Not in an untrusted
 * workspace: that choice may be the workspace's own `.venv` or a workspace setting.
 */
async function selectedInterpreter() {
  if (!pythonApi || !vscode.workspace.isTrusted) {
    return undefined;
  }
  const folders = vscode.workspace.workspaceFolders;
  const resource = folders && folders.length ? folders[0].uri : undefined;
  try {
    if (pythonApi.environments) {
      const active = pythonApi.environments.getActiveEnvironmentPath(resource);
      const resolved = await pythonApi.environments.resolveEnvironment(active);
      const executable = resolved && resolved.executable && resolved.executable.uri;
      return executable ? executable.fsPath : active && active.path;
    }
    const details = pythonApi.settings && pythonApi.settings.getExecutionDetails(resource);
    return details && details.execCommand ? details.execCommand[0] : undefined;
  } catch (error) {
    output.appendLine(`tfcoach: could not read the Python extension's interpreter: ${error}`);
    return undefined;
  }
}

/** `<command> <args> --version`: resolves with the version, rejects with the reason. */
function probe(command, args, cwd) {
  return new Promise((resolve, reject) => {
    childProcess.execFile(command, [...args, "--version"], { cwd, timeout: 60000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error((stderr || "").trim() || error.message));
      } else {
        resolve(stdout.trim());
      }
    });
  });
}

function reportStartFailure(server, error) {
  const message = startFailureMessage(server, error);
  output.appendLine(message);
  // Not awaited: the notification stays until the user answers, activation must not wait.
  vscode.window
    .showErrorMessage(message, "Copy install command", "Open settings", "Show output")
    .then(async (choice) => {
      if (choice === "Copy install command") {
        await vscode.env.clipboard.writeText(installCommand(server.python));
      } else if (choice === "Open settings") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "tfcoach.interpreter");
      } else if (choice === "Show output") {
        output.show(true);
      }
    });
}

function buildClient(command, args, cwd) {
  const serverOptions = { command, args, options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: "1" } } };
  const clientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: currentSettings(),
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      workspace: {
        // The server pulls the `tfcoach` section: send only its keys, not client-only ones
        // such as `interpreter` or `trace`.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return params.items.map((item, index) =>
            item.section === "tfcoach"
              ? currentSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
              : result[index],
          );
        },
      },
    },
  };
  const languageClient = new LanguageClient("tfcoach", "tfcoach", serverOptions, clientOptions);
  languageClient.registerFeature({
    fillClientCapabilities(capabilities) {
      capabilities.experimental = { ...capabilities.experimental, ...EXPERIMENTAL_CAPABILITIES };
    },
    initialize() {},
    getState() {
      return { kind: "static" };
    },
    clear() {},
  });
  return languageClient;
}

async function start() {
  const interpreter = configuredInterpreter();
  const fallback = typeof interpreter === "string" && interpreter.trim() ? undefined : await selectedInterpreter();
  const server = serverCommand(interpreter, fallback);
  const { command, args } = server;
  const cwd = workspaceFolderPath();
  if (!vscode.workspace.isTrusted) {
    output.appendLine(
      `tfcoach: untrusted workspace: the server runs with ${server.python}, not with an ` +
        "interpreter the workspace chooses; trust the workspace to use its settings.",
    );
  }
  try {
    const version = await probe(command, args, cwd);
    output.appendLine(`tfcoach: ${version} (${describeCommand(server)})`);
  } catch (error) {
    reportStartFailure(server, error);
    return;
  }
  client = buildClient(command, args, cwd);
  client.onDidChangeState((event) => {
    if (event.newState === State.Stopped) {
      output.appendLine("tfcoach language server stopped.");
    }
  });
  try {
    await client.start();
    output.appendLine(`tfcoach language server started: ${describeCommand(server)}`);
  } catch (error) {
    reportStartFailure(server, error);
  }
}

async function stop() {
  if (client) {
    const running = client;
    client = undefined;
    try {
      await running.stop();
    } catch (error) {
      output.appendLine(`tfcoach: error while stopping the server: ${error}`);
    }
  }
}

async function restart() {
  await stop();
  await start();
}

async function activate(context) {
  output = vscode.window.createOutputChannel("tfcoach");
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("tfcoach.restartServer", restart),
    vscode.commands.registerCommand("tfcoach.showOutput", () => output.show(true)),
    // Trusting the workspace makes its interpreter settings count: start again with them.
    vscode.workspace.onDidGrantWorkspaceTrust(restart),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("tfcoach.interpreter")) {
        await restart();
      } else if (SETTINGS.some((key) => event.affectsConfiguration(`tfcoach.${key}`))) {
        if (client && client.isRunning()) {
          await client.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { tfcoach: currentSettings() },
          });
        }
      }
    }),
  );
  pythonApi = await loadPythonApi();
  if (pythonApi && pythonApi.environments && pythonApi.environments.onDidChangeActiveEnvironmentPath) {
    context.subscriptions.push(
      pythonApi.environments.onDidChangeActiveEnvironmentPath(async () => {
        const interpreter = configuredInterpreter();
        if (!(typeof interpreter === "string" && interpreter.trim())) {
          await restart();
        }
      }),
    );
  }
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
