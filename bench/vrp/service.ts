/**
 * Route planning through the service's own path, for the routing benchmarks: a planner of a fresh organisation on the
 * bench host imports a tasks CSV with coordinates and service seconds (I1, upload, I4b, I6), reads the tasks back
 * (X10), makes a planning (P2) and builds routes on it (X23, then X24 polled until the build ends). Only the planner
 * is seeded through the domain; every other step is an HTTP call.
 */
import { startBenchHost } from '../host.ts';
import { call, type Json } from '../http.ts';
import type { ListedTask } from './checker.ts';

export interface RouteBuild {
  id: string;
  status: 'queued' | 'solving' | 'completed' | 'failed';
  progress?: { best_distance_m: number; elapsed_ms: number } | null;
  result?: import('./checker.ts').RouteBuildResult | null;
  error?: { code: string; detail: string } | null;
}

/** A planner on the bench host (one organisation per session) and the calls the routing benchmarks make. */
export async function routingSession(name: string) {
  const host = await startBenchHost(name);
  const base = host.url;
  const { createOrganisation } = await import('#shared/accounts/organisations');
  const { createUser, currentTokenGeneration } = await import('#shared/accounts/users');
  const { issueBearerToken } = await import('#shared/auth/tokens');
  const org = await createOrganisation({ name: `Routing ${name}`, kind: 'transporter' });
  const user = await createUser({
    email: `planner.${org.id.slice(0, 8)}@bench.example`,
    name: 'Planner',
    roles: ['OrgAdmin'],
    org_id: org.id,
    confirmed_at: new Date().toISOString(),
  });
  const token = (
    await issueBearerToken(
      { kind: 'user', id: user.id, roles: ['OrgAdmin'], orgId: org.id },
      (await currentTokenGeneration(user.id)) ?? 1,
    )
  ).bearer_token;

  const must = async <T = Json>(method: string, path: string, body?: unknown): Promise<T> => {
    const reply = await call(base, method, path, token, body);
    if (reply.status === 0 || reply.status >= 300)
      throw new Error(`${method} ${path} → ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body as T;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** Imports a tasks CSV as one job of `serviceType`; answers the job's id and its tasks (X10, every page). */
  async function importTasks(
    csv: string,
    serviceType = 'van_1.7m',
    range = { start: '2026-12-01T00:00:00Z', end: '2026-12-08T00:00:00Z' },
  ) {
    const link = await must<{ file: { url: string; storage_upload_key: string } }>(
      'GET',
      '/v1/task-import-jobs/upload-url?filename=routing.csv',
    );
    const put = await fetch(link.file.url, { method: 'PUT', body: csv, headers: { 'content-type': 'text/csv' } });
    if (put.status !== 200) throw new Error(`the upload answered ${put.status}`);
    const job = await must<{ id: string }>('POST', '/v1/task-import-jobs', {
      files: [{ storage_upload_key: link.file.storage_upload_key }],
      start_timezone: 'UTC',
      start_time: range.start,
      end_timezone: 'UTC',
      end_time: range.end,
      service_type: serviceType,
    });
    await must('POST', `/v1/task-import-jobs/${job.id}/start`, {});
    for (;;) {
      const { import_status } = await must<{ import_status: string }>('GET', `/v1/task-import-jobs/${job.id}/status`);
      if (import_status === 'completed') break;
      if (import_status === 'failed') throw new Error(`the import of ${name} failed`);
      await pause(200);
    }
    const result = await must<{ total_tasks_imported?: number; errors?: string[] }>(
      'GET',
      `/v1/task-import-jobs/${job.id}/result`,
    );
    if (result.errors?.length) throw new Error(`the import rejected rows: ${result.errors.slice(0, 3).join('; ')}`);
    const tasks: (ListedTask & { task_ref: string })[] = [];
    let pageToken: string | null = null;
    do {
      const page: { tasks: (ListedTask & { task_ref: string })[]; meta: { next_page_token: string | null } } =
        await must(
          'GET',
          `/v1/tasks?import_job_id=${job.id}&order=asc&per_page=1000${pageToken ? `&page_token=${encodeURIComponent(pageToken)}` : ''}`,
        );
      tasks.push(...page.tasks);
      pageToken = page.meta.next_page_token;
    } while (pageToken);
    return { importJobId: job.id, tasks };
  }

  async function newPlanning(planningName: string) {
    const planning = await must<{ id: string }>('POST', '/v1/plannings', { name: planningName });
    const { version_rev } = await must<{ version_rev: string }>('GET', `/v1/plannings/${planning.id}`);
    return { id: planning.id, versionRev: version_rev };
  }

  /**
   * X23 (or X30: `path` `routes/insertions`), then X24 every `pollMs` until the build completes or fails: the build as last read, the wall time from the
   * request to the answer that showed its end, and the best distance each progress report gave.
   */
  async function build(planningId: string, body: Json, pollMs = 250, path: 'routes' | 'routes/insertions' = 'routes') {
    const started = performance.now();
    const { route_build } = await must<{ route_build: RouteBuild }>(
      'POST',
      `/v1/plannings/${planningId}/${path}`,
      body,
    );
    const progress: { best_distance_m: number; elapsed_ms: number }[] = [];
    for (;;) {
      const read = await must<{ route_build: RouteBuild }>(
        'GET',
        `/v1/plannings/${planningId}/routes/${route_build.id}`,
      );
      const now = read.route_build;
      if (now.progress && progress.at(-1)?.elapsed_ms !== now.progress.elapsed_ms) progress.push(now.progress);
      if (now.status === 'completed' || now.status === 'failed')
        return { build: now, wallMs: performance.now() - started, progress };
      await pause(pollMs);
    }
  }

  /** `count` drivers of the organisation (seeded through the domain, as the planner is), each with a bearer token. */
  async function drivers(count: number) {
    const made: { id: string; token: string }[] = [];
    for (let i = 0; i < count; i++) {
      const driver = await createUser({
        email: `driver${i}.${org.id.slice(0, 8)}@bench.example`,
        name: `Driver ${i}`,
        roles: ['OrgDriver'],
        org_id: org.id,
        confirmed_at: new Date().toISOString(),
      });
      const bearer = await issueBearerToken(
        { kind: 'user', id: driver.id, roles: ['OrgDriver'], orgId: org.id },
        (await currentTokenGeneration(driver.id)) ?? 1,
      );
      made.push({ id: driver.id, token: bearer.bearer_token });
    }
    return made;
  }

  return { base, token, orgId: org.id, must, importTasks, newPlanning, build, drivers };
}
