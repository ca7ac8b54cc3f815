import { loadConfigOrExit } from '../../config';

/**
 * `npm start` and `npm run reload` run this before PM2 acts. PM2 reports an app "launched" as soon as it has
 * started the process, and exits 0 whatever the app does next; a reload replaces the running instances even
 * when the new ones exit at once, so a bad setting in `.env` would take the whole service down. A setting the
 * API and the worker would refuse stops the command here instead, with the line naming it and a non-zero
 * exit, before PM2 launches or replaces anything. The configuration is read as they read it (the environment,
 * then `.env` in the working directory).
 */
loadConfigOrExit();
process.stdout.write('configuration: checked\n');
