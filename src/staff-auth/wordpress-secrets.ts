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
  const constants = [configured.loggedInKey, configured.loggedInSalt, configured.nonceKey, configured.nonceSalt];
  const usable = (value: string | undefined): value is string =>
    value !== undefined && value !== '' && value !== PLACEHOLDER && constants.filter((other) => other === value).length === 1;
  const half = (constant: string | undefined, option: string | undefined) => (usable(constant) ? constant : option);
  const parts = [
    half(configured.loggedInKey, options.loggedInKey),
    half(configured.loggedInSalt, options.loggedInSalt),
    half(configured.nonceKey, options.nonceKey),
    half(configured.nonceSalt, options.nonceSalt),
  ];
  if (parts.some((part) => !part)) return null;
  return { loggedIn: `${parts[0]}${parts[1]}`, nonce: `${parts[2]}${parts[3]}` };
}
