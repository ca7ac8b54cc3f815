/** How a staff request proved who it comes from. */
/** `helpdesk_card`: the agent the helpdesk's card names (Dixa's `{{agent_email}}`, under the card's own token). */
export type StaffCredential = 'api_key' | 'application_password' | 'cookie' | 'helpdesk_card';

/** A WordPress user the request is authenticated as, with the capabilities WordPress would give them. */
export interface StaffIdentity {
  userId: number;
  login: string;
  displayName: string;
  email: string;
  via: StaffCredential;
  capabilities: Set<string>;
}

/** Why a request is not authenticated (for the log; the answer is the same 401 whatever the reason). */
export type UnauthenticatedReason =
  | 'https_required'
  | 'no_credentials'
  | 'unknown_api_key'
  | 'bad_consumer_secret'
  | 'key_lacks_permission'
  | 'key_user_missing'
  | 'application_passwords_not_in_use'
  | 'unknown_user'
  | 'bad_application_password'
  | 'no_cookie'
  | 'malformed_cookie'
  | 'secrets_unavailable'
  | 'expired'
  | 'bad_hmac'
  | 'bad_session';

/** Why a verified logged-in cookie's nonce was refused: none sent, or not one of this user's, session's and action's last two ticks. */
export type NonceRefusal = 'no_nonce' | 'bad_nonce';

export type StaffAuthentication =
  | { kind: 'authenticated'; identity: StaffIdentity }
  | { kind: 'unauthenticated'; reason: UnauthenticatedReason }
  /**
   * The logged-in cookie is valid (user, session and HMAC verified) but the `wp_rest` nonce is missing, stale or
   * foreign: WordPress answers 403 `rest_cookie_invalid_nonce`, which makes `apiFetch` fetch a fresh one and retry.
   */
  | { kind: 'invalid_nonce'; userId: number; reason: NonceRefusal };

/** The capabilities the staff routes check (primitive WooCommerce capabilities). */
export const MANAGE_WOOCOMMERCE = 'manage_woocommerce';
export const EDIT_SHOP_ORDERS = 'edit_shop_orders';
