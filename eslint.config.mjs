import tseslint from 'typescript-eslint';
import { plugin as boundaries } from './tools/eslint/module-boundaries.mjs';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/out-tsc/**',
      '.nx/**',
      'examples/**',
      'tools/fake-agents/**',
      'tools/eslint/fixtures/**',
      '**/vitest.config.*.timestamp*',
    ],
  },
  {
    files: ['packages/*/src/**/*.ts'],
    extends: [tseslint.configs.strict],
    languageOptions: {
      parserOptions: {
        // The self-test lints virtual files at these paths (tools/eslint/boundaries-selftest.mjs).
        projectService: { allowDefaultProject: ['packages/*/src/__selftest__.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'allium-loop': boundaries },
    rules: {
      'allium-loop/module-boundaries': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          ignoreRestSiblings: true,
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='vi'][callee.property.name='mock']",
          message: 'Use fakes, not vi.mock.',
        },
      ],
    },
  },
);
