// PM2: the API in cluster mode (one process per core) and one worker.
// The worker's kill timeout is longer than its queue's graceful close (QUEUE_CLOSE_TIMEOUT_MS in
// src/entry-points/worker/main.ts, 30 s), so a job in progress finishes before PM2 kills the process.
module.exports = {
  apps: [
    {
      name: 'shop-sidecar-api',
      script: 'dist/src/entry-points/http/main.js',
      exec_mode: 'cluster',
      instances: 'max',
      node_args: '--disable-warning=DEP0111',
      env: { NODE_ENV: 'production' },
      wait_ready: true,
      listen_timeout: 10000,
      kill_timeout: 10000,
    },
    {
      name: 'shop-sidecar-worker',
      script: 'dist/src/entry-points/worker/main.js',
      exec_mode: 'fork',
      instances: 1,
      env: { NODE_ENV: 'production' },
      wait_ready: true,
      listen_timeout: 10000,
      kill_timeout: 40000,
    },
  ],
};
