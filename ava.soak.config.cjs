// ava configuration for `npm run soak:money`: the money interleavings (test/payments/money-interleavings.test.ts),
// more of them than `npm test` runs, from a random seed (MONEY_SEED, MONEY_RUNS, MONEY_SOAK_SECONDS).
module.exports = {
  files: ['dist/test/payments/money-interleavings.test.js'],
  timeout: '60m',
  workerThreads: false,
};
