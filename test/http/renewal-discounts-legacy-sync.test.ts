import { renewalDiscountScenarios } from './renewal-discounts-scenarios';

renewalDiscountScenarios('rd_legacy_sync', { sync: true });
