import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * Where one connection's requests spend their time, for a program serving one request at a time
 * (`--require dist/bench/phases-probe.js` on the API or the bare program, load from one connection):
 * before the database statement is sent, the statement's round trip to its callback, from there to the
 * response finished, and from the response finished to the next request's start (the client's turn,
 * plus whatever the program still does after answering). Printed in µs per request on SIGTERM; the
 * first 3.5 s (start-up and warm-up) are left out.
 */
const now = () => Number(process.hrtime.bigint()) / 1000;
let started = 0;
let sent = 0;
let answered = 0;
let finished = 0;
let requests = 0;
let warm = false;
const sums = { beforeStatement: 0, statement: 0, afterStatement: 0, betweenRequests: 0 };
setTimeout(() => { warm = true; }, 3500).unref();

diagnosticsChannel.subscribe('http.server.request.start', () => {
  const at = now();
  if (warm && finished) sums.betweenRequests += at - finished;
  started = at;
});
diagnosticsChannel.tracingChannel('mysql2:query').subscribe({
  start() { sent = now(); },
  asyncStart() { answered = now(); },
  end() {},
  asyncEnd() {},
  error() {},
});
diagnosticsChannel.subscribe('http.server.response.finish', () => {
  finished = now();
  if (!warm || !started) return;
  requests += 1;
  sums.beforeStatement += sent - started;
  sums.statement += answered - sent;
  sums.afterStatement += finished - answered;
});
process.on('SIGTERM', () => {
  const perRequest = Object.fromEntries(Object.entries(sums).map(([phase, us]) => [phase, Math.round(us / Math.max(requests, 1))]));
  process.stderr.write(`${JSON.stringify({ phases: { requests, ...perRequest } })}\n`);
  process.exit(0);
});
