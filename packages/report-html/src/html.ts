/** Markup that is already safe to place in the page. Only {@link html} and {@link raw} make one. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** A value {@link html} accepts: text (escaped), numbers, safe markup, nothing, or a list of these. */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[];

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for an HTML element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (typeof value === 'number') return escapeHtml(String(value));
  if (typeof value === 'string') return escapeHtml(value);
  return value.map(render).join('');
}

/** Template tag: interpolated text is escaped, {@link SafeHtml} is kept, lists are joined. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Marks trusted markup (our own CSS and scripts) as safe. Never pass run data through it. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * JSON for an inline `<script type="application/json">`: `<`, `>`, `&` and the line separators are escaped, so no
 * value can close the script element or open a comment.
 */
export function inlineJson(value: unknown): SafeHtml {
  return new SafeHtml(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
}

/** `$1.23`, `≥$1.23` when some calls had no known cost, `unknown` when none had. */
export function formatUsd(usd: number | null, unknownCalls = 0): string {
  if (usd === null) return unknownCalls > 0 ? 'unknown' : '$0.00';
  return `${unknownCalls > 0 ? '≥' : ''}$${usd.toFixed(2)}`;
}

/** `850 ms`, `12.4 s`, `3 min 05 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${String(Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${String(Math.floor(seconds / 60))} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** A count, or an en dash when it was not measured. */
export function count(value: number | null): string {
  return value === null ? '–' : String(value);
}
