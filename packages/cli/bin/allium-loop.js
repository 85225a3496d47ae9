#!/usr/bin/env node
// The `allium-loop` executable inside this repository. It is committed (not built) so that `npm ci` links
// node_modules/.bin/allium-loop before anything is built; it then loads the built CLI from dist/.
const entry = new URL('../dist/main.js', import.meta.url);
try {
  await import(entry.href);
} catch (error) {
  const missing =
    error !== null &&
    typeof error === 'object' &&
    error.code === 'ERR_MODULE_NOT_FOUND' &&
    String(error.message).includes('dist/main.js');
  if (!missing) throw error;
  process.stderr.write(
    'allium-loop: the CLI is not built yet (packages/cli/dist/main.js is missing).\n' +
      'Run `npm run build` at the repository root, then try again.\n',
  );
  process.exitCode = 1;
}
