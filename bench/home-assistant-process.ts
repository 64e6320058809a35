// Child process: the Home Assistant stand-in of test/support, on its own event loop, so that a
// state_changed storm it sends does not share a loop with the bench's /health timing. It
// reports its URL and token over IPC, then starts a storm when told to and reports its end.
import { startHomeAssistantStandIn } from '../test/support/home-assistant-stand-in.ts';

export type HomeAssistantCommand = { type: 'storm'; eventsPerSecond: number; durationMs: number };
export type HomeAssistantReport = { type: 'ready'; url: string; token: string } | { type: 'storm_finished'; sent: number };

const standIn = await startHomeAssistantStandIn();
process.send?.({ type: 'ready', url: standIn.url, token: standIn.token } satisfies HomeAssistantReport);
process.on('message', (command: HomeAssistantCommand) => {
  if (command.type !== 'storm') return;
  const storm = standIn.startStorm({ eventsPerSecond: command.eventsPerSecond, durationMs: command.durationMs });
  void storm.finished.then((sent) => process.send?.({ type: 'storm_finished', sent } satisfies HomeAssistantReport));
});
process.on('disconnect', () => {
  void standIn.close().then(() => process.exit(0));
});
