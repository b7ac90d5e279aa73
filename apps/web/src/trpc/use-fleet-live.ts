"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useEffect, useRef } from "react";
import { useTRPC } from "./react";

export type LiveState = "live" | "connecting" | "offline";

/**
 * Keeps a page live without polling: subscribes to the organization's "fleet changed" signal
 * (tRPC subscription over Server-Sent Events, fed by Postgres LISTEN/NOTIFY on the server) and
 * calls `onChange` on each one, typically to invalidate the page's queries. After a reconnect it
 * calls `onChange` too, since signals sent while disconnected are lost.
 */
export function useFleetLive(onChange: () => unknown): LiveState {
  const trpc = useTRPC();
  const callback = useRef(onChange);
  useEffect(() => {
    callback.current = onChange;
  }, [onChange]);
  const startedBefore = useRef(false);
  const subscription = useSubscription(
    trpc.fleet.changes.subscriptionOptions(undefined, {
      onStarted: () => {
        if (startedBefore.current) void callback.current();
        startedBefore.current = true;
      },
      onData: () => void callback.current(),
    }),
  );
  if (subscription.status === "pending") return "live";
  if (subscription.status === "error") return "offline";
  return "connecting";
}
