// The template's jest.config.js, run in jest's ES module mode: jest loads packages with its own
// require(), which loads ES modules (klutch-kit) only from Node.js 24.9. On Node.js 20 and 22, run
// `npm test` (node --experimental-vm-modules …) with this file; on Node.js ≥ 24.9 the template's
// own jest.config.js and `jest` work as they are.
module.exports = {
  roots: ['<rootDir>'],
  moduleFileExtensions: ['ts', 'tsx', 'js', 'mjs', 'cjs', 'jsx', 'json', 'node'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { useESM: true, tsconfig: { module: 'ES2022', target: 'ES2022', strict: true, esModuleInterop: true, isolatedModules: true } }],
  },
};
