/**
 * A planning job over 1 000 runsheets and 200 located drivers: its duration, DynamoDB writes per pair, and its writes
 * a second beside plain BatchWriteItem writing as many copies of one of its pair items in the same run (issue 26.4).
 */
import { startBenchHost } from './host.ts';
import { rawBatchWriteRate } from './raw-writes.ts';

export async function benchPlanning() {
  await startBenchHost('planning');
  const { createOrganisation } = await import('#shared/accounts/organisations');
  const { createUser } = await import('#shared/accounts/users');
  const { importLocations } = await import('#shared/locations/fixes');
  const { addRunsheets, addDrivers } = await import('#shared/planning/planning-members');
  const { findPlanning } = await import('#shared/planning/planning-records');
  const { createPlanning } = await import('#shared/planning/plannings');
  const { startPlanningJob } = await import('#shared/planning/job');
  const { JOB_DEFAULTS } = await import('#shared/planning/schemas');
  const { db, mainTableName } = await import('#shared/db/client');
  const { queryPartitions } = await import('#shared/db/shards');
  const { planPartitions } = await import('#shared/planning/keys');
  const org = await createOrganisation({ name: 'Planning bench', kind: 'transporter' });
  const caller = { kind: 'user' as const, id: 'bench-planner', roles: ['OrgAdmin' as const], orgId: org.id };
  const drivers = [];
  for (let i = 0; i < 200; i += 20) {
    drivers.push(
      ...(await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          createUser({
            email: `pd${i + j}@bench.example`,
            name: `Driver ${i + j}`,
            roles: ['OrgDriver'],
            org_id: org.id,
          }),
        ),
      )),
    );
  }
  const now = new Date().toISOString();
  await importLocations(
    drivers.map((d, i) => ({
      id: i.toString(16).padStart(24, '0'),
      user_id: d.id,
      device_id: null,
      latitude: 1.25 + (i % 20) * 0.01,
      longitude: 103.7 + Math.floor(i / 20) * 0.02,
      altitude: null,
      client_time_utc: now,
      client_timezone: null,
      server_time: now,
      version: 1,
      org_id: org.id,
      service_types: [],
    })),
  );
  let planning = await createPlanning(caller, 'Bench day');
  for (let i = 0; i < 1000; i += 90) {
    planning = await addRunsheets(
      caller,
      planning.id,
      Array.from({ length: Math.min(90, 1000 - i) }, (_, j) => ({
        id: `RS-${i + j}`,
        tasks: [
          {
            id: `t-${i + j}`,
            from_address: { latitude: 1.25 + ((i + j) % 40) * 0.005, longitude: 103.7 + ((i + j) % 25) * 0.008 },
          },
        ],
      })),
    );
  }
  for (let i = 0; i < 200; i += 90)
    planning = await addDrivers(
      caller,
      planning.id,
      drivers.slice(i, i + 90).map((d) => ({ id: d.id })),
    );

  const writes = { count: 0 };
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      const input = args.input as { RequestItems?: Record<string, unknown[]>; TransactItems?: unknown[] };
      // Items written: a batch or a transaction counts each of its items.
      if (/^BatchWrite/.test(command)) writes.count += Object.values(input.RequestItems ?? {}).flat().length;
      else if (/^TransactWrite/.test(command)) writes.count += input.TransactItems?.length ?? 0;
      else if (/^(Put|Update|Delete)/.test(command)) writes.count++;
      return next(args);
    },
    { step: 'initialize', name: 'benchWrites' },
  );
  const started = performance.now();
  await startPlanningJob(caller, planning.id, { ...JOB_DEFAULTS, version_rev: planning.version_rev });
  for (;;) {
    const current = await findPlanning(planning.id);
    if (current?.job && !['queued', 'processing'].includes(current.job.current_status)) {
      if (current.job.current_status !== 'completed') throw new Error(`the job ended ${current.job.current_status}`);
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  const pairs = 1000 * 5;
  console.log(`\n## Planning job: 1 000 runsheets × 200 drivers, 5 candidates a runsheet (${pairs} pairs)`);
  const jobWrites = writes.count;
  const rate = jobWrites / seconds;
  // The yardstick writes copies of one of the job's own pair items.
  const [sample] = await queryPartitions(planPartitions(planning.id), {
    TableName: mainTableName(),
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :pair)',
    ExpressionAttributeValues: { ':pair': 'PAIR#' },
    Limit: 1,
  });
  const raw = await rawBatchWriteRate(jobWrites, sample!);
  console.log(
    `job duration ${seconds.toFixed(1)} s (${Math.round(pairs / seconds)} pairs/s); DynamoDB writes ${jobWrites} = ${(jobWrites / pairs).toFixed(2)} per pair`,
  );
  console.log(
    `job writes ${Math.round(rate)}/s; plain BatchWriteItem of ${jobWrites} copies of a pair item ${Math.round(raw)}/s; ratio ${(rate / raw).toFixed(2)} (goal ≥ 0.5)`,
  );
}
