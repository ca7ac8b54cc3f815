import fs from 'node:fs';
import { parseWpConfig, type WpConfigValue } from './wp-config-file';

/** The service's variable, and the wp-config.php constant WordPress itself uses for the same thing. */
const FROM_CONSTANTS: [variable: string, constant: string][] = [
  ['DB_NAME', 'DB_NAME'],
  ['DB_USER', 'DB_USER'],
  ['DB_PASSWORD', 'DB_PASSWORD'],
  ['DB_HOST', 'DB_HOST'],
  ['DB_CHARSET', 'DB_CHARSET'],
  ['MYSQL_CLIENT_FLAGS', 'MYSQL_CLIENT_FLAGS'],
  // Not a core constant: the CA file some hosts' db drop-ins define for TLS to the database.
  ['DB_SSL_CA', 'MYSQL_SSL_CA'],
  ['WP_LOGGED_IN_KEY', 'LOGGED_IN_KEY'],
  ['WP_LOGGED_IN_SALT', 'LOGGED_IN_SALT'],
  ['WP_NONCE_KEY', 'NONCE_KEY'],
  ['WP_NONCE_SALT', 'NONCE_SALT'],
  // SHOP_URL is the site URL (`siteurl`): WP_SITEURL, which wins over the option in WordPress too.
  ['SHOP_URL', 'WP_SITEURL'],
];

export interface WpConfigSettings {
  /** The service's variables as wp-config.php sets them. */
  values: Record<string, string>;
  /** What the file sets but could not be read without running it: `NAME (expression)`, for variables the environment does not set. */
  unreadable: string[];
}

/**
 * The settings the service shares with WordPress, read from the shop's wp-config.php (WP_CONFIG_FILE).
 * `environment` wins: a variable set there is taken as it is, and the file's value of it is not needed.
 * Null when the file cannot be read.
 */
export function wpConfigSettings(file: string, environment: Record<string, string | undefined>): WpConfigSettings | null {
  let source: string;
  try {
    source = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const parsed = parseWpConfig(source);
  const values: Record<string, string> = {};
  const unreadable: string[] = [];
  const set = (variable: string) => environment[variable] !== undefined && environment[variable] !== '';
  for (const [variable, constant] of FROM_CONSTANTS) {
    const value = parsed.constants.get(constant);
    if (value !== undefined) {
      const text = asText(value);
      if (text !== null) values[variable] = text;
    } else if (parsed.expressions.has(constant) && !set(variable)) {
      unreadable.push(`${constant} (${parsed.expressions.get(constant)})`);
    }
  }
  if (parsed.tablePrefix !== undefined) values.DB_TABLE_PREFIX = parsed.tablePrefix;
  else if (parsed.tablePrefixExpression !== undefined && !set('DB_TABLE_PREFIX')) unreadable.push(`$table_prefix (${parsed.tablePrefixExpression})`);
  return { values, unreadable };
}

/** A constant's value as PHP would turn it into a string; false and null define nothing usable. */
function asText(value: WpConfigValue): string | null {
  if (value === null || value === false) return null;
  if (value === true) return '1';
  return String(value);
}
