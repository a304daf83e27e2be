// GET /ops and GET /ops/assets/{file} in the cloud (public): the live operations page and the map library, whose
// files the bundle carries in ops-assets/ (copied from the leaflet package at bundling, see the API stack).
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { OPS_HEADERS, opsAsset, opsConfig, opsPage } from '#shared/ops/page';

const ASSETS = join(process.env['LAMBDA_TASK_ROOT'] ?? '.', 'ops-assets');

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  const file = event.pathParameters?.['file'];
  if (!file) return { statusCode: 200, headers: OPS_HEADERS, body: opsPage(opsConfig(event.queryStringParameters)) };
  const asset = await opsAsset(file, ASSETS);
  if (!asset) return { statusCode: 404, headers: { 'Content-Type': 'text/plain' }, body: 'Not Found' };
  return {
    statusCode: 200,
    headers: { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=3600' },
    body: asset.body.toString('base64'),
    isBase64Encoded: true,
  };
};
