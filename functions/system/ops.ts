// GET /ops and GET /ops/assets/{file} in the cloud (public): the live operations page, its script and style sheet
// and the map library, whose files the bundle carries in ops-assets/ (copied at bundling, see the realtime stack);
// and GET /track/{token}, a recipient's tracking page (contract 4.11), whose script and styles are assets too.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { notFound } from '#shared/http/problems';
import { problemAsReply, toResult } from '#shared/http/responses';
import { OPS_ASSET_HEADERS, opsAsset, opsConfig, opsPage, opsPageHeaders } from '#shared/ops/page';
import { trackingPage, trackingPageHeaders } from '#shared/tracking/page';

const ASSETS = join(process.env['LAMBDA_TASK_ROOT'] ?? '.', 'ops-assets');
// Read and checked at cold start: a tile URL that is not one fails here, not in a dispatcher's browser.
const CONFIG = opsConfig();
const PAGE = opsPage(CONFIG);
const PAGE_HEADERS = opsPageHeaders(CONFIG);
const TRACKING_PAGE = trackingPage();
const TRACKING_HEADERS = trackingPageHeaders(CONFIG);

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  if (event.pathParameters?.['token']) return { statusCode: 200, headers: TRACKING_HEADERS, body: TRACKING_PAGE };
  const file = event.pathParameters?.['file'];
  if (!file) return { statusCode: 200, headers: PAGE_HEADERS, body: PAGE };
  const asset = await opsAsset(file, ({ name }) => join(ASSETS, name));
  if (!asset) {
    const requestId = event.requestContext?.requestId ?? randomUUID();
    return toResult(problemAsReply(notFound('asset'), requestId), requestId);
  }
  return {
    statusCode: 200,
    headers: { ...OPS_ASSET_HEADERS, 'Content-Type': asset.type },
    body: asset.body.toString('base64'),
    isBase64Encoded: true,
  };
};
