import type { Argv } from 'yargs';
import { loadConfigOrExit } from '../../../config';
import { WORKER_GONE_AFTER_SECONDS, type WorkerRecord } from '../../../data-access/worker-repository';
import { LIST_FORMATS, outputOptions, printList, type FieldSet } from './output';
import { action, withHub } from './runtime';

/** How a worker is doing, in words: what the operator looks for first. */
function stateOf(worker: WorkerRecord): string {
  if (worker.stalledAt) return 'stalled';
  if (worker.seenSecondsAgo >= WORKER_GONE_AFTER_SECONDS) return 'gone';
  return worker.jobsInFlight ? 'working' : 'idle';
}

export const WORKER_LIST: FieldSet<WorkerRecord> = {
  fields: [
    { name: 'name', header: 'NAME', value: (w) => w.name },
    { name: 'host', header: 'HOST', value: (w) => w.host },
    { name: 'pid', header: 'PID', align: 'right', value: (w) => w.pid },
    { name: 'state', header: 'STATE', value: stateOf },
    { name: 'started_at', header: 'STARTED (UTC)', value: (w) => w.startedAt },
    { name: 'seen_seconds_ago', header: 'SEEN (S AGO)', align: 'right', value: (w) => Math.round(w.seenSecondsAgo) },
    { name: 'jobs_in_flight', header: 'IN FLIGHT', align: 'right', value: (w) => w.jobsInFlight },
    { name: 'jobs_finished', header: 'FINISHED', align: 'right', value: (w) => w.jobsFinished },
    { name: 'seconds_since_progress', header: 'SINCE PROGRESS (S)', align: 'right', value: (w) => (w.jobsInFlight ? Math.round(w.secondsSinceProgress) : 0) },
    { name: 'stalled_at', header: 'STALLED (UTC)', value: (w) => w.stalledAt },
    { name: 'stall_reason', header: 'WAITING FOR', maxWidth: 80, value: (w) => w.stallReason },
  ],
  tableDefault: ['name', 'host', 'pid', 'state', 'seen_seconds_ago', 'jobs_in_flight', 'jobs_finished', 'seconds_since_progress', 'stalled_at'],
};

/** `payment-hub workers list`: the worker processes heard from lately, and any the watchdog stopped in the last day (`--format=ids` prints their process IDs). */
export function workerCommands(y: Argv): Argv {
  return y
    .command('list', 'list the worker processes: state, jobs in hand, seconds since one finished, and why a stalled one was stopped',
      (c) => outputOptions(c, LIST_FORMATS, WORKER_LIST),
      action(async (argv) => {
        const config = loadConfigOrExit();
        const workers = await withHub(config, (hub) => hub.workers.recent());
        printList(workers.map((worker) => ({ ...worker, id: worker.pid })), WORKER_LIST, argv, 'no worker has reported in the last day');
      }))
    .demandCommand(1, 'name a workers command: list');
}
