import type { Config } from '../config';
import { databaseAddress } from '../data-access/data-source';

/** What is wrong with the database connection, as the operator fixes it: the setting, what was found, and the fix. */
export interface DatabaseProblem {
  /** The setting to look at first (DB_HOST, DB_PASSWORD, ...). */
  setting: string;
  detail: string;
  fix: string;
  /**
   * The server is not there (yet): a start waits for it, a check says it is down. Anything else is the
   * configuration's, which waiting does not mend.
   */
  unreachable: boolean;
}

/** MySQL's and MariaDB's error codes, and Node's socket errors, for the connection's first answers. */
const ACCESS_DENIED = ['ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'ER_DBACCESS_DENIED_ERROR'];
const NOT_THERE = ['ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ENOENT', 'EAI_AGAIN'];

/** The error's code, looked for down its causes (TypeORM and the pool wrap the driver's error). */
function codeOf(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at && depth < 5; depth += 1) {
    const { code, cause, errors } = at as { code?: unknown; cause?: unknown; errors?: unknown[] };
    if (typeof code === 'string') return code;
    at = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return undefined;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

/**
 * The one reading of a failed connection for `npm start`/`npm run reload`'s check, `doctor` and the processes'
 * start: the setting, and a fix that says what to do. A user is granted per host part: `'shop_sidecar'@'localhost'`
 * is a socket or `localhost` connection only, and a connection to 127.0.0.1 over TCP is another user to MariaDB.
 */
export function databaseProblem(error: unknown, db: Config['db']): DatabaseProblem {
  const code = codeOf(error);
  const where = databaseAddress(db);
  const message = messageOf(error);
  if (code && ACCESS_DENIED.includes(code)) {
    const host = /'@'([^']*)'/.exec(message)?.[1];
    const as = host ? `'${db.user}'@'${host}'` : `'${db.user}'`;
    if (code === 'ER_DBACCESS_DENIED_ERROR') {
      return {
        setting: 'DB_NAME', unreachable: false,
        detail: `${as} may not use the database ${db.name} at ${where}`,
        fix: `GRANT the service's privileges ON \`${db.name}\`.* TO ${as} (docs/operators-guide.md, "The database user"), or set DB_NAME to the shop's database`,
      };
    }
    return {
      setting: 'DB_PASSWORD', unreachable: false,
      detail: `the database at ${where} refused ${as}: ${message}`,
      // A mistyped password is the likeliest cause and is said first; a user made for another host comes after.
      fix: `check DB_PASSWORD first: it may be wrong (copy DB_PASSWORD from wp-config.php, or the password the user was created with); then DB_USER.`
        + ` If both are right, the user may exist only for another host: a user is granted per host, and this connection arrives as ${as}`
        + ` (create the user for that host, e.g. CREATE USER ${as} IDENTIFIED BY '…', or connect as the host it was created for: DB_HOST=localhost uses the socket)`,
    };
  }
  if (code === 'ER_BAD_DB_ERROR') {
    return { setting: 'DB_NAME', unreachable: false, detail: `no database ${db.name} at ${where}`, fix: 'set DB_NAME to the shop\'s database (DB_NAME in wp-config.php)' };
  }
  if (code === 'ENOTFOUND') {
    return { setting: 'DB_HOST', unreachable: false, detail: `the database host ${db.host} is not known to this machine`, fix: 'set DB_HOST to the database server\'s name or address (DB_HOST in wp-config.php)' };
  }
  if (code && NOT_THERE.includes(code)) {
    return {
      setting: 'DB_HOST', unreachable: true,
      detail: `no database server answers at ${where} (${code})`,
      fix: `start MariaDB (systemctl start mariadb), or set DB_HOST to where it listens`,
    };
  }
  return { setting: 'DB_HOST', unreachable: false, detail: `cannot use the database ${db.name} at ${where}: ${message}`, fix: 'check DB_HOST, DB_USER, DB_PASSWORD and DB_NAME against wp-config.php' };
}
