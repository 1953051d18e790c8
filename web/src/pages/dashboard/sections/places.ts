// Country codes in the reader's words ("Germany"), with the code as a fallback where the browser has no name.
let names: Intl.DisplayNames | null = null;
try {
  names = new Intl.DisplayNames(undefined, { type: 'region' });
} catch {
  names = null;
}

export function countryName(code: string | null | undefined): string {
  if (!code) return 'Unknown';
  try {
    return names?.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}
