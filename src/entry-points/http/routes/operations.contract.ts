/** The operator's routes: health, metrics and this API's description. */
import { ref } from '../contract/answers';
import { error, json } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

export const healthContract = defineRoute({
  method: 'get',
  path: '/health',
  operation: {
    operationId: 'health',
    tags: ['Operations'],
    summary: 'Whether the database and Redis answer',
    security: [],
    responses: {
      200: { description: 'Both answer.', content: json(ref('Health')) },
      503: { description: 'The database or Redis does not answer (the same body, saying which).', content: json(ref('Health')) },
    },
  },
});

export const metricsContract = defineRoute({
  method: 'get',
  path: '/metrics',
  operation: {
    operationId: 'metrics',
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description: 'Only for client addresses in `METRICS_ALLOWED` (through a trusted proxy, the address it forwards for). '
      + 'Each API process\'s own series carry an `api_process` label; the shop-wide counts (webhooks, queue, dunning, WooCommerce hand-over) are read at scrape time.',
    security: [],
    responses: {
      200: { description: 'The metrics, in Prometheus\'s text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
      403: error(403, ['forbidden'], 'The client address is not in `METRICS_ALLOWED`.'),
    },
  },
});

export const openApiContract = defineRoute({
  method: 'get',
  path: '/openapi.json',
  operation: {
    operationId: 'openApiDocument',
    tags: ['Operations'],
    summary: 'This document',
    security: [],
    responses: { 200: { description: 'The OpenAPI 3.1 description of every route.', content: json({ type: 'object', required: ['openapi', 'paths'] }) } },
  },
});
