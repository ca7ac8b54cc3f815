import { serviceMatchesWooCommerce } from './service-matches-woocommerce';

serviceMatchesWooCommerce('current', 'posts');
