import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_seq_pro_hpos', { hpos: true, sequentialPlugin: 'pro' });
