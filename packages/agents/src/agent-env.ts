/** Variables every agent gets when the parent has them: where to find programs, home, locale, temp dir. */
export const BASE_ENV_NAMES: readonly string[] = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];

/**
 * Builds an agent's minimal environment: the {@link BASE_ENV_NAMES}, then the adapter's own auth variables and
 * any names the user allowed, each copied by name from `source` when set. Nothing else of the engine's
 * environment reaches the agent.
 */
export function buildAgentEnv(
  source: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV_NAMES, ...names]) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
