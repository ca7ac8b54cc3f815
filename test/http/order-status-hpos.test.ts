import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_hpos', { hpos: true });
