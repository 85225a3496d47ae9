import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PINNED_CLI_VERSIONS, locateRealCli } from './real-clis.js';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  devDependencies: Record<string, string>;
};

describe('the pinned agent CLIs', () => {
  it('are pinned to exact versions in package.json, the same ones the code and docs name', () => {
    expect(manifest.devDependencies['@anthropic-ai/claude-code']).toBe(PINNED_CLI_VERSIONS.claude);
    expect(manifest.devDependencies['@openai/codex']).toBe(PINNED_CLI_VERSIONS.codex);
    expect(manifest.devDependencies['opencode-ai']).toBe(PINNED_CLI_VERSIONS.opencode);
    expect(manifest.devDependencies['@google/gemini-cli']).toBe(PINNED_CLI_VERSIONS.gemini);
    const docs = readFileSync(new URL('../../../docs/agents.md', import.meta.url), 'utf8');
    const row = (cli: string, version: string) =>
      new RegExp(`^\\| ${cli.replace(/[()`]/g, '\\$&')} +\\| ${version.replaceAll('.', '\\.')} +\\|`, 'm');
    expect(docs).toMatch(row('Claude Code (`claude`)', PINNED_CLI_VERSIONS.claude));
    expect(docs).toMatch(row('Codex CLI (`codex exec`)', PINNED_CLI_VERSIONS.codex));
    expect(docs).toMatch(row('opencode (`opencode run`)', PINNED_CLI_VERSIONS.opencode));
    expect(docs).toMatch(row('Gemini CLI (`gemini`)', PINNED_CLI_VERSIONS.gemini));
  });

  for (const name of ['claude', 'codex', 'opencode', 'gemini'] as const) {
    const cli = locateRealCli(name);
    if ('skipReason' in cli) console.warn(`SKIPPED real ${name} version check: ${cli.skipReason}`);
    it.skipIf('skipReason' in cli)(`the installed ${name} binary prints the pinned version`, () => {
      expect('version' in cli && cli.version).toBe(PINNED_CLI_VERSIONS[name]);
    });
  }
});
