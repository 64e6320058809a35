// Where a JSON Schema error points (ajv's instancePath), said the way a person points at a field.

function pointerSegments(instancePath: string): string[] {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `tools[1]`, `env.API_KEY`: the field an instancePath points at. */
export function fieldName(instancePath: string): string {
  return pointerSegments(instancePath).reduce(
    (name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment),
    '',
  );
}

/** The value an instancePath points at in `data`, if there is one. */
export function valueAt(data: unknown, instancePath: string): unknown {
  return pointerSegments(instancePath).reduce<unknown>((value, segment) => (value as Record<string, unknown> | undefined)?.[segment], data);
}
