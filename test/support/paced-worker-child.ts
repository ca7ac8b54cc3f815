import { loadConfig } from '../../src/config';
import { startPacedWorker } from './payment-hub-fixture';

// A worker in a process of its own, paced by its parent (test/support/paced-worker-process.ts): the parent sets the
// clock the worker's use cases see and asks for passes over IPC, and may kill the process at any point with SIGKILL,
// as the operating system ends a worker that PM2 restarts. Started by the parent only.

type Message =
  | { type: 'start'; environment: Record<string, string>; now: string }
  | { type: 'clock'; now: string }
  | { type: 'tick'; id: number }
  | { type: 'stop' };

let now = new Date(0);
let running: Awaited<ReturnType<typeof startPacedWorker>> | undefined;

const send = (message: Record<string, unknown>) => process.send?.(message);

process.on('message', (message: Message) => {
  switch (message.type) {
    case 'start':
      now = new Date(message.now);
      startPacedWorker(loadConfig(message.environment), () => now).then(
        (started) => { running = started; send({ type: 'started' }); },
        (error: unknown) => send({ type: 'failed', error: String((error as Error)?.stack ?? error) }),
      );
      return;
    case 'clock':
      now = new Date(message.now);
      return;
    case 'tick':
      running!.tick().then(
        () => send({ type: 'ticked', id: message.id }),
        (error: unknown) => send({ type: 'tick_failed', id: message.id, error: String((error as Error)?.stack ?? error) }),
      );
      return;
    case 'stop':
      void (running ? running.stop(0) : Promise.resolve()).finally(() => process.exit(0));
      return;
  }
});

// The parent gone (a test ended abruptly): nothing is left running.
process.on('disconnect', () => process.exit(0));
