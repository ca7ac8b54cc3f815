import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_legacy', {});
