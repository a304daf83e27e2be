/**
 * A planning job's pairs refer to their runsheet on the planning (`runsheet_ref`) instead of copying it, so a pair
 * record is small. The planning's runsheet can change after the offer (P5 replaces it, P6 removes it): before it
 * does, its tasks as they were offered are copied onto every pair that still refers to it, and R1/R2 go on showing
 * what each driver was offered. Only a runsheet that was offered (it has an offer group) costs anything here.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, getAll, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { groupKey, groupRunsheetIdOf, pairKey, runsheetKey } from '#shared/planning/keys';
import { groupPairIds, type OfferListing } from '#shared/planning/offer-groups';
import { runsheetTasksOf } from '#shared/planning/planning-records';

/**
 * Copies the runsheets' current tasks onto the pairs that refer to them. A pair that holds its own copy already (an
 * earlier change, or R3's) is left as it is; the revision moves, so a pair event that read the record before this
 * judges it again. Safe to repeat: a retry finds the pairs copied.
 */
export async function keepOfferedRunsheets(planId: string, runsheets: { id: string; tasks: unknown[] }[]) {
  if (runsheets.length === 0) return;
  const groups = await getAll(
    mainTableName(),
    runsheets.map((runsheet) => groupKey(planId, runsheet.id)),
    // Consistent: a job that has just listed pairs on a group is not missed.
    { ProjectionExpression: 'SK, job_id, offered, pair_ids', ConsistentRead: true },
  );
  const tasksOf = new Map(runsheets.map((runsheet) => [groupKey(planId, runsheet.id).SK, runsheet.tasks]));
  const copies = groups.flatMap((group) =>
    groupPairIds(group as OfferListing, groupRunsheetIdOf(group['SK'])).map((pairId) => ({
      pairId,
      tasks: tasksOf.get(String(group['SK'])) ?? [],
    })),
  );
  for (let i = 0; i < copies.length; i += 25) {
    await Promise.all(
      copies.slice(i, i + 25).map(({ pairId, tasks }) =>
        db()
          .send(
            new UpdateCommand({
              TableName: mainTableName(),
              Key: pairKey(planId, pairId),
              UpdateExpression: 'SET #pair.#runsheet.tasks = :tasks, rev = rev + :one REMOVE runsheet_ref',
              ConditionExpression: 'runsheet_ref = :true',
              ExpressionAttributeNames: { '#pair': 'pair', '#runsheet': 'runsheet' },
              ExpressionAttributeValues: { ':tasks': tasks, ':one': 1, ':true': true },
            }),
          )
          .catch((error: unknown) => {
            // Copied already, or listed but never written (a job that died between its group and its pair).
            if (!isConditionalFailure(error)) throw error;
          }),
      ),
    );
  }
}

type StoredRunsheet = { id: string; name?: string; tasks: unknown[]; task_ids?: string[] };

/** The planning's runsheets by id (all of them, or those named): R1/R2 assemble pairs from them, P6 keeps them. */
export async function planningRunsheets(planId: string, ids?: string[]): Promise<Map<string, StoredRunsheet>> {
  const items = ids
    ? await getAll(
        mainTableName(),
        ids.map((id) => runsheetKey(planId, id)),
        { ProjectionExpression: 'id, #n, tasks, task_ids', ExpressionAttributeNames: { '#n': 'name' } },
      )
    : await queryAll({
        TableName: mainTableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :rs)',
        ExpressionAttributeValues: { ':pk': runsheetKey(planId, '').PK, ':rs': runsheetKey(planId, '').SK },
      });
  return new Map(
    items.map((item) => [
      String(item['id']),
      {
        id: String(item['id']),
        ...(item['name'] !== undefined ? { name: item['name'] as string } : {}),
        tasks: runsheetTasksOf(item),
        ...(Array.isArray(item['task_ids']) ? { task_ids: item['task_ids'] as string[] } : {}),
      },
    ]),
  );
}
