// The IPC messages between the bench and the loopback SSH server child process.

export type SshServerCommand = { id: number; type: 'stats' };

export type SshServerReport =
  /** `publicKey`: the host key in OpenSSH form, `ssh-ed25519 AAAA…`. */
  | { type: 'ready'; port: number; publicKey: string }
  /** `connections`: accepted since start; `open`: open now; `execs`: exec requests served. */
  | { id: number; type: 'stats'; connections: number; open: number; execs: number };

export type SshServerStats = Omit<Extract<SshServerReport, { type: 'stats' }>, 'id' | 'type'>;
