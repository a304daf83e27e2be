/**
 * What CloudFormation would refuse only at deploy time (the emulator does not check it): an INCLUDE projection names
 * at most 20 non-key attributes, and at most 100 summed over a table's secondary indexes (an attribute in two
 * indexes counts twice); a table has at most 20 global secondary indexes.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Projection.html
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-secondary-indexes
 */
import { describe, expect, it } from 'vitest';
import { projectionOf, tables } from '../../shared/db/tables.ts';

describe('table definitions', () => {
  it.each(tables.map((table) => [table.id, table] as const))(
    '%s stays within the secondary-index quotas',
    (_, table) => {
      const projected = table.indexes.map((index) => projectionOf(index).NonKeyAttributes ?? []);
      expect(projected.reduce((sum, attributes) => sum + attributes.length, 0)).toBeLessThanOrEqual(100);
      expect(table.indexes.length).toBeLessThanOrEqual(20);
      table.indexes.forEach((index, i) => {
        const attributes = projected[i]!;
        expect(attributes.length, index.name).toBeLessThanOrEqual(20);
        expect(new Set(attributes).size, index.name).toBe(attributes.length);
        // Keys are projected anyway: a key named here would be a mistake about what the index holds.
        const keys = [table.partitionKey, table.sortKey, index.partitionKey, index.sortKey];
        expect(
          attributes.filter((name) => keys.includes(name)),
          index.name,
        ).toEqual([]);
      });
    },
  );
});
