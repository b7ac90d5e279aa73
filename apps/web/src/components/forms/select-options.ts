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

/**
 * The organization's sites (as `site.list` gives them) as a select's choices after a first one
 * that names no site ("no site", "every site"); the list's row of nodes without a site is left out.
 */
export function siteOptions(
  sites: readonly { id: string | null; name: string | null }[] | undefined,
  noSite: string,
): SelectOption[] {
  return [
    { value: "", label: noSite },
    ...(sites ?? []).flatMap((site) => (site.id && site.name ? [{ value: site.id, label: site.name }] : [])),
  ];
}
