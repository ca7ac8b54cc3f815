import { orderStatusScenarios } from './order-status-scenarios';

orderStatusScenarios('os_seq_free', { sequentialPlugin: 'free' });
