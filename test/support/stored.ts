/** What the local tables hold, for tests that must prove a request changed nothing. */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, locationsTableName, mainTableName } from '../../shared/db/client.ts';

/**
 * Every item of the main and locations tables of the host started in this test file, as sorted JSON lines (tests
 * may Scan; request paths never do). Not the risk sweep's minute marks (`ORG#…#LATERISK`, `MINUTE`): the host's own
 * sweep writes one whenever a minute turns, whatever a request does.
 */
export async function storedItems(): Promise<string[]> {
  const lines: string[] = [];
  for (const table of [mainTableName(), locationsTableName()]) {
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await db().send(new ScanCommand({ TableName: table, ExclusiveStartKey: cursor }));
      for (const item of page.Items ?? [])
        if (!(String(item['PK']).endsWith('#LATERISK') && item['SK'] === 'MINUTE'))
          lines.push(`${table} ${JSON.stringify(item, Object.keys(item).sort())}`);
      cursor = page.LastEvaluatedKey;
    } while (cursor);
  }
  return lines.sort();
}
