import type { Config } from '../config';
import type { WordPressSiteOptions } from '../data-access/wordpress-user-repository';

/** `wp_salt('logged_in')` and `wp_salt('nonce')`: each is KEY . SALT. */
export interface WordPressSecrets {
  loggedIn: string;
  nonce: string;
}

const PLACEHOLDER = 'put your unique phrase here';

/**
 * `wp_salt()` for the two schemes the service verifies. Each half comes from its wp-config constant
 * (here WP_LOGGED_IN_KEY and friends) when that is usable, otherwise from the site option WordPress
 * generated (`logged_in_key`, ...). Like WordPress, a constant left at the sample phrase or equal to
 * another constant is not usable. Null when a half is missing everywhere: nothing can be verified then.
 */
export function resolveWordPressSecrets(configured: Config['wordpressSecrets'], options: WordPressSiteOptions): WordPressSecrets | null {
  const [loggedInKey, loggedInSalt, nonceKey, nonceSalt] = secretHalves(configured, options);
  if (!loggedInKey || !loggedInSalt || !nonceKey || !nonceSalt) return null;
  return { loggedIn: `${loggedInKey}${loggedInSalt}`, nonce: `${nonceKey}${nonceSalt}` };
}

/** The secrets WordPress generated as site options, when its wp-config.php does not define them. */
type GeneratedSecrets = Pick<WordPressSiteOptions, 'loggedInKey' | 'loggedInSalt' | 'nonceKey' | 'nonceSalt'>;

/** `wp_salt('logged_in')` alone (the hand-over's key is derived from it), or the halves missing everywhere. */
export function resolveLoggedInSecret(configured: Config['wordpressSecrets'], options: GeneratedSecrets): { secret: string } | { missing: ('LOGGED_IN_KEY' | 'LOGGED_IN_SALT')[] } {
  const [loggedInKey, loggedInSalt] = secretHalves(configured, options);
  if (loggedInKey && loggedInSalt) return { secret: `${loggedInKey}${loggedInSalt}` };
  return { missing: [...(loggedInKey ? [] : ['LOGGED_IN_KEY' as const]), ...(loggedInSalt ? [] : ['LOGGED_IN_SALT' as const])] };
}

/** LOGGED_IN_KEY, LOGGED_IN_SALT, NONCE_KEY, NONCE_SALT as WordPress would use them. */
function secretHalves(configured: Config['wordpressSecrets'], options: GeneratedSecrets): (string | undefined)[] {
  const constants = [configured.loggedInKey, configured.loggedInSalt, configured.nonceKey, configured.nonceSalt];
  const usable = (value: string | undefined): value is string =>
    value !== undefined && value !== '' && value !== PLACEHOLDER && constants.filter((other) => other === value).length === 1;
  const half = (constant: string | undefined, option: string | undefined) => (usable(constant) ? constant : option);
  return [
    half(configured.loggedInKey, options.loggedInKey),
    half(configured.loggedInSalt, options.loggedInSalt),
    half(configured.nonceKey, options.nonceKey),
    half(configured.nonceSalt, options.nonceSalt),
  ];
}
