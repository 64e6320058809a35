// Hardening comes before the rest of the server is even loaded (src/process-hardening/): the
// secrets leave the exec environment, and the process closes itself to others of its user,
// before any dependency could read or copy them.
import { hardenProcess } from './process-hardening/harden-process.ts';
import { mapStackTracesOnDemand } from './source-mapped-stacks.ts';

mapStackTracesOnDemand();
const hardening = hardenProcess();
const { startServer } = await import('./start-server.ts');
await startServer(hardening);
