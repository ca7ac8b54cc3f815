import { phpUnserialize } from './php-serialize';

/** The string entries of a PHP-serialized array (e.g. the `active_plugins` option); [] for anything else. */
export function serializedStringList(text: string): string[] {
  const parsed = phpUnserialize(text);
  if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object') return [];
  return Object.values(parsed.value as Record<string, unknown>).filter((entry): entry is string => typeof entry === 'string');
}
