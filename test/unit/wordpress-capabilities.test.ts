import test from 'ava';
import { defaultUserRolesOption, effectiveCapabilities, userCan, userRoles } from '../../src/wordpress/capabilities';
import { phpSerialize, phpUnserialize } from '../../src/wordpress/php-serialize';

const roles = defaultUserRolesOption();
const caps = (userCaps: Record<string, boolean | string | number>, rolesOption: string | null = roles): Set<string> =>
  effectiveCapabilities(phpSerialize(userCaps), rolesOption);

test('the default roles option holds the four roles', (t) => {
  const parsed = phpUnserialize(roles);
  t.true(parsed.ok);
  if (parsed.ok) t.deepEqual(Object.keys(parsed.value as object), ['administrator', 'subscriber', 'customer', 'shop_manager']);
});

test('role capabilities: shop managers and administrators manage WooCommerce, customers do not', (t) => {
  const shopManager = caps({ shop_manager: true });
  t.true(userCan(shopManager, 'manage_woocommerce'));
  t.true(userCan(shopManager, 'edit_shop_orders'));
  t.false(userCan(shopManager, 'manage_options'));
  t.true(userCan(caps({ administrator: true }), 'manage_woocommerce'));
  t.true(userCan(caps({ administrator: true }), 'manage_options'));
  const customer = caps({ customer: true });
  t.true(userCan(customer, 'read'));
  t.false(userCan(customer, 'manage_woocommerce'));
  t.false(userCan(customer, 'edit_shop_orders'));
});

test('a per-user grant adds a capability', (t) => {
  const set = caps({ customer: true, manage_woocommerce: true });
  t.true(userCan(set, 'manage_woocommerce'));
  t.false(userCan(set, 'edit_shop_orders'));
});

test('a per-user denial overrides the role', (t) => {
  const set = caps({ shop_manager: true, manage_woocommerce: false });
  t.false(userCan(set, 'manage_woocommerce'));
  t.true(userCan(set, 'edit_shop_orders'));
});

test('PHP truthiness decides: "0" and "" deny, 1 and "yes" grant', (t) => {
  t.false(userCan(caps({ customer: true, manage_woocommerce: '0' }), 'manage_woocommerce'));
  t.false(userCan(caps({ customer: true, manage_woocommerce: '' }), 'manage_woocommerce'));
  t.true(userCan(caps({ customer: true, manage_woocommerce: 1 }), 'manage_woocommerce'));
  t.true(userCan(caps({ customer: true, manage_woocommerce: 'yes' }), 'manage_woocommerce'));
});

test('role membership is the key, whatever its value (as in WP_User::get_role_caps)', (t) => {
  t.true(userCan(caps({ shop_manager: false }), 'manage_woocommerce'));
  t.deepEqual(userRoles(phpSerialize({ shop_manager: false, manage_woocommerce: true, ghost: true }), roles), ['shop_manager']);
});

test('later roles override earlier ones', (t) => {
  const rolesOption = phpSerialize({
    granting: { name: 'Granting', capabilities: { x: true } },
    denying: { name: 'Denying', capabilities: { x: false } },
  });
  t.false(userCan(caps({ granting: true, denying: true }, rolesOption), 'x'));
  t.true(userCan(caps({ denying: true, granting: true }, rolesOption), 'x'));
});

test('unknown roles, nameless roles and unreadable data grant nothing', (t) => {
  t.false(userCan(caps({ ghost: true }), 'manage_woocommerce'));
  const nameless = phpSerialize({ boss: { capabilities: { manage_woocommerce: true } } });
  t.false(userCan(caps({ boss: true }, nameless), 'manage_woocommerce'));
  t.deepEqual(effectiveCapabilities('a:1:{s:12:"shop_manager";O:8:"stdClass":0:{}}', roles), new Set());
  t.deepEqual(effectiveCapabilities('shop_manager', roles), new Set());
  t.deepEqual(effectiveCapabilities(null, roles), new Set());
  t.false(userCan(caps({ shop_manager: true }, null), 'manage_woocommerce'));
  t.false(userCan(caps({ shop_manager: true }, 'O:8:"WP_Roles":0:{}'), 'manage_woocommerce'));
});

test('exist is always granted and do_not_allow never', (t) => {
  t.true(userCan(new Set(), 'exist'));
  t.false(userCan(new Set(['do_not_allow']), 'do_not_allow'));
});
