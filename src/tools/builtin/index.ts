import type { Config } from '../../config.ts';
import type { Db } from '../../store/database.ts';
import type { Tool } from '../tool.ts';
import { createScratchpadTool } from './scratchpad.ts';
import { createTodoTool } from './todo.ts';

export interface BuiltinToolDependencies {
  db: Db;
  config: Config;
}

export function createBuiltinTools({ db }: BuiltinToolDependencies): Tool[] {
  return [createScratchpadTool(db), createTodoTool(db)];
}
