import { PaymentHub1795236800000 } from './1795236800000-payment-hub';
import { StaffRoutes1795323200000 } from './1795323200000-staff-routes';
import { WooCommerceChanges1795409600000 } from './1795409600000-woocommerce-changes';
import { RenewalDiscountApplication1795496000000 } from './1795496000000-renewal-discount-application';
import { WebhookMetricsIndex1795582400000 } from './1795582400000-webhook-metrics-index';
import { ExactExternalIds1795668800000 } from './1795668800000-exact-external-ids';
import { WebhookClaimToken1795755200000 } from './1795755200000-webhook-claim-token';
import { WorkerHeartbeats1795841600000 } from './1795841600000-worker-heartbeats';
import { Reconciliation1795928000000 } from './1795928000000-reconciliation';
import { DunningByReason1796014400000 } from './1796014400000-dunning-by-reason';
import { CardExpiryReminderPass1796100800000 } from './1796100800000-card-expiry-reminder-pass';
import { CustomerIndexSweepPace1796273600000 } from './1796273600000-customer-index-sweep-pace';
import { ReconcileOpenItemsIndex1796187200000 } from './1796187200000-reconcile-open-items-index';
import { ProviderRefusals1796360000000 } from './1796360000000-provider-refusals';
import { SecondCaptures1796361800000 } from './1796361800000-second-captures';
import { DunningStaffActions1796448000000 } from './1796448000000-dunning-staff-actions';
import { ChargeLedger1796534800000 } from './1796534800000-charge-ledger';
import { DunningHoldout1796620600000 } from './1796620600000-dunning-holdout';
import { WalletRetryDays1796621200000 } from './1796621200000-wallet-retry-days';
import { PreRenewalChecks1796622400000 } from './1796622400000-pre-renewal-checks';
import { ChargeInFlight1796708800000 } from './1796708800000-charge-in-flight';
import { OpenPaymentHandOvers1796795200000 } from './1796795200000-open-payment-hand-overs';

/**
 * The service's own schema changes, applied in order by `npm run migrate`. They only ever create
 * or change the service's own tables; WooCommerce's tables are left exactly as WooCommerce made them.
 */
export const serviceMigrations: Function[] = [
  PaymentHub1795236800000, StaffRoutes1795323200000, WooCommerceChanges1795409600000, RenewalDiscountApplication1795496000000,
  WebhookMetricsIndex1795582400000, ExactExternalIds1795668800000, WebhookClaimToken1795755200000, WorkerHeartbeats1795841600000,
  Reconciliation1795928000000, DunningByReason1796014400000, CardExpiryReminderPass1796100800000, CustomerIndexSweepPace1796273600000,
  ReconcileOpenItemsIndex1796187200000, ProviderRefusals1796360000000, SecondCaptures1796361800000, DunningStaffActions1796448000000,
  ChargeLedger1796534800000, DunningHoldout1796620600000, WalletRetryDays1796621200000, PreRenewalChecks1796622400000,
  ChargeInFlight1796708800000, OpenPaymentHandOvers1796795200000,
];
