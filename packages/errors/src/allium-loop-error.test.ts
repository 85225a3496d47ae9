import { describe, expect, it } from 'vitest';
import { AlliumLoopError, err, formatError, ok } from './index.js';

class LedgerCorrupt extends AlliumLoopError {}

describe('AlliumLoopError', () => {
  it('keeps code, retryable, cause and context', () => {
    const cause = new Error('disk said no');
    const error = new LedgerCorrupt('ledger is corrupt', {
      code: 'ledger.corrupt',
      cause,
      context: { file: '/x.json' },
      hint: 'restore the backup',
    });
    expect(error.code).toBe('ledger.corrupt');
    expect(error.retryable).toBe(false);
    expect(error.cause).toBe(cause);
    expect(error.context).toEqual({ file: '/x.json' });
    expect(error.name).toBe('LedgerCorrupt');
  });

  it('is() recognises branded errors and rejects look-alikes', () => {
    expect(AlliumLoopError.is(new AlliumLoopError('x', { code: 'a.b', retryable: true }))).toBe(true);
    expect(AlliumLoopError.is(Object.assign(new Error('x'), { code: 'a.b' }))).toBe(false);
    expect(AlliumLoopError.is(null)).toBe(false);
  });

  it('formatError prints the hint and the cause chain', () => {
    const error = new AlliumLoopError('outer', { code: 'x.y', cause: new Error('inner'), hint: 'do this' });
    expect(formatError(error)).toBe('outer\n  do this\n  caused by: inner');
  });
});

describe('Result', () => {
  it('ok and err build the two shapes', () => {
    expect(ok(3)).toEqual({ ok: true, value: 3 });
    expect(err(['bad'])).toEqual({ ok: false, issues: ['bad'] });
  });
});
