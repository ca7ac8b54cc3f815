import { preRenewalScenarios } from './pre-renewal-check-scenarios';

preRenewalScenarios('pre_renewal_check', { hpos: false });
