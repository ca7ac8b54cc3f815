import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { COMPANION_DIR } from '../support/companion-translations';

// The companion states its version twice: in its plugin header (what WordPress's plugin list shows) and in
// SHOP_SIDECAR_COMPANION_VERSION, which it announces to the service (`payment-hub woocommerce status`).

test('The companion\'s plugin header states the version it announces to the service', (t) => {
  const header = fs.readFileSync(path.join(COMPANION_DIR, '../shop-sidecar-companion.php'), 'utf8').match(/^ \* Version: (\S+)$/m)?.[1];
  const announced = fs.readFileSync(path.join(COMPANION_DIR, 'includes/woocommerce-changes.php'), 'utf8').match(/^const SHOP_SIDECAR_COMPANION_VERSION = (\d+);$/m)?.[1];
  t.truthy(announced);
  t.is(header, announced);
});
