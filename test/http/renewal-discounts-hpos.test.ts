import { renewalDiscountScenarios } from './renewal-discounts-scenarios';

renewalDiscountScenarios('rd_hpos', { hpos: true });
