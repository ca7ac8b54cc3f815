// PM2: the API in cluster mode (one process per core) and one worker.
// The API's kill timeout (10 s) is longer than its stop: it stops listening, answers what is in progress
// with Connection: close, closes idle keep-alive sockets, cuts whatever still runs after
// SHUTDOWN_DEADLINE_MS (src/entry-points/http/graceful-shutdown.ts, 7 s), and exits by 9 s at the latest.
// The worker's kill timeout is longer than its queue's graceful close (QUEUE_CLOSE_TIMEOUT_MS in
// src/entry-points/worker/main.ts, 30 s), so a job in progress finishes before PM2 kills the process.
// Exit code 78 (CONFIGURATION_EXIT_CODE, src/entry-points/service-configuration.ts) means the app cannot start
// with its configuration: restarting would fail the same way, so PM2 leaves it stopped, the line naming the
// setting last in its log. `npm start` and `npm run reload` try the configuration for real before PM2 acts
// (src/installation/start-check.use-case.ts): a reload replaces the running instances after listen_timeout even
// when the new ones never become ready.
// wait_ready: a new process says 'ready' only once the database and Redis answer it (it waits for them at boot,
// src/entry-points/await-dependencies.ts), and a reload stops an old process only then, or after listen_timeout.
// Each app's log is its own: PM2_HOME/logs/<name>-out-<id>.log and <name>-error-<id>.log, all the service's
// lines in the error log (it logs on stderr); `pm2 logs <name>` shows them.
module.exports = {
  apps: [
    {
      name: 'shop-sidecar-api',
      script: 'dist/src/entry-points/http/main.js',
      exec_mode: 'cluster',
      instances: 'max',
      env: { NODE_ENV: 'production' },
      wait_ready: true,
      listen_timeout: 15000,
      kill_timeout: 10000,
      stop_exit_codes: [78],
    },
    {
      name: 'shop-sidecar-worker',
      script: 'dist/src/entry-points/worker/main.js',
      exec_mode: 'fork',
      instances: 1,
      env: { NODE_ENV: 'production' },
      wait_ready: true,
      listen_timeout: 15000,
      kill_timeout: 40000,
      stop_exit_codes: [78],
    },
  ],
};
