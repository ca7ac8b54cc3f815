import { customerLookupScenarios } from './customer-lookup-scenarios';

customerLookupScenarios('cl_hpos_sync', { hpos: true, sync: true });
