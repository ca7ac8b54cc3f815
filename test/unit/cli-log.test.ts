import test from 'ava';
import { cliLogger, logVerbosely } from '../../src/entry-points/cli/payment-hub/runtime';

// payment-hub's log: its output says what a command did, so of the events its work logs only an error is written
// (one plain line on stderr, secrets censored as in the service's log); `--verbose` writes every one as JSON.

function stderrOf(work: () => void): string {
  const write = process.stderr.write;
  let written = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    work();
  } finally {
    process.stderr.write = write;
  }
  return written;
}

test('Without --verbose, info and warning events are not written, and an error is one plain line with its fields, secrets censored', (t) => {
  logVerbosely(false);
  t.is(stderrOf(() => {
    cliLogger.info('queue_available');
    cliLogger.warn('webhook_failed', { id: 7, willRetry: false, error: 'reading invoice inv-1: HTTP 401' });
  }), '');
  t.is(stderrOf(() => cliLogger.error('charge_taken_after_cancel', { orderId: 12, provider: 'mobile_wallet', externalId: 'chr-7', reason: 'order_completed', token: 'abc' })),
    'payment-hub: error charge_taken_after_cancel: orderId=12 provider=mobile_wallet externalId=chr-7 reason=order_completed token=[redacted]\n');
  t.is(stderrOf(() => cliLogger.error('unwanted_charge_cancel_failed', { paymentId: 3, error: new Error('socket hang up'), detail: { status: 502 } })),
    'payment-hub: error unwanted_charge_cancel_failed: paymentId=3 error=socket hang up detail={"status":502}\n', 'the message without the stack');
});
