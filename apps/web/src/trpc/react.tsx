"use client";

import type { AppRouter } from "@edgefleet/api";
import { type QueryClient, QueryClientProvider } from "@tanstack/react-query";
import {
  createTRPCClient,
  httpBatchStreamLink,
  httpSubscriptionLink,
  loggerLink,
  splitLink,
} from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useState } from "react";
import SuperJSON from "superjson";
import { createQueryClient } from "./query-client";

export const { useTRPC, TRPCProvider } = createTRPCContext<AppRouter>();

let browserQueryClient: QueryClient | undefined;

function getQueryClient() {
  // On the server every request needs its own cache; in the browser one cache lives for the tab.
  if (typeof window === "undefined") return createQueryClient();
  browserQueryClient ??= createQueryClient();
  return browserQueryClient;
}

export function TRPCReactProvider({ children }: { children: ReactNode }) {
  const queryClient = getQueryClient();
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        loggerLink({ enabled: (op) => op.direction === "down" && op.result instanceof Error }),
        // Same origin: the session and active-organization cookies travel with every request,
        // the Server-Sent Events of subscriptions (live pages) included.
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ transformer: SuperJSON, url: "/api/trpc" }),
          false: httpBatchStreamLink({ transformer: SuperJSON, url: "/api/trpc" }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
