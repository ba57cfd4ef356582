// Two projects: `unit` (fast, no processes) and `integration` (real kube-apiserver, etcd,
// kube-controller-manager built from Go modules; see runtime/realinfra).
const transform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, isolatedModules: true, tsconfig: 'tsconfig.json' }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform,
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
  // A test file that leaves process.exitCode set fails by name (else jest would exit non-zero unexplained).
  setupFilesAfterEnv: ['<rootDir>/test/support/exit-code-guard.ts'],
};
export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.test.ts'], testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // Builds (or reuses) etcd / kube-apiserver / kube-controller-manager; ends leftover processes at the end.
      globalSetup: '<rootDir>/test/realinfra/global-setup.js',
      globalTeardown: '<rootDir>/test/realinfra/global-teardown.js',
    },
  ],
};
