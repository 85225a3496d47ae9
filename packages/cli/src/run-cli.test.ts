import { describe, expect, it } from 'vitest';
import { COMMANDS, createRecordingIo, runCli } from './index.js';

const run = async (...argv: string[]) => {
  const io = createRecordingIo('/tmp');
  const code = await runCli(argv, io, { version: '9.9.9' });
  return { code, out: io.out(), err: io.err() };
};

describe('runCli', () => {
  it('--help lists every command of the architecture with one line each', async () => {
    const { code, out } = await run('--help');
    expect(code).toBe(0);
    for (const name of [
      'run',
      'resume',
      'status',
      'answer',
      'plan',
      'verify',
      'spec',
      'report',
      'demo',
      'list',
    ]) {
      expect(out).toMatch(new RegExp(`^  ${name}\\b.*\\S\\s{2,}\\S`, 'm'));
    }
    expect(COMMANDS.map((command) => command.name)).toContain('demo');
  });

  it('--version and -v print the version', async () => {
    expect((await run('--version')).out).toBe('allium-loop 9.9.9\n');
    expect((await run('-v')).out).toBe('allium-loop 9.9.9\n');
  });

  it('an unknown command exits 2 and names it', async () => {
    const { code, err } = await run('frobnicate');
    expect(code).toBe(2);
    expect(err).toContain("unknown command 'frobnicate'");
  });

  it('an unknown global flag exits 2 with a clear message', async () => {
    const { code, err } = await run('--frobnicate');
    expect(code).toBe(2);
    expect(err).toContain("Unknown option '--frobnicate'");
  });

  it('no arguments prints the help on stderr and exits 2', async () => {
    const { code, err } = await run();
    expect(code).toBe(2);
    expect(err).toContain('Commands:');
  });
});
