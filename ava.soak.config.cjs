// ava configuration for `npm run soak:money` (test/soak): randomised interleavings of what can happen to a failed
// renewal, run against the strict fakes, MariaDB and Redis. The main `npm test` leaves them out (see the README).
module.exports = {
  files: ['dist/test/soak/**/*.test.js'],
  timeout: '30m',
  workerThreads: false,
};
