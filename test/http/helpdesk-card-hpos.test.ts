import { helpdeskCardScenarios } from './helpdesk-card-scenarios';

helpdeskCardScenarios('card_hpos', { hpos: true });
