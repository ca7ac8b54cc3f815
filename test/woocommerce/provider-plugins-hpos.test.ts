import { providerPluginTests } from './provider-plugins';

providerPluginTests('hpos');
