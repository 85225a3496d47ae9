// A local ESLint rule that enforces the package layering of docs/architecture.md using the Nx tags in each
// package's package.json (`nx.tags`). It replaces @nx/enforce-module-boundaries, which has no release matching
// the pinned Nx version on this registry.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Layers, lowest first: a package may import packages whose layer is at or below its own. */
export const LAYERS = ['type:core', 'type:adapter', 'type:feature', 'type:orchestrator', 'type:app'];

/** Packages tagged so are test infrastructure: only test files (and other test infrastructure) may import them. */
export const TESTING_TAG = 'type:testing';

/** Modules a pure file may never import. */
export const EFFECTFUL_MODULES = [
  'fs',
  'fs/promises',
  'child_process',
  'net',
  'http',
  'https',
  'worker_threads',
  'os',
  'cluster',
  'dgram',
  'readline',
  'execa',
];

/** Files outside type:core packages that must stay pure too (the orchestrator's decide). */
export const PURE_FILES = [/^packages\/orchestrator\/src\/decide\//];

function loadPackages() {
  const packages = new Map();
  const dir = join(ROOT, 'packages');
  for (const name of readdirSync(dir)) {
    const file = join(dir, name, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    const tags = pkg.nx?.tags ?? [];
    packages.set(pkg.name, { dir: name, name: pkg.name, tags, deps: Object.keys(pkg.dependencies ?? {}) });
  }
  return packages;
}

function layerOf(pkg) {
  return Math.max(...pkg.tags.map((tag) => LAYERS.indexOf(tag)));
}

function isEffectful(source) {
  const bare = source.replace(/^node:/, '');
  return EFFECTFUL_MODULES.some((mod) => bare === mod || bare.startsWith(`${mod}/`));
}

/** @type {import('eslint').Rule.RuleModule} */
export const moduleBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce package layering and purity from Nx tags.' },
    messages: {
      effectful:
        "'{{source}}' is effectful and may not be imported by {{where}} (pure core: effects live in adapters).",
      layer:
        "'{{source}}' ({{theirTag}}) may not be imported by {{pkg}} ({{ourTag}}): dependencies point downward only.",
      undeclared:
        "'{{source}}' is not a declared dependency of {{pkg}}: add it to package.json and run 'npx nx sync'.",
      deep: "Deep import '{{source}}': import the package's public entry '{{entry}}' instead.",
      untagged: '{{pkg}} has no type:* tag in package.json nx.tags.',
      testOnly:
        "'{{source}}' is test infrastructure (type:testing) and may be imported only by tests, never by {{pkg}}'s production code.",
    },
    schema: [],
  },
  create(context) {
    const packages = loadPackages();
    const rel = relative(ROOT, context.filename).split(sep).join('/');
    const match = /^packages\/([^/]+)\//.exec(rel);
    if (!match) return {};
    const own = [...packages.values()].find((pkg) => pkg.dir === match[1]);
    if (!own) return {};
    const isTest = /\.test(-helpers)?\.ts$/.test(rel) || rel.endsWith('vitest.config.ts');
    const pure = own.tags.includes('type:core') || PURE_FILES.some((re) => re.test(rel));
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      if (pure && !isTest && isEffectful(source)) {
        context.report({
          node,
          messageId: 'effectful',
          data: { source, where: own.tags.includes('type:core') ? `${own.name} (type:core)` : rel },
        });
        return;
      }
      const internal = /^(@allium-loop\/[^/]+|allium-loop)(\/.*)?$/.exec(source);
      if (!internal) return;
      const [, name, subpath] = internal;
      if (name === own.name) return;
      const target = packages.get(name);
      if (!target) return;
      if (subpath && subpath !== '/testing') {
        context.report({ node, messageId: 'deep', data: { source, entry: name } });
        return;
      }
      if (target.tags.includes(TESTING_TAG) && !isTest && !own.tags.includes(TESTING_TAG)) {
        context.report({ node, messageId: 'testOnly', data: { source, pkg: own.name } });
        return;
      }
      const ourLayer = layerOf(own);
      const theirLayer = layerOf(target);
      if (ourLayer < 0) {
        context.report({ node, messageId: 'untagged', data: { pkg: own.name } });
        return;
      }
      if (theirLayer > ourLayer) {
        context.report({
          node,
          messageId: 'layer',
          data: { source, pkg: own.name, ourTag: LAYERS[ourLayer], theirTag: LAYERS[theirLayer] },
        });
        return;
      }
      if (!own.deps.includes(name) && !isTest) {
        context.report({ node, messageId: 'undeclared', data: { source, pkg: own.name } });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

/** The plugin object for eslint.config.mjs. */
export const plugin = { rules: { 'module-boundaries': moduleBoundaries } };
