import test from 'ava';
import { createLogger } from '../../src/logger';

function capture() {
  const lines: Record<string, any>[] = [];
  const log = createLogger({ write(chunk: string) { for (const text of chunk.split('\n').filter(Boolean)) lines.push(JSON.parse(text)); } });
  return { log, lines };
}

test('When a line carries secrets at the top or one level down, Then they are censored and everything else is written as given', (t) => {
  const { log, lines } = capture();
  const config = { host: 'db', password: 'hunter2', nested: { apiSecret: 'deeper' } };
  const headers = { authorization: 'Basic abc', cookie: 'wordpress_logged_in=x', accept: 'application/json' };
  log.info('configured', { config, headers, token: 't0k3n', user: 'anna', count: 3 });
  t.like(lines[0], {
    event: 'configured', level: 'info', user: 'anna', count: 3, token: '[redacted]',
    config: { host: 'db', password: '[redacted]', nested: { apiSecret: 'deeper' } },
    headers: { authorization: '[redacted]', cookie: '[redacted]', accept: 'application/json' },
  });
  t.false(JSON.stringify(lines[0]).includes('hunter2'));
  // The caller's objects are left as they were.
  t.is(config.password, 'hunter2');
  t.is(headers.authorization, 'Basic abc');
});

test('When a line carries no secret, Then it is written as given, with its time and level', (t) => {
  const { log, lines } = capture();
  log.warn('http_request', { requestId: 'r1', method: 'POST', route: '/x', status: 200, list: [{ password: 'in an array is not one level down' }] });
  t.like(lines[0], { event: 'http_request', level: 'warn', requestId: 'r1', method: 'POST', route: '/x', status: 200 });
  t.regex(lines[0].time, /^\d{4}-\d{2}-\d{2}T/);
});

test('When an error is logged, Then its message and stack are written', (t) => {
  const { log, lines } = capture();
  log.error('failed', { error: new Error('boom') });
  t.is(lines[0].error, 'boom');
  t.regex(lines[0].stack, /Error: boom/);
});

test('When a line holds a cycle or a BigInt, Then it is still written, with the cycle marked and the BigInt as text', (t) => {
  const { log, lines } = capture();
  const node: Record<string, unknown> = { name: 'a' };
  node.self = node;
  log.info('odd_fields', { node, big: 12345678901234567890n });
  t.like(lines[0], { event: 'odd_fields', level: 'info', big: '12345678901234567890', node: { name: 'a', self: '[Circular]' } });
});

test('When a line is written without fields, or with a request ID of its own, Then it has the level, time and event, and one request ID', (t) => {
  const { log, lines } = capture();
  log.warn('bare_event');
  t.deepEqual(Object.keys(lines[0]), ['level', 'time', 'event']);
  log.info('with_id', { requestId: 'given' });
  t.is(lines[1].requestId, 'given');
});
