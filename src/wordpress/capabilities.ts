/**
 * A user's primitive capabilities as `WP_User::get_role_caps` and `WP_User::has_cap` compute them,
 * from the usermeta `{prefix}capabilities` and the option `{prefix}user_roles` (both serialized).
 */
import { isPhpArray, maybeUnserialize, phpGet, phpSerialize, type PhpArray, type PhpValue } from './php-serialize';

function readArray(serialized: string | null): PhpArray | null {
  if (serialized === null) return null;
  const parsed = maybeUnserialize(serialized);
  return parsed.ok && isPhpArray(parsed.value) ? parsed.value : null;
}

// Integer keys are renumbered by PHP's array_merge, so they never name a capability.
const INTEGER_KEY = /^(0|-?[1-9]\d*)$/;

/** PHP truthiness, i.e. !empty($value). */
function truthy(value: PhpValue | undefined): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value !== '' && value !== '0';
  return Object.keys(value).length > 0;
}

/** A role exists when the roles option has an entry for it with a name (WP_Roles::is_role). */
function roleCapabilities(roles: PhpArray, role: string): PhpArray | null {
  const entry = phpGet(roles, role);
  if (!isPhpArray(entry)) return null;
  const name = phpGet(entry, 'name');
  if (name === undefined || name === null) return null;
  const caps = phpGet(entry, 'capabilities');
  return isPhpArray(caps) ? caps : {};
}

/** The user's roles: keys of their capabilities array that name an existing role (whatever the value). */
export function userRoles(userCapsSerialized: string | null, rolesOptionSerialized: string | null): string[] {
  const userCaps = readArray(userCapsSerialized);
  const roles = readArray(rolesOptionSerialized);
  if (!userCaps || !roles) return [];
  return Object.keys(userCaps).filter((key) => roleCapabilities(roles, key) !== null);
}

/**
 * Role capabilities merged in the user's role order (a later role overrides an earlier one), then the
 * user's own entries on top, so a per-user `false` denies what a role grants. The set holds every
 * capability whose final value PHP would consider true.
 */
export function effectiveCapabilities(userCapsSerialized: string | null, rolesOptionSerialized: string | null): Set<string> {
  const userCaps = readArray(userCapsSerialized);
  if (!userCaps) return new Set();
  const roles = readArray(rolesOptionSerialized) ?? {};
  const all = new Map<string, PhpValue>();
  const merge = (caps: PhpArray): void => {
    for (const key of Object.keys(caps)) if (!INTEGER_KEY.test(key)) all.set(key, caps[key] as PhpValue);
  };
  for (const key of Object.keys(userCaps)) {
    const caps = roleCapabilities(roles, key);
    if (caps) merge(caps);
  }
  merge(userCaps);
  return new Set([...all].filter(([, value]) => truthy(value)).map(([key]) => key));
}

/**
 * `has_cap` for a primitive capability (such as `manage_woocommerce` or `edit_shop_orders`). Meta
 * capabilities and multisite super admins are not modelled.
 */
export function userCan(caps: Set<string>, capability: string): boolean {
  if (capability === 'exist') return true;
  if (capability === 'do_not_allow') return false;
  return caps.has(capability);
}

const WORDPRESS_ADMINISTRATOR = [
  'switch_themes', 'edit_themes', 'activate_plugins', 'edit_plugins', 'edit_users', 'edit_files', 'manage_options',
  'moderate_comments', 'manage_categories', 'manage_links', 'upload_files', 'import', 'unfiltered_html', 'edit_posts',
  'edit_others_posts', 'edit_published_posts', 'publish_posts', 'edit_pages', 'read', 'level_10', 'level_9', 'level_8',
  'level_7', 'level_6', 'level_5', 'level_4', 'level_3', 'level_2', 'level_1', 'level_0', 'edit_others_pages',
  'edit_published_pages', 'publish_pages', 'delete_pages', 'delete_others_pages', 'delete_published_pages', 'delete_posts',
  'delete_others_posts', 'delete_published_posts', 'delete_private_posts', 'edit_private_posts', 'read_private_posts',
  'delete_private_pages', 'edit_private_pages', 'read_private_pages', 'delete_users', 'create_users', 'unfiltered_upload',
  'edit_dashboard', 'update_plugins', 'delete_plugins', 'install_plugins', 'update_themes', 'install_themes', 'update_core',
  'list_users', 'remove_users', 'promote_users', 'edit_theme_options', 'delete_themes', 'export',
];

const WOOCOMMERCE_SHOP_MANAGER = [
  'level_9', 'level_8', 'level_7', 'level_6', 'level_5', 'level_4', 'level_3', 'level_2', 'level_1', 'level_0', 'read',
  'read_private_pages', 'read_private_posts', 'edit_posts', 'edit_pages', 'edit_published_posts', 'edit_published_pages',
  'edit_private_pages', 'edit_private_posts', 'edit_others_posts', 'edit_others_pages', 'publish_posts', 'publish_pages',
  'delete_posts', 'delete_pages', 'delete_private_pages', 'delete_private_posts', 'delete_published_pages',
  'delete_published_posts', 'delete_others_posts', 'delete_others_pages', 'manage_categories', 'manage_links',
  'moderate_comments', 'upload_files', 'export', 'import', 'list_users', 'edit_theme_options',
];

/** `WC_Install::get_core_capabilities()`, granted to administrator and shop_manager. */
export const WOOCOMMERCE_CORE_CAPABILITIES: readonly string[] = [
  'manage_woocommerce',
  'view_woocommerce_reports',
  ...['product', 'shop_order', 'shop_coupon'].flatMap((type) => [
    `edit_${type}`, `read_${type}`, `delete_${type}`, `edit_${type}s`, `edit_others_${type}s`, `publish_${type}s`,
    `read_private_${type}s`, `delete_${type}s`, `delete_private_${type}s`, `delete_published_${type}s`,
    `delete_others_${type}s`, `edit_private_${type}s`, `edit_published_${type}s`,
    `manage_${type}_terms`, `edit_${type}_terms`, `delete_${type}_terms`, `assign_${type}_terms`,
  ]),
];

function grants(names: readonly string[]): Record<string, boolean> {
  return Object.fromEntries(names.map((name) => [name, true]));
}

/**
 * The `{prefix}user_roles` option of a fresh WordPress + WooCommerce install, reduced to the roles
 * this service cares about. For tests and the demo.
 */
export function defaultUserRolesOption(): string {
  return phpSerialize({
    administrator: { name: 'Administrator', capabilities: grants([...WORDPRESS_ADMINISTRATOR, ...WOOCOMMERCE_CORE_CAPABILITIES]) },
    subscriber: { name: 'Subscriber', capabilities: grants(['read', 'level_0']) },
    customer: { name: 'Customer', capabilities: grants(['read']) },
    shop_manager: { name: 'Shop manager', capabilities: grants([...WOOCOMMERCE_SHOP_MANAGER, ...WOOCOMMERCE_CORE_CAPABILITIES]) },
  });
}
