/**
 * A counting proxy in front of the DynamoDB emulator (issue 45): every write is forwarded and tallied per partition
 * key value, the table's and every index's, with the second it happened in. `bench/hot-keys.ts` prints the hottest
 * keys from it, and test/e2e/constant-keys.test.ts fails on a written key with no id in it.
 *
 * What a write touches: a put, its item's keys (and, for a single PutItem, the keys of the item it replaced); an
 * update or a delete, the keys of the item before (the proxy asks for `ALL_OLD` where the caller asked for nothing
 * and hands back what the caller asked for) and, for an update, the partition keys its expression sets. An index is
 * counted only when the answer's consumed capacity says it was written (every call of the service asks for it per
 * index: shared/db/capacity.ts): an entry that moves counts once under its old key and once under its new. Inside a
 * transaction or a batch nothing is returned, so an update's or a delete's index entry whose key the write does not
 * name is counted under `<index>=?`.
 */
import { createServer, request as forward } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tables } from '../../shared/db/tables.ts';

export interface KeyWrite {
  /** `<table id>` or `<table id>.<index>`. */
  where: string;
  /** The partition key's attribute and value: `PK=BPLAN#…`, `GSI3PK=WAVES#3`. */
  key: string;
  /** Epoch second. */
  second: number;
  /** The written item's own partition key value (`BPLAN#…#0`), when known: whose write an index entry is. */
  item?: string;
  /** The written item's sort key (`SK`), when the table has one and it is known. */
  sort?: string;
}

export interface KeyTallyProxy {
  url: string;
  readonly writes: KeyWrite[];
  /** Drops what was tallied so far. */
  reset(): void;
  close(): Promise<void>;
}

type Av = Record<string, unknown>;
type Image = Record<string, Av>;

/** A table's id and its partition key attributes (base and indexes) by its local name (`<prefix><id lowercased>`). */
function tableOf(name: string) {
  const def = tables.find((t) => name.endsWith(t.id.toLowerCase()));
  if (!def) return undefined;
  return {
    id: def.id,
    base: def.partitionKey,
    indexes: def.indexes.map((index) => ({ name: index.name, pk: index.partitionKey })),
  };
}

const stringOf = (value: Av | undefined) => (value && typeof value['S'] === 'string' ? value['S'] : undefined);

/** The partition key attributes an update expression sets (to a placeholder's value) or removes. */
function expressionKeys(
  expression: string | undefined,
  names: Record<string, string> | undefined,
  values: Record<string, Av> | undefined,
  attributes: string[],
): Map<string, string | null> {
  const out = new Map<string, string | null>();
  if (!expression) return out;
  const name = (token: string) => (token.startsWith('#') ? (names?.[token] ?? token) : token);
  const clauses = expression.split(/\b(?=SET |REMOVE |ADD |DELETE )/);
  for (const clause of clauses) {
    if (clause.startsWith('SET ')) {
      for (const part of clause.slice(4).split(',')) {
        const match = /^\s*([#\w]+)\s*=\s*(:\w+)\s*$/.exec(part);
        if (match && attributes.includes(name(match[1]!))) {
          out.set(name(match[1]!), stringOf(values?.[match[2]!]) ?? null);
        }
      }
    } else if (clause.startsWith('REMOVE ')) {
      for (const part of clause.slice(7).split(',')) {
        const attribute = name(part.trim());
        if (attributes.includes(attribute)) out.set(attribute, null);
      }
    }
  }
  return out;
}

interface WriteRequest {
  table: string;
  item?: Image;
  key?: Image;
  old?: Image | undefined;
  update?: { expression?: string; names?: Record<string, string>; values?: Record<string, Av> };
  /** Indexes the write consumed capacity on, when known (single-item calls); undefined: assume any it names. */
  indexes?: Set<string> | undefined;
  /** Indexes another item of the same transaction or batch writes by name (their units are its, not this one's). */
  named?: Set<string>;
}

function tally(write: WriteRequest, second: number, into: KeyWrite[]) {
  const table = tableOf(write.table);
  if (!table) return;
  const image = write.item ?? write.old ?? write.key ?? {};
  const base = stringOf(image[table.base]) ?? stringOf(write.key?.[table.base]);
  const sort = stringOf(image['SK']) ?? stringOf(write.key?.['SK']);
  if (base !== undefined) {
    into.push({
      where: table.id,
      key: `${table.base}=${base}`,
      second,
      item: base,
      ...(sort !== undefined && { sort }),
    });
  }
  const set = expressionKeys(
    write.update?.expression,
    write.update?.names,
    write.update?.values,
    table.indexes.map((index) => index.pk),
  );
  for (const index of table.indexes) {
    if (write.indexes && !write.indexes.has(index.name)) continue;
    const touched = new Set<string>();
    const before = stringOf(write.old?.[index.pk]);
    if (write.item) {
      const after = stringOf(write.item[index.pk]);
      if (after !== undefined) touched.add(after);
      if (before !== undefined) touched.add(before);
    } else if (write.update) {
      const after = set.has(index.pk) ? set.get(index.pk) : before;
      if (after) touched.add(after);
      if (before !== undefined) touched.add(before);
      // Inside a transaction or a batch the old image is unknown: an entry the write rewrites without naming its key.
      if (touched.size === 0 && write.old === undefined && write.indexes && !write.named?.has(index.name)) {
        touched.add('?');
      }
    } else if (before !== undefined) {
      touched.add(before);
    } else if (write.old === undefined && write.indexes && !write.named?.has(index.name)) {
      touched.add('?');
    }
    for (const value of touched) {
      into.push({
        where: `${table.id}.${index.name}`,
        key: `${index.pk}=${value}`,
        second,
        ...(base && { item: base }),
      });
    }
  }
}

/** The indexes a single call's consumed capacity names (CapacityUnits > 0), per table. */
function consumedIndexes(answer: Av | undefined): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const list = Array.isArray(answer?.['ConsumedCapacity'])
    ? (answer['ConsumedCapacity'] as Av[])
    : answer?.['ConsumedCapacity']
      ? [answer['ConsumedCapacity'] as Av]
      : [];
  for (const consumed of list) {
    const indexes = (consumed['GlobalSecondaryIndexes'] ?? {}) as Record<string, { CapacityUnits?: number }>;
    out.set(
      String(consumed['TableName']),
      new Set(Object.entries(indexes).flatMap(([name, units]) => ((units.CapacityUnits ?? 0) > 0 ? [name] : []))),
    );
  }
  return out;
}

export async function startKeyTallyProxy(target: string): Promise<KeyTallyProxy> {
  const upstream = new URL(target);
  const writes: KeyWrite[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      let body = Buffer.concat(chunks);
      let input: Av | undefined;
      let askedOld = false;
      if (['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'].includes(operation)) {
        input = JSON.parse(body.toString('utf8')) as Av;
        if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation) && input['ReturnValues'] === undefined) {
          askedOld = true;
          body = Buffer.from(JSON.stringify({ ...input, ReturnValues: 'ALL_OLD' }));
        }
      }
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const out = forward(
        { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            let text = Buffer.concat(parts);
            const status = answer.statusCode ?? 502;
            if (input && status === 200) {
              const parsed = JSON.parse(text.toString('utf8') || '{}') as Av;
              record(operation, input, parsed, Math.floor(Date.now() / 1000));
              if (askedOld) {
                delete parsed['Attributes'];
                text = Buffer.from(JSON.stringify(parsed));
              }
            }
            const { 'x-amz-crc32': _crc, ...rest } = answer.headers;
            res.writeHead(status, { ...rest, 'content-length': String(text.length) });
            res.end(text);
          });
        },
      );
      out.on('error', () => res.socket?.destroy());
      out.end(body);
    });
  });

  function record(operation: string, input: Av, answer: Av, second: number) {
    const consumed = consumedIndexes(answer);
    const old = answer['Attributes'] as Image | undefined;
    const table = String(input['TableName'] ?? '');
    const update = (request: Av) => ({
      expression: request['UpdateExpression'] as string | undefined,
      names: request['ExpressionAttributeNames'] as Record<string, string> | undefined,
      values: request['ExpressionAttributeValues'] as Record<string, Av> | undefined,
    });
    if (operation === 'PutItem') {
      tally({ table, item: input['Item'] as Image, old, indexes: consumed.get(table) }, second, writes);
    } else if (operation === 'UpdateItem') {
      tally(
        { table, key: input['Key'] as Image, old, update: update(input), indexes: consumed.get(table) },
        second,
        writes,
      );
    } else if (operation === 'DeleteItem') {
      tally({ table, key: input['Key'] as Image, old, indexes: consumed.get(table) }, second, writes);
    } else if (operation === 'BatchWriteItem') {
      for (const [name, requests] of Object.entries((input['RequestItems'] ?? {}) as Record<string, Av[]>)) {
        for (const request of requests) {
          const put = request['PutRequest'] as Av | undefined;
          const del = request['DeleteRequest'] as Av | undefined;
          if (put) tally({ table: name, item: put['Item'] as Image, indexes: consumed.get(name) }, second, writes);
          if (del) tally({ table: name, key: del['Key'] as Image, indexes: consumed.get(name) }, second, writes);
        }
      }
    } else if (operation === 'TransactWriteItems') {
      const entries = (input['TransactItems'] ?? []) as Av[];
      // The indexes some item of the transaction names the key of: their units are that item's.
      const named = new Set<string>();
      for (const entry of entries) {
        const put = entry['Put'] as Av | undefined;
        const upd = entry['Update'] as Av | undefined;
        const def = tableOf(String((put ?? upd)?.['TableName'] ?? ''));
        for (const index of def?.indexes ?? []) {
          const set = upd
            ? expressionKeys(update(upd).expression, update(upd).names, update(upd).values, [index.pk])
            : undefined;
          if ((put && (put['Item'] as Image)[index.pk]) || set?.get(index.pk)) named.add(index.name);
        }
      }
      for (const entry of entries) {
        const put = entry['Put'] as Av | undefined;
        const upd = entry['Update'] as Av | undefined;
        const del = entry['Delete'] as Av | undefined;
        const name = String((put ?? upd ?? del)?.['TableName'] ?? '');
        const indexes = consumed.get(name);
        if (put) tally({ table: name, item: put['Item'] as Image, indexes }, second, writes);
        if (upd) tally({ table: name, key: upd['Key'] as Image, update: update(upd), indexes, named }, second, writes);
        if (del) tally({ table: name, key: del['Key'] as Image, indexes, named }, second, writes);
      }
    }
  }

  server.keepAliveTimeout = 5000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writes,
    reset: () => {
      writes.length = 0;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** The keys with no id in them: every `#`-separated part an upper-case word (a shard number `#<n>` is an id here). */
export const constantKey = (key: string) => /^[A-Z0-9_]+=[A-Z_]+(#[A-Z_]+)*$/.test(key);
