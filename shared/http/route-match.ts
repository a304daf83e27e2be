/**
 * The route table as API Gateway matches it: by method and path, the most specific path first. The local host routes
 * by it, and the cloud's `$default` function (functions/system/not-found.ts) asks it which methods a path has, so a
 * wrong method is a 405 with `Allow` in both.
 */
import { methodNotAllowed, notFound, type Problem } from '#shared/http/problems';
import { type RouteDef, routes } from '#shared/routes';

interface CompiledRoute {
  route: RouteDef;
  pattern: RegExp;
  names: string[];
  /** Static segments first: `/nearest` wins over `/{driver_id}`, as API Gateway chooses the most specific route. */
  specificity: number[];
}

function compile(route: RouteDef): CompiledRoute {
  const names: string[] = [];
  const segments = route.path.split('/').filter(Boolean);
  const pattern = segments
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1]!);
      return '([^/]+)';
    })
    .join('/');
  return {
    route,
    // No optional trailing slash: API Gateway matches `/v1/me/` to no route.
    pattern: new RegExp(`^/${pattern}$`),
    names,
    specificity: segments.map((segment) => (segment.startsWith('{') ? 1 : 2)),
  };
}

function bySpecificity(a: CompiledRoute, b: CompiledRoute): number {
  for (let i = 0; i < Math.max(a.specificity.length, b.specificity.length); i++) {
    const diff = (b.specificity[i] ?? 0) - (a.specificity[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

const compiled = (routes as readonly RouteDef[]).map(compile).sort(bySpecificity);

/**
 * The route of a request path as API Gateway finds it: the path is percent-decoded first and matched after, so an
 * encoded `/` (`%2F`) in a parameter is a `/` that ends the segment (no route matches), and a malformed escape is
 * refused before any route (`malformed: true`).
 */
export function matchRoute(
  method: string,
  rawPath: string,
): {
  route?: RouteDef;
  params?: Record<string, string>;
  pathMatched?: boolean;
  malformed?: boolean;
  allowed?: string[];
} {
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return { route: undefined, pathMatched: false, malformed: true };
  }
  const allowed = new Set<string>();
  for (const candidate of compiled) {
    const match = candidate.pattern.exec(path);
    if (!match) continue;
    allowed.add(candidate.route.method);
    if (candidate.route.method !== method) continue;
    const params: Record<string, string> = {};
    candidate.names.forEach((name, i) => {
      params[name] = match[i + 1]!;
    });
    return { route: candidate.route, params };
  }
  return { route: undefined, pathMatched: allowed.size > 0, allowed: [...allowed].sort() };
}

/**
 * The answer to a request no route takes: a path the table knows under other methods is a 405 whose `Allow` names
 * them (RFC 9110 section 15.5.6), any other path a 404. The local host and the cloud's `$default` function both ask it.
 */
export function noRouteProblem(method: string, rawPath: string): Problem {
  const { allowed } = matchRoute(method, rawPath);
  return allowed && allowed.length > 0 ? methodNotAllowed(method, allowed) : notFound('operation');
}
