/** The rows of what an API list returned: the array itself, or a page's `items` (`{ items, nextCursor }`). */
export function listRows<Row>(data: Row[] | { items: Row[] }): Row[] {
  return Array.isArray(data) ? data : data.items;
}
