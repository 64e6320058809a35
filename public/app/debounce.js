/** `run`, once calls have paused for `delayMs`: a burst of calls costs one run. */
export function debounce(run, delayMs) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(run, delayMs);
  };
}
