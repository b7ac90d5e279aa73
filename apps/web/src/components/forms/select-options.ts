export interface SelectOption {
  value: string;
  label: string;
  disabled?: boolean;
}

/**
 * A select's choices as a list; fixed ones may be written `{ value: label }`, shown in the order
 * written (so their values must not be whole numbers, which JavaScript orders first).
 */
export function selectOptions(options: SelectOption[] | Record<string, string>): SelectOption[] {
  return Array.isArray(options)
    ? options
    : Object.entries(options).map(([value, label]) => ({ value, label }));
}
