import { subscriptionSupportScenarios } from './subscription-support-scenarios';

subscriptionSupportScenarios('ss_hpos', { hpos: true });
