import type { HostToServer, ServerToHost } from './protocol.ts';

/** Why a host went away, once. */
export interface HostEnd {
  reason: string;
  /** It was ended for its resident memory. */
  memory?: { limitMb: number };
}

/**
 * The server's end of one user-tool host, whatever carries the messages: a jailed child
 * process (HostProcess) or, in tests, an in-memory pair. `UserToolHost` speaks the protocol of
 * protocol.ts over it. Shaped like the MCP SDK's `Transport` (start, send, close, onmessage,
 * onclose); a host has no failure it survives, so every error is an end and there is no `onerror`.
 */
export interface HostTransport {
  /** Starts the host and asks it to load its modules; rejects when it cannot be started at all. */
  start(): Promise<void>;
  /** Does nothing once the host has ended. */
  send(message: ServerToHost): void;
  /** Ends the host (if it still runs) and resolves once it has gone; `onclose` follows if it had not ended before. */
  close(): Promise<void>;
  /** Each message from the host, in order. */
  onmessage?: (message: HostToServer) => void;
  /** Once, when the host stops being usable: it exited or crashed, sent a malformed message, used too much memory, was closed. */
  onclose?: (end: HostEnd) => void;
  /** Why the host ended, once it has. */
  readonly ended: HostEnd | undefined;
  /** The operating system's id of the host process, where there is one. */
  readonly pid: number | undefined;
  /** The last few kilobytes the host wrote to stderr. */
  readonly stderr: string;
}
