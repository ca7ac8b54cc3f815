import { staffPanelScenarios } from './staff-panels-scenarios';

staffPanelScenarios('panels_legacy', {});
