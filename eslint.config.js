// ESLint for servegate: typescript-eslint's recommended rules, formatting left to Prettier
// (eslint-config-prettier turns off the rules it owns), and the pure stages kept off the clock
// and the process. The import direction itself is dependency-cruiser's (.dependency-cruiser.cjs).
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

const PURE = ['src/metrics/**/*.ts', 'src/analysis/**/*.ts', 'src/gate/**/*.ts', 'src/report/**/*.ts']

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.scratch/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // servegate strips control and bidi characters from what servers say before it prints them:
      // those regular expressions name control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests edit parsed JSON files field by field to make them malformed; `any` is the honest type there.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.cjs'],
    // CommonJS by design (dependency-cruiser reads it with require): require is how it imports.
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Pure stages: everything they know comes in as data, so they are tested exhaustively and replay exactly.
    files: PURE,
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'A pure stage takes what it needs as parameters; the process is an edge (cli, github, env).' },
        { name: 'setTimeout', message: 'A pure stage has no clock.' },
        { name: 'setInterval', message: 'A pure stage has no clock.' },
        { name: 'setImmediate', message: 'A pure stage has no clock.' },
        { name: 'performance', message: 'A pure stage has no clock: take the time as a parameter.' },
        { name: 'fetch', message: 'A pure stage does no network I/O; the client is an edge.' },
        { name: 'console', message: 'A pure stage returns text; the edges print it.' },
      ],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'A pure stage has no clock: take the time as a parameter.' }],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'A pure stage has no clock: take the time as a parameter.' },
      ],
    },
  },
  prettier,
)
