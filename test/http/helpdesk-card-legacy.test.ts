import { helpdeskCardScenarios } from './helpdesk-card-scenarios';

helpdeskCardScenarios('card_legacy', { hpos: false }, true);
