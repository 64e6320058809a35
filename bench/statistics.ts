/** The value below which `fraction` of the values lie, interpolating between the two nearest ranks. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = (sorted.length - 1) * fraction;
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const lowerValue = sorted[lower] as number;
  const upperValue = sorted[upper] as number;
  return lowerValue + (upperValue - lowerValue) * (rank - lower);
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

export function maximum(values: readonly number[]): number {
  return values.reduce((largest, value) => Math.max(largest, value), Number.NEGATIVE_INFINITY);
}

export function milliseconds(value: number, digits = 1): string {
  return `${value.toFixed(digits)} ms`;
}

export function megabytes(kilobytes: number): string {
  return `${(kilobytes / 1024).toFixed(1)} MB`;
}

export function thousands(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
