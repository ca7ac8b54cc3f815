import { configurationErrorLine, readConfig, settingRefusedLine } from '../../config';
import { checkBeforeStart, type StartCheckPurpose } from '../../installation/start-check.use-case';
import { CONFIGURATION_EXIT_CODE } from '../service-configuration';

/**
 * `npm start` and `npm run reload` run this before PM2 acts (`check-configuration.js start|reload`). PM2 reports
 * an app "launched" as soon as it has started the process, and a reload replaces the running instances after
 * `listen_timeout` even when the new ones never become ready, so a setting that cannot run would take the whole
 * service down. The configuration is read as the API and the worker read it (the environment, then `.env` in
 * the working directory) and tried for real (src/installation/start-check.use-case.ts); anything that would
 * stop the service ends the command here with one line naming the setting and its fix, and a non-zero exit,
 * before PM2 launches or replaces anything.
 */
async function main(): Promise<number> {
  const purpose: StartCheckPurpose = process.argv[2] === 'reload' ? 'reload' : 'start';
  const reading = readConfig();
  const kept = purpose === 'reload' ? ' The running processes were left as they are.' : ' Nothing was started.';
  if (!reading.ok) {
    // As every refusal here: what is wrong, the fix, and what became of the running service.
    const fix = reading.fix ?? 'correct it in .env (or the environment), then run the command again';
    process.stderr.write(`${configurationErrorLine(reading.problem)}. Fix: ${fix}.${kept}\n`);
    return CONFIGURATION_EXIT_CODE;
  }
  const outcome = await checkBeforeStart(reading.config, purpose);
  for (const warning of outcome.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (outcome.refusal) {
    process.stderr.write(`${settingRefusedLine(outcome.refusal)}.${kept}\n`);
    return CONFIGURATION_EXIT_CODE;
  }
  process.stdout.write(`configuration: checked: ${[...outcome.checked].join('; ') || 'settings'}\n`);
  return 0;
}

// Exits at once: a provider client's keep-alive socket must not hold the command open (stdout and stderr are
// written synchronously to files and pipes on Linux).
main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`configuration check failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
