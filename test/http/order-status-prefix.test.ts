import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_prefix', { prefix: 'shop7_', hpos: true });
