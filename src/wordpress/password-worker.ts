import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { checkApplicationPassword } from './passwords';

// The lowest CPU priority, for this thread alone (on Linux a thread's nice value is its own): when
// cores are scarce, requests on the main thread go first and sign-ins wait.
try {
  os.setPriority(0, 19);
} catch {
  // Not permitted here: the checks still run off the event loop.
}

/** A thread of PasswordCheckPool: checks one application password against one stored hash per message. */
parentPort?.on('message', (message: { id: number; password: string; hash: string }) => {
  checkApplicationPassword(message.password, message.hash).then(
    (ok) => parentPort?.postMessage({ id: message.id, ok }),
    () => parentPort?.postMessage({ id: message.id, ok: false }),
  );
});
