import { renewalDiscountScenarios } from './renewal-discounts-scenarios';

renewalDiscountScenarios('rd_hpos_sync', { hpos: true, sync: true });
