// Child process: times GET /health back to back on an event loop of its own. The bench process
// reads 100 MB answers, posts 10 MB messages and holds hundreds of MB of heap by scenario 18;
// its own work and collections, timed from there, were charged to the server.
import http from 'node:http';

export type HealthProberCommand = { type: 'start'; url: string; headers: Record<string, string>; minimumRequests: number } | { type: 'stop' };
export type HealthProberReport = { type: 'times'; times: number[] } | { type: 'failed'; message: string };

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function timeOneRequest(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (response) => {
        response.resume();
        response.once('end', () => {
          if (response.statusCode === 200) resolve(performance.now() - started);
          else reject(new Error(`GET /health answered ${response.statusCode}`));
        });
      })
      .once('error', reject);
  });
}

let stopRequested = false;

async function probe(command: Extract<HealthProberCommand, { type: 'start' }>): Promise<HealthProberReport> {
  const times: number[] = [];
  try {
    while (!stopRequested || times.length < command.minimumRequests) times.push(await timeOneRequest(command.url, command.headers));
    return { type: 'times', times };
  } catch (error) {
    return { type: 'failed', message: (error as Error).message };
  }
}

process.on('message', (command: HealthProberCommand) => {
  if (command.type === 'stop') {
    stopRequested = true;
    return;
  }
  stopRequested = false;
  void probe(command).then((report) => process.send?.(report));
});
process.on('disconnect', () => process.exit(0));
