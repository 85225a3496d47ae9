/** What a file in a project is, as far as entry detection cares. */
export type PathRole = 'code' | 'test' | 'doc' | 'config' | 'other';

/** Directories never searched: dependencies, VCS data, build output, caches and the loop's own state. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  'dist',
  'build',
  'out',
  'out-tsc',
  'target',
  'coverage',
  '.next',
  '.nuxt',
  '.nx',
  '.turbo',
  '.cache',
  '.venv',
  'venv',
  '__pycache__',
  'vendor',
  '.allium-loop',
]);

const SOURCE_EXTENSIONS = new Set(
  (
    'ts tsx mts cts js jsx mjs cjs vue svelte py rb go rs java kt kts scala groovy cs fs vb swift m mm c h cc cpp ' +
    'cxx hpp hh php ex exs erl hrl clj cljs hs ml mli dart lua r jl nim zig elm sol'
  ).split(' '),
);

const TEST_DIRECTORIES = new Set([
  'test',
  'tests',
  '__tests__',
  'spec',
  'specs',
  'e2e',
  'testing',
  'fixtures',
]);
const DOC_DIRECTORIES = new Set(['docs', 'doc', 'documentation', 'examples', 'example']);
const TEST_NAME =
  /(?:[._-](?:test|spec|e2e)\.[^.]+$|^test_.*\.py$|_test\.[^.]+$|Tests?\.(?:java|kt|cs|swift)$)/;
const CONFIG_NAME =
  /(?:\.config\.[^.]+$|^\.[^.]+rc(?:\.[^.]+)?$|^(?:gulpfile|gruntfile|setup|conftest|noxfile)\.[^.]+$)/i;

/**
 * Classifies a `/`-separated path relative to the project root by its directories and file name: tests (a test
 * directory or a `*.test.*`-style name), docs (a docs or examples directory), config (`*.config.*`, dotfile rc
 * files, setup scripts), code (any other file with a source extension), or other.
 */
export function classifyPath(path: string): PathRole {
  const segments = path.split('/');
  const name = segments[segments.length - 1]!;
  const directories = segments.slice(0, -1).map((segment) => segment.toLowerCase());
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  if (!SOURCE_EXTENSIONS.has(extension)) return extension === 'md' ? 'doc' : 'other';
  if (directories.some((dir) => TEST_DIRECTORIES.has(dir)) || TEST_NAME.test(name)) return 'test';
  if (directories.some((dir) => DOC_DIRECTORIES.has(dir))) return 'doc';
  if (CONFIG_NAME.test(name)) return 'config';
  return 'code';
}
