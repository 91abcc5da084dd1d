// Loads the frontend's pure modules (the tsc output in lib/) into node's test runner.
// tsc emits ES modules with extensionless relative imports ('./wire'), which node
// cannot resolve, and lib/ has no package.json saying "module"; so each module is
// loaded from a data: URL, after its relative imports were loaded the same way and
// their specifiers replaced by those URLs. Only modules without JupyterLab imports
// (wire, wording, summary, timeline, positions, links) can be loaded like this.
import { readFileSync } from 'node:fs';

const LIB = new URL('../../lib/', import.meta.url);
const urls = new Map();

function dataUrl(name) {
  if (!urls.has(name)) {
    const source = readFileSync(new URL(`${name}.js`, LIB), 'utf8').replace(
      /from '\.\/([\w/]+)'/g,
      (_match, dependency) => `from '${dataUrl(dependency)}'`
    );
    // encodeURIComponent leaves ' as is: escaped too, as the URL lands in a quoted specifier.
    urls.set(name, 'data:text/javascript,' + encodeURIComponent(source).replace(/'/g, '%27'));
  }
  return urls.get(name);
}

/** The module `lib/<name>.js`, e.g. `await loadLib('wire')`. */
export async function loadLib(name) {
  return import(dataUrl(name));
}
