import { describe, expect, it } from 'vitest';
import { classifyPath, globToRegExp, type PathRole } from './index.js';

describe('classifyPath', () => {
  it.each([
    ['src/index.ts', 'code'],
    ['lib/billing/invoice.rb', 'code'],
    ['cmd/server/main.go', 'code'],
    ['src/app.test.ts', 'test'],
    ['src/app.spec.tsx', 'test'],
    ['pkg/thing_test.go', 'test'],
    ['tests/test_orders.py', 'test'],
    ['test_orders.py', 'test'],
    ['src/test/java/OrderTest.java', 'test'],
    ['spec/models/order_spec.rb', 'test'],
    ['docs/snippet.js', 'doc'],
    ['README.md', 'doc'],
    ['vite.config.ts', 'config'],
    ['.eslintrc.js', 'config'],
    ['setup.py', 'config'],
    ['package.json', 'other'],
    ['billing.allium', 'other'],
    ['Makefile', 'other'],
  ] as [string, PathRole][])('%s is %s', (path, role) => {
    expect(classifyPath(path)).toBe(role);
  });
});

describe('globToRegExp', () => {
  it.each([
    ['**/*.allium', 'a.allium', true],
    ['**/*.allium', 'deep/er/a.allium', true],
    ['**/*.allium', 'a.allium.bak', false],
    ['*.allium', 'nested/a.allium', true],
    ['specs/*.allium', 'specs/a.allium', true],
    ['specs/*.allium', 'specs/x/a.allium', false],
    ['specs/**', 'specs/x/a.allium', true],
    ['./specs/?.allium', 'specs/a.allium', true],
    ['{spec,model}/*.allium', 'model/a.allium', true],
    ['{spec,model}/*.allium', 'other/a.allium', false],
    ['a+b/(c).allium', 'a+b/(c).allium', true],
  ] as [string, string, boolean][])('%s on %s → %s', (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });
});
