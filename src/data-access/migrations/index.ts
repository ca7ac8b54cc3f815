import { PaymentHub1795236800000 } from './1795236800000-payment-hub';
import { StaffRoutes1795323200000 } from './1795323200000-staff-routes';

/**
 * The service's own schema changes, applied in order by `npm run migrate`. They only ever create
 * or change the service's own tables; WooCommerce's tables are left exactly as WooCommerce made them.
 */
export const serviceMigrations: Function[] = [PaymentHub1795236800000, StaffRoutes1795323200000];
