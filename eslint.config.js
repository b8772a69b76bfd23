import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The direction of dependencies (ARCHITECTURE.md "How the pieces talk", STYLE.md "Layout"), one rule per folder.
// Each pattern matches an import specifier in every relative form (`../store/x.js`, `../../src/store/x.js`).
const folder = (name, except) => ({
  regex: except ? `(^|/)${name}/(?!${except})` : `(^|/)${name}/`,
  message: `this folder may not import ${name}/: dependencies point inward (the rules are in eslint.config.js)`,
});
const file = (name) => ({ regex: `(^|/)${name}\\.js$`, message: `${name}.ts is for the composition root` });
// Only the composition root wires parts together; nothing below it reaches back up.
const compositionRoot = [folder('gateway'), folder('commands'), folder('demo'), file('cli')];
// Modules that perform I/O, kept out of the pure protocol code.
const io = ['node:fs', 'node:fs/promises', 'node:net', 'node:child_process', 'better-sqlite3', 'pg', 'undici', 'serialport', 'pino', 'prom-client'];
const restrict = (files, patterns, paths = []) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }] },
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-output/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly' } },
  },
  // Protocol drivers: pure codecs and state machines plus a thin runner; they reach the gateway only through the
  // neutral contracts (message.ts, runner-contract.ts, commit-path.ts, clock.ts, log.ts, transport/transport.ts).
  restrict(
    ['drivers/**/*.ts'],
    [folder('store'), folder('sinks'), folder('delivery'), folder('web'), folder('transport', 'transport\\.js$'), ...compositionRoot],
    io.map((name) => ({ name, message: 'protocol code does no I/O: the runner gets it injected' })),
  ),
  // The store owns SQLite and knows no driver, sink or drain: the delivery contract is all it shares with them.
  restrict(
    ['src/store/**/*.ts'],
    [folder('drivers'), folder('sinks'), folder('delivery', '[\\w-]*contract\\.js$'), folder('web'), folder('transport'), ...compositionRoot],
  ),
  // Sinks never touch the store: they get outbox rows and return outcomes (delivery/contract.ts).
  restrict(
    ['src/sinks/**/*.ts'],
    [folder('store'), folder('drivers'), folder('delivery', '[\\w-]*contract\\.js$'), folder('web'), folder('transport'), ...compositionRoot],
  ),
  // Delivery drives sinks through the contract alone and reads the store through the types of its outbox.
  restrict(['src/delivery/**/*.ts'], [folder('drivers'), folder('sinks'), folder('web'), folder('transport'), ...compositionRoot]),
  restrict(['src/transport/**/*.ts'], [folder('drivers'), folder('store'), folder('sinks'), folder('delivery'), folder('web'), ...compositionRoot]),
  restrict(['src/web/**/*.ts'], [folder('drivers'), folder('sinks'), ...compositionRoot]),
  restrict(['src/config/**/*.ts'], [folder('store'), folder('delivery'), folder('web'), ...compositionRoot]),
  // The order model and desk are protocol-neutral: they reach the LIMS and the store through the ports they are given.
  restrict(
    ['src/orders/**/*.ts'],
    [folder('drivers'), folder('store'), folder('sinks'), folder('delivery'), folder('web'), folder('transport'), ...compositionRoot],
    io.map((name) => ({ name, message: 'the order desk does no I/O of its own: its ports are injected' })),
  ),
  // The neutral contracts and pure models at the top of src/ import none of the parts that use them.
  restrict(
    [
      'message',
      'runner-contract',
      'commit-path',
      'clock',
      'log',
      'result',
      'result-*',
      'payload',
      'zoned-time',
      'junk-sampler',
      'errors',
      'delimited-text',
    ].map((name) => `src/${name}.ts`),
    [folder('drivers'), folder('store'), folder('sinks'), folder('delivery'), folder('web'), folder('transport', 'transport\\.js$'), ...compositionRoot],
  ),
);
