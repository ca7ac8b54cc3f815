import { pluginPaymentMetaScenarios } from './plugin-payment-metas-scenarios';

pluginPaymentMetaScenarios('plugin_metas_hpos', { hpos: true });
