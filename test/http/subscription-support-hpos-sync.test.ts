import { subscriptionSupportScenarios } from './subscription-support-scenarios';

subscriptionSupportScenarios('ss_hpos_sync', { hpos: true, sync: true });
