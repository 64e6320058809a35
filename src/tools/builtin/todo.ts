import { Type, type Static } from '@sinclair/typebox';
import type { Db } from '../../store/database.ts';
import { readTodoList, saveTodoList, todoStatuses, type TodoItem, type TodoStatus } from '../../store/todo-repository.ts';
import type { Tool } from '../tool.ts';
import { toolFailure } from '../../failure.ts';

const actions = ['set', 'update', 'read'] as const;
type Action = (typeof actions)[number];

const parameters = Type.Object(
  {
    action: Type.Unsafe<Action>({ type: 'string', enum: [...actions] }),
    items: Type.Optional(Type.Array(Type.String(), { description: 'set: the steps, in order' })),
    index: Type.Optional(Type.Integer({ description: 'update: item number as shown' })),
    status: Type.Optional(Type.Unsafe<TodoStatus>({ type: 'string', enum: [...todoStatuses] })),
  },
  { additionalProperties: false },
);

type TodoArguments = Static<typeof parameters>;

const statusMarks: Record<TodoStatus, string> = { pending: '[ ]', in_progress: '[~]', done: '[x]' };

const statusChoices = todoStatuses.map((status) => `"${status}"`).join(', ');

export function renderTodoList(items: readonly TodoItem[]): string {
  if (items.length === 0) return 'There is no todo list yet. Create one with action "set" and items, e.g. ["Check disk usage", "Rotate logs"].';
  const done = items.filter((item) => item.status === 'done').length;
  const lines = items.map((item, position) => `${position + 1}. ${statusMarks[item.status]} ${item.text}`);
  return [`Todo (${done}/${items.length} done):`, ...lines].join('\n');
}

export function createTodoTool(db: Db): Tool<TodoArguments> {
  async function set(sessionId: string, texts: readonly string[] | undefined) {
    if (!texts || texts.length === 0) {
      return toolFailure('Send items: a non-empty list of step texts, e.g. ["Check disk usage", "Rotate logs"].');
    }
    const blank = texts.findIndex((text) => text.trim() === '');
    if (blank !== -1) return toolFailure(`Item ${blank + 1} is empty; every item needs text.`);
    const items = texts.map((text): TodoItem => ({ text: text.trim(), status: 'pending' }));
    await saveTodoList(db, sessionId, items);
    return renderTodoList(items);
  }

  async function update(sessionId: string, index: number | undefined, status: TodoStatus | undefined) {
    const items = await readTodoList(db, sessionId);
    if (items.length === 0) return toolFailure('There is no todo list to update. Create one first with action "set" and items.');
    const range = items.length === 1 ? 'the only item is 1' : `items are numbered 1-${items.length}`;
    if (index === undefined) return toolFailure(`Send index: the item number to update (${range}).\n\n${renderTodoList(items)}`);
    const item = Number.isInteger(index) ? items[index - 1] : undefined;
    if (!item) return toolFailure(`Index ${index} is out of range; ${range}.\n\n${renderTodoList(items)}`);
    if (status === undefined || !todoStatuses.includes(status)) return toolFailure(`Send status: one of ${statusChoices}.`);
    item.status = status;
    await saveTodoList(db, sessionId, items);
    return renderTodoList(items);
  }

  return {
    name: 'todo',
    description: 'Checklist for multi-step work: set the steps, update one\'s status, read it.',
    parameters,
    async execute(args, context) {
      const action: Action = args.action;
      switch (action) {
        case 'set':
          return set(context.sessionId, args.items);
        case 'update':
          return update(context.sessionId, args.index, args.status);
        case 'read':
          return renderTodoList(await readTodoList(db, context.sessionId));
        default:
          return toolFailure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    },
  };
}
