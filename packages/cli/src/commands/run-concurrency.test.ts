import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { FlagError, parseRunFlags } from './run-flags.js';
import { runSettings } from './run-options.js';

const settingsOf = (args: string[], config: Parameters<typeof runSettings>[1] = {}) =>
  runSettings(parseRunFlags(args, 'run').values, config, createRecordingIo('/tmp'), {});

describe('--concurrency N and the config key `concurrency`', () => {
  it('is absent unless given (the engine runs slices one at a time), and the flag beats the file', () => {
    expect(settingsOf(['goal']).concurrency).toBeUndefined();
    expect(settingsOf(['goal', '--concurrency', '4']).concurrency).toBe(4);
    expect(settingsOf(['goal'], { concurrency: 3 }).concurrency).toBe(3);
    expect(settingsOf(['goal', '--concurrency', '2'], { concurrency: 3 }).concurrency).toBe(2);
  });

  it('refuses anything but a whole number of at least 1, and refuses it for the loop modes', () => {
    for (const bad of ['0', '-1', '1.5', 'many'])
      expect(() => parseRunFlags(['goal', '--concurrency', bad], 'run')).toThrow(FlagError);
    expect(() => parseRunFlags(['--verify', 'npm test', '--concurrency', '2'], 'run')).toThrow(/concurrency/);
  });
});
