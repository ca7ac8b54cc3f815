// ava configuration for `npm run soak:money`: the money interleavings (test/payments/money-interleavings-model.ts) in
// posts storage and in HPOS, each file its own shop, more of them than `npm test` runs, from a random seed
// (MONEY_SEED, MONEY_RUNS, MONEY_SOAK_SECONDS).
module.exports = {
  files: ['dist/test/payments/money-interleavings.test.js', 'dist/test/payments/money-interleavings-hpos.test.js'],
  // Each file is one test of up to MONEY_RUNS runs (10,000 take one to two hours): ava's timeout is the longest wait between results.
  timeout: '12h',
  workerThreads: false,
};
