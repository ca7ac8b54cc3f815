import { customerLookupScenarios } from './customer-lookup-scenarios';

customerLookupScenarios('cl_legacy_sync', { sync: true });
