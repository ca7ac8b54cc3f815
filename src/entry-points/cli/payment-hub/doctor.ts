import type { Argv } from 'yargs';
import { readConfig } from '../../../config';
import { silentLogger } from '../../../logger';
import { checkInstallation, configurationCheck, nodeCheck, proxyCheck, redisCheck, withSkipped, type CheckResult } from '../../../installation/check-installation.use-case';
import { renderTable } from './format';
import { formatOf, outputOptions, RESULT_FORMATS } from './output';
import { action, DatabaseUnreachableError, EXIT_FAILED, EXIT_OK, printJson, printText, withHub } from './runtime';

/** `payment-hub doctor`: every check of the installation, each problem with its fix; exit 0 when none failed. */
export function doctorCommand(y: Argv) {
  return outputOptions(y, RESULT_FORMATS);
}

export const runDoctor = action(async (argv: { json?: boolean; format?: string }): Promise<number> => {
  const results = await diagnose();
  const failed = results.some((result) => result.status === 'fail');
  if (formatOf(argv) === 'json') {
    printJson({ ok: !failed, checks: results.map((result) => ({ check: result.check, status: result.status, detail: result.detail, fix: result.fix ?? null })) });
  } else {
    printText(renderTable(
      [{ header: 'CHECK' }, { header: 'STATUS' }, { header: 'DETAIL', wrapAt: 100 }],
      results.map((result) => [result.check, result.status.toUpperCase(), result.detail]),
    ));
    for (const result of results.filter((one) => one.fix && one.status !== 'ok')) printText(`${result.check}: fix: ${result.fix}`);
    const count = (status: string) => results.filter((result) => result.status === status).length;
    const warned = count('warn') ? ` (${count('warn')} warning${count('warn') > 1 ? 's' : ''})` : '';
    printText(failed ? `${count('fail')} check${count('fail') > 1 ? 's' : ''} failed${warned}` : `no check failed${warned}`);
  }
  return failed ? EXIT_FAILED : EXIT_OK;
});

async function diagnose(): Promise<CheckResult[]> {
  const reading = readConfig();
  if (!reading.ok) {
    return withSkipped([
      nodeCheck(),
      { check: 'configuration', status: 'fail', detail: reading.problem, fix: 'set it in the environment, .env or WP_CONFIG_FILE (see .env.example)' },
    ], 'needs a configuration that can be read (see configuration)');
  }
  const { config } = reading;
  try {
    // Doctor's own checks say what is wrong with Redis or a provider: the hub's log lines would only repeat it, out of place.
    return await withHub(config, (hub, dataSource) => checkInstallation(config, dataSource, hub), silentLogger);
  } catch (error) {
    if (!(error instanceof DatabaseUnreachableError)) throw error;
    // Without the database the shop and the service's tables cannot be looked at; what can be checked without it is.
    const problem = error.problem;
    return withSkipped([
      nodeCheck(),
      configurationCheck(config),
      proxyCheck(config),
      { check: 'database', status: 'fail', detail: `cannot connect to the database ${config.db.name}: ${problem.detail}`, fix: problem.fix },
      await redisCheck(config),
    ], 'needs the database (see database)');
  }
}
