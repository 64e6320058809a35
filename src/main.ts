// Hardening comes before the rest of the server is even loaded (src/process-hardening/): the
// secrets leave the exec environment, and the process closes itself to others of its user,
// before any dependency could read or copy them.
import { hardenProcess } from './process-hardening/harden-process.ts';
import { loadStartServer } from './load-start-server.ts';
import { mapStackTracesOnDemand } from './source-mapped-stacks.ts';

mapStackTracesOnDemand();
const hardening = hardenProcess();
const { startServer, codeCache } = await loadStartServer();
await startServer(hardening, codeCache);
