/**
 * The service's own schema changes, applied in order by `npm run migrate`. They only ever create
 * or change the service's own tables; WooCommerce's tables are left exactly as WooCommerce made them.
 */
export const serviceMigrations: Function[] = [];
