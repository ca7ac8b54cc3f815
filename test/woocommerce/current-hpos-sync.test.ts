import { serviceMatchesWooCommerce } from './service-matches-woocommerce';

serviceMatchesWooCommerce('current', 'hpos-sync');
