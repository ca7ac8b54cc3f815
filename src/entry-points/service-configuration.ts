import { configurationErrorLine, readConfig, type Config } from '../config';
import { exitAfterLogging } from '../logger';

/**
 * The exit code of the API or the worker when it cannot start because of its configuration (EX_CONFIG of
 * sysexits.h). ecosystem.config.js lists it in stop_exit_codes: a restart would fail the same way, so PM2
 * leaves the app stopped with the reason as the last line of its log, instead of restarting it in a loop.
 */
export const CONFIGURATION_EXIT_CODE = 78;

/** The service's configuration, or the process ends with the line naming the setting, written to its own log first. */
export async function serviceConfigOrExit(): Promise<Config> {
  const reading = readConfig();
  if (!reading.ok) return exitAfterLogging(CONFIGURATION_EXIT_CODE, configurationErrorLine(reading.problem));
  for (const notice of reading.config.notices) process.stderr.write(`configuration: ${notice}\n`);
  return reading.config;
}
