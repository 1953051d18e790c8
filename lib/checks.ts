// Guards for lib functions that callers outside HTTP (jobs, the CLI, tests) may call with bad numbers:
// the routes validate first, so a failure here is a programming error, thrown as RangeError.

/** 8-4-4-4-12 hex, any version and case: what ids of this project look like (uuid columns, API ids). Spelled
 *  without the i flag: JSON Schema patterns (the OpenAPI document) carry no flags. */
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `value` when it is an integer in [min, max]. */
export function checkInt(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}
