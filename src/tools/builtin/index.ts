import type { Db } from '../../store/database.ts';
import type { Tool } from '../tool.ts';
import { createScratchpadTool } from './scratchpad.ts';
import { createTodoTool } from './todo.ts';

export function createBuiltinTools(db: Db): Tool[] {
  return [createScratchpadTool(db), createTodoTool(db)];
}
