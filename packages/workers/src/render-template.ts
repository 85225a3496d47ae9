import { readFileSync } from 'node:fs';
import { WorkerError } from './worker-error.js';

const PLACEHOLDER = /\{\{\s*([A-Za-z][\w]*)\s*\}\}/g;

/**
 * Replaces every `{{name}}` in `template` with `values[name]`, in one pass (inserted values are not scanned
 * again, so text quoted from a spec or a test cannot inject placeholders). Runs of three or more newlines left by
 * empty values collapse to one blank line.
 * @throws WorkerError `workers.template_value_missing` when a placeholder has no value.
 */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  const rendered = template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw new WorkerError(`Prompt template placeholder {{${name}}} has no value.`, {
        code: 'workers.template_value_missing',
        context: { placeholder: name },
      });
    }
    return value;
  });
  return rendered.replace(/\n{3,}/g, '\n\n');
}

/** The placeholder names a template uses, in order of first appearance. */
export function templatePlaceholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

const cache = new Map<string, string>();

/**
 * Reads `templates/<name>.md` from the package root. Resolved relative to this module, so it works both from
 * `src/` (tests) and from `dist/` (built).
 * @throws WorkerError `workers.template_missing` when the file is not there.
 */
export function loadTemplate(name: string): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  const url = new URL(`../templates/${name}.md`, import.meta.url);
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (cause) {
    throw new WorkerError(`Prompt template ${name}.md is missing.`, {
      code: 'workers.template_missing',
      cause,
      context: { path: url.pathname },
      hint: 'The workers package ships its templates/ folder next to dist/; reinstall the package.',
    });
  }
  cache.set(name, text);
  return text;
}
