// ava configuration for `npm run test:woocommerce` (test/woocommerce/run.sh): the tests that run real
// WordPress/WooCommerce/Subscriptions in PHP next to the service. The main `npm test` leaves them out.
module.exports = {
  files: ['dist/test/woocommerce/**/*.test.js'],
  timeout: '10m',
  workerThreads: false,
  concurrency: 2,
};
