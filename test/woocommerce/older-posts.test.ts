import { serviceMatchesWooCommerce } from './service-matches-woocommerce';

serviceMatchesWooCommerce('older', 'posts');
