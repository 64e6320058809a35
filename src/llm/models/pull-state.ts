/** How a pull stands, as `model_pull` events and the events socket's hello carry it (docs/protocol.md). */
export interface PullState {
  name: string;
  /** Ollama's status line: "pulling manifest", "pulling <digest>", "verifying sha256 digest", "writing manifest", "success". */
  status: string;
  /** Bytes over all layers so far known, summed. */
  completed?: number;
  total?: number;
  state: 'pulling' | 'done' | 'failed' | 'cancelled';
  /** Why it failed, in plain words. */
  error?: string;
}
