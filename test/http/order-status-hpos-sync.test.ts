import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_hpos_sync', { hpos: true, sync: true });
