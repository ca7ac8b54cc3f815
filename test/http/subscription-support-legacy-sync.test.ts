import { subscriptionSupportScenarios } from './subscription-support-scenarios';

subscriptionSupportScenarios('ss_legacy_sync', { sync: true });
