import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ScriptedModelServer } from './server.js';

/** The agent CLIs this package pins (devDependencies, installed by `npm ci`). */
export type RealCliName = 'claude' | 'codex' | 'opencode' | 'gemini';

/** The pinned versions; a test checks them against package.json and what the binaries print. */
export const PINNED_CLI_VERSIONS: Readonly<Record<RealCliName, string>> = {
  claude: '2.1.328',
  codex: '0.169.0',
  opencode: '1.18.33',
  gemini: '0.61.0',
};

/** A located CLI: its executable and version, or the reason it cannot run here (tests skip with it). */
export type RealCli =
  | { readonly name: RealCliName; readonly path: string; readonly version: string }
  | { readonly name: RealCliName; readonly skipReason: string };

const require = createRequire(import.meta.url);

function packageDir(name: string): string | undefined {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

const CODEX_TRIPLES: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

/**
 * The native executable of a pinned CLI, straight from its platform package (npm does not run Claude Code's
 * postinstall here, and calling the binary directly keeps one process per call), checked by running
 * `--version`. Never throws: a CLI that cannot start comes back with a `skipReason`.
 */
export function locateRealCli(name: RealCliName): RealCli {
  const platform = `${process.platform}-${process.arch}`;
  let path: string | undefined;
  if (name === 'claude') {
    const dir = packageDir(`@anthropic-ai/claude-code-${platform}`);
    path = dir === undefined ? undefined : join(dir, 'claude');
  } else if (name === 'gemini') {
    // A Node program (its bundle), not a native binary: run with the node on PATH, as npm's bin link would.
    const dir = packageDir('@google/gemini-cli');
    path = dir === undefined ? undefined : join(dir, 'bundle', 'gemini.js');
  } else if (name === 'opencode') {
    const dir = packageDir(`opencode-${platform}`);
    path = dir === undefined ? undefined : join(dir, 'bin', 'opencode');
  } else {
    const dir = packageDir(`@openai/codex-${platform}`);
    const triple = CODEX_TRIPLES[platform];
    path =
      dir === undefined || triple === undefined ? undefined : join(dir, 'vendor', triple, 'bin', 'codex');
  }
  if (path === undefined || !existsSync(path))
    return {
      name,
      skipReason: `the pinned ${name} ${PINNED_CLI_VERSIONS[name]} has no binary for ${platform} in node_modules (run npm ci)`,
    };
  try {
    const out = execFileSync(path, ['--version'], {
      encoding: 'utf8',
      // Generous: a Node CLI (gemini) can take minutes to start on a loaded two-core machine.
      timeout: 300_000,
      env: { PATH: process.env['PATH'] ?? '' },
    });
    const version = /\d+\.\d+\.\d+/.exec(out)?.[0];
    if (version === undefined)
      return { name, skipReason: `${path} --version printed no version: ${out.trim()}` };
    return { name, path, version };
  } catch (error) {
    return { name, skipReason: `${path} --version failed: ${(error as Error).message.split('\n')[0]}` };
  }
}

/** The placeholder key the CLIs send to the scripted model (it checks none). */
export const SCRIPTED_API_KEY = 'sk-scripted-model-not-a-real-key';

/** Variables that keep Claude Code on the scripted model and off every other host. */
export const CLAUDE_OFFLINE_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_ERROR_REPORTING: '1',
  // Root may use --dangerously-skip-permissions / bypassPermissions only inside a declared sandbox.
  IS_SANDBOX: '1',
  // A 429 or 500 is reported at once instead of being retried for minutes.
  CLAUDE_CODE_MAX_RETRIES: '0',
};

/** Options of the `*EnvFor` helpers. */
export interface RealCliEnvOptions {
  /**
   * How often the CLI itself retries a failed model request (429, 5xx, a dropped stream); default 0, so a
   * fault reaches the adapter at once. Claude Code: `CLAUDE_CODE_MAX_RETRIES`; Codex: the provider's
   * `request_max_retries` and `stream_max_retries`. Gemini CLI: `general.maxAttempts` (retries + 1) in its
   * settings, and its own default (10 attempts, backing off from 5 s to 30 s: about 4 minutes) when not given.
   */
  readonly retries?: number;
}

/**
 * The environment that points Claude Code at `server` with `home` as its home and config folder (created).
 * Pass `envAllow: Object.keys(...)` for the names the claude adapter does not pass through itself.
 */
export async function claudeEnvFor(
  server: ScriptedModelServer,
  home: string,
  options: RealCliEnvOptions = {},
): Promise<Record<string, string>> {
  await mkdir(join(home, '.claude'), { recursive: true });
  return {
    ...CLAUDE_OFFLINE_ENV,
    CLAUDE_CODE_MAX_RETRIES: String(options.retries ?? 0),
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: SCRIPTED_API_KEY,
  };
}

/** The model name Codex is told to use with the scripted provider. */
export const CODEX_SCRIPTED_MODEL = 'gpt-5.5';

/**
 * Writes `<home>/.codex/config.toml` selecting a `scripted` provider at `server` (Responses wire API, key in
 * `OPENAI_API_KEY`, no retries unless `options.retries`, no update check, no analytics), and returns the
 * environment for Codex.
 */
export async function codexEnvFor(
  server: ScriptedModelServer,
  home: string,
  options: RealCliEnvOptions = {},
): Promise<Record<string, string>> {
  const retries = String(options.retries ?? 0);
  const codexHome = join(home, '.codex');
  await mkdir(codexHome, { recursive: true });
  const config = [
    `model = "${CODEX_SCRIPTED_MODEL}"`,
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[model_providers.scripted]',
    'name = "scripted model"',
    `base_url = "${server.openaiBaseUrl}"`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    `request_max_retries = ${retries}`,
    `stream_max_retries = ${retries}`,
    '',
  ].join('\n');
  await writeFile(join(codexHome, 'config.toml'), config);
  return { HOME: home, CODEX_HOME: codexHome, OPENAI_API_KEY: SCRIPTED_API_KEY };
}

/** The model opencode is told to use (its own price table prices it; the scripted model answers any name). */
export const OPENCODE_SCRIPTED_MODEL = 'anthropic/claude-sonnet-4-5';

/** Variables that keep opencode off every host but the scripted model (pass them with `envAllow`). */
export const OPENCODE_OFFLINE_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_MODELS_FETCH: 'true',
  OPENCODE_DISABLE_AUTOUPDATE: 'true',
  OPENCODE_DISABLE_SHARE: 'true',
  OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true',
};

/**
 * Writes `<home>/opencode.json` pointing opencode's Anthropic provider at `server` (edits and shell allowed
 * without asking, no sharing, no autoupdate) and returns the environment for opencode (`OPENCODE_CONFIG`).
 */
export async function opencodeEnvFor(
  server: ScriptedModelServer,
  home: string,
): Promise<Record<string, string>> {
  await mkdir(home, { recursive: true });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: OPENCODE_SCRIPTED_MODEL,
    provider: { anthropic: { options: { baseURL: `${server.url}/v1`, apiKey: SCRIPTED_API_KEY } } },
    permission: { edit: 'allow', bash: 'allow' },
  };
  const path = join(home, 'opencode.json');
  await writeFile(path, `${JSON.stringify(config, null, 2)}\n`);
  return { ...OPENCODE_OFFLINE_ENV, HOME: home, OPENCODE_CONFIG: path, ANTHROPIC_API_KEY: SCRIPTED_API_KEY };
}

/** The model Gemini CLI is told to use (`-m`); the scripted model answers any name. */
export const GEMINI_SCRIPTED_MODEL = 'gemini-2.5-pro';

/**
 * Writes `<home>/.gemini/settings.json` and returns the environment that points Gemini CLI at `server`
 * (`GOOGLE_GEMINI_BASE_URL`, key in `GEMINI_API_KEY`). The settings select the API-key auth explicitly: with
 * only the base URL set, Gemini CLI 0.61.0 picks its `gateway` auth type, which its non-interactive mode then
 * refuses ("Invalid auth method selected."). Folder trust is off (an untrusted folder drops `--approval-mode`
 * to `default`), and so are usage statistics, telemetry and update checks.
 */
export async function geminiEnvFor(
  server: ScriptedModelServer,
  home: string,
  options: RealCliEnvOptions = {},
): Promise<Record<string, string>> {
  const dir = join(home, '.gemini');
  await mkdir(dir, { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: {
      disableAutoUpdate: true,
      disableUpdateNag: true,
      ...(options.retries === undefined ? {} : { maxAttempts: options.retries + 1 }),
    },
  };
  await writeFile(join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  return { HOME: home, GEMINI_API_KEY: SCRIPTED_API_KEY, GOOGLE_GEMINI_BASE_URL: server.geminiBaseUrl };
}
