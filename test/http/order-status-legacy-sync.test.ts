import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_legacy_sync', { hpos: false, sync: true });
