import { loadConfigOrExit } from '../../config';

/**
 * `npm start` runs this before `pm2 start`: PM2 reports an app "launched" as soon as it has started the
 * process, and exits 0 whatever the app does next. A setting the API and the worker would refuse stops the
 * start here instead, with the line naming it and a non-zero exit, before PM2 launches anything. The
 * configuration is read as they read it (the environment, then `.env` in the working directory).
 */
loadConfigOrExit();
process.stdout.write('configuration: checked\n');
