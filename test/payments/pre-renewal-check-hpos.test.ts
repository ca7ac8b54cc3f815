import { preRenewalScenarios } from './pre-renewal-check-scenarios';

preRenewalScenarios('pre_renewal_hpos', { hpos: true });
