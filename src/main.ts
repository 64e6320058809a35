// Hardening comes before the rest of the server is even loaded: it may start this process
// again in place (src/process-hardening/harden-process.ts), and the first start should not
// have parsed the whole app for nothing.
import { EnvironmentRestoreError, hardenProcess } from './process-hardening/harden-process.ts';
import { mapStackTracesOnDemand } from './source-mapped-stacks.ts';

mapStackTracesOnDemand();
let hardening;
try {
  hardening = hardenProcess();
} catch (error) {
  if (!(error instanceof EnvironmentRestoreError)) throw error;
  console.error(`hearth: ${error.message}`);
  process.exit(1);
}
const { startServer } = await import('./start-server.ts');
await startServer(hardening);
