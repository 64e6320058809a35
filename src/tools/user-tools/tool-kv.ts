import type { Db } from '../../store/database.ts';
import { kvDelete, kvGet, kvList, kvSet } from '../../store/user-tool-kv-repository.ts';
import type { KvOperation } from './protocol.ts';

/** A user tool's request to its own key-value store (`ctx.kv` in its module), answered from the database. */
export function runKvOperation(db: Db, tool: string, operation: KvOperation): Promise<unknown> {
  switch (operation.operation) {
    case 'get':
      return kvGet(db, tool, operation.key);
    case 'set':
      return kvSet(db, tool, operation.key, operation.value);
    case 'delete':
      return kvDelete(db, tool, operation.key);
    case 'list':
      return kvList(db, tool, operation.prefix);
  }
}
