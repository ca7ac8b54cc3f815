import { providerPluginTests } from './provider-plugins';

providerPluginTests('posts');
