// ESLint flat config: `npm run lint`. typescript-eslint's recommended rules without type
// information (fast enough for CI on two cores; `npm run typecheck` does the type checks), plus a
// few project rules. Generated code (imports/*.ts from `cdk8s import`) and build output are skipped.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', '.cache/', 'lib/', 'docs/api/', 'dist/', 'coverage/', 'cjs/', 'imports/**/*.ts', 'tools/', '**/.pulumi-state/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        // Node.js globals used across the tree (no `globals` package needed for this short list).
        process: 'readonly',
        Buffer: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        fetch: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        performance: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
      },
    },
    rules: {
      // Kubernetes objects and YAML are untyped at the edges; `any` there is deliberate.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `catch {}` and `() => {}` as no-op handlers are common and intended.
      'no-empty': ['error', { allowEmptyCatch: true }],
      '@typescript-eslint/no-empty-function': 'off',
      // `interface FooProps extends BarProps {}` names a construct's props, as aws-cdk-lib does.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Wrap a caught error with `new Error(msg, { cause: e })`; a warning, so it never blocks CI.
      'preserve-caught-error': 'warn',
      // A `let` read by a closure before its single assignment stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'no-var': 'error',
    },
  },
  // Layers (CONTRIBUTING "Layout"): the runtime programs import the contract, never the constructs;
  // the contract imports neither side. Static imports only: test/layers.test.ts also catches dynamic
  // `import()`, the few runtime tools that drive the constructs on purpose, and contract literals
  // (the binder role name, the group names) written outside contract/.
  {
    files: ['runtime/{core,backend,konnector,kubectl-bind,image,xpkg}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/constructs/**', 'cdk8s', 'cdk8s-plus-*'],
              message: 'the runtime imports nothing from constructs/ (or cdk8s): move what both sides need into contract/ and import it from there',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/constructs/**', '**/runtime/**', '**/stacks/**', 'cdk8s', 'cdk8s-plus-*', 'constructs', '@pulumi/*'],
              message: 'the contract depends on neither side: no constructs/, runtime/, stacks/, cdk8s or Pulumi',
            },
          ],
        },
      ],
    },
  },
);
