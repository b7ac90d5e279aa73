import { defaultShouldDehydrateQuery, QueryClient } from "@tanstack/react-query";
import SuperJSON from "superjson";

export function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      // Data rendered on the server stays fresh briefly, so the client does not refetch at once.
      queries: { staleTime: 30 * 1000 },
      dehydrate: {
        serializeData: SuperJSON.serialize,
        shouldDehydrateQuery: (query) =>
          defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
      hydrate: { deserializeData: SuperJSON.deserialize },
    },
  });
}
