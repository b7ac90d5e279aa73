"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { DownloadIcon, PauseIcon, PlayIcon, ScrollTextIcon, SquareIcon } from "lucide-react";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { Button } from "~/components/ui/button";
import { Input } from "~/components/ui/input";
import { NativeSelect } from "~/components/ui/native-select";
import { useTRPC } from "~/trpc/react";

type LogPoll = RouterOutputs["node"]["pollLogs"];

/** Lines the page keeps (the loaded window search and download work on); older ones go. */
const MAX_LINES = 5_000;
/** How often the viewer polls: also its heartbeat (the gateway ends a session unpolled for 15 s). */
const POLL_MS = 1_000;

const END_REASONS: Record<string, string> = {
  done: "the history was sent",
  budget: "this session's byte budget is used up: start it again to read on",
  cancelled: "stopped",
  lapsed: "the node stopped hearing from this viewer",
  app_gone: "the app was removed",
  shutdown: "the agent or gateway shut down",
  viewer_left: "this page stopped polling",
};

function appendBounded(current: string[], more: string[]): string[] {
  if (more.length === 0) return current;
  const next = current.concat(more);
  return next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next;
}

/**
 * Live app logs (issue 13): pick an app, its last lines load and new ones follow while this page
 * polls; pause holds new lines back (the session stays open), search filters the loaded window,
 * download saves it. Leaving the page or picking another app closes the session on the node.
 */
export function LogViewer(props: { nodeId: string; apps: string[]; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [app, setApp] = useState(props.apps[0] ?? "");
  const [session, setSession] = useState<string | null>(null);
  const [lines, setLines] = useState<string[]>([]);
  const [held, setHeld] = useState<string[]>([]);
  const [paused, setPaused] = useState(false);
  const [search, setSearch] = useState("");
  const [ended, setEnded] = useState<string | null>(null);
  const [lost, setLost] = useState(0);
  const [pollError, setPollError] = useState<{ message: string } | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const bottom = useRef<HTMLDivElement>(null);

  const take = useCallback((poll: LogPoll) => {
    if (pausedRef.current) setHeld((current) => appendBounded(current, poll.lines));
    else setLines((current) => appendBounded(current, poll.lines));
    if (poll.lost > 0) setLost((current) => current + poll.lost);
    if (poll.ended) {
      setEnded(poll.endReason ?? "ended");
      setSession(null);
    }
  }, []);

  const open = useMutation(
    trpc.node.openLogs.mutationOptions({
      onSuccess: (poll) => {
        setLines([]);
        setHeld([]);
        setLost(0);
        setEnded(null);
        setPollError(null);
        setSession(poll.ended ? null : poll.sessionId);
        take(poll);
      },
    }),
  );
  const close = useMutation(trpc.node.closeLogs.mutationOptions());
  const closeRef = useRef(close.mutate);
  closeRef.current = close.mutate;

  // Poll while a session is open; close it when the page or the app changes.
  useEffect(() => {
    if (!session) return;
    let stopped = false;
    const timer = setInterval(async () => {
      try {
        const poll = await queryClient.fetchQuery({
          ...trpc.node.pollLogs.queryOptions({ id: props.nodeId, sessionId: session }),
          staleTime: 0,
          gcTime: 0,
        });
        if (!stopped) take(poll);
      } catch (error) {
        if (stopped) return;
        setPollError(error instanceof Error ? error : { message: String(error) });
        setSession(null);
      }
    }, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
      closeRef.current({ id: props.nodeId, sessionId: session });
    };
  }, [session, props.nodeId, queryClient, trpc, take]);

  useEffect(() => {
    if (!paused && lines.length > 0) bottom.current?.scrollIntoView({ block: "nearest" });
  }, [lines, paused]);

  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return needle ? lines.filter((line) => line.toLowerCase().includes(needle)) : lines;
  }, [lines, search]);

  const resume = () => {
    setLines((current) => appendBounded(current, held));
    setHeld([]);
    setPaused(false);
  };

  const download = () => {
    const blob = new Blob([`${lines.join("\n")}\n`], { type: "text/plain" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `${app}-${props.nodeId.slice(0, 8)}-${new Date().toISOString().replaceAll(":", "-")}.log`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1_000);
  };

  if (props.apps.length === 0) {
    return <p className="text-sm text-muted-foreground">No apps on this node: nothing to tail.</p>;
  }
  const offline = props.status !== "online";
  return (
    <div className="grid gap-3" data-testid="log-viewer">
      <div className="flex flex-wrap items-end gap-2">
        <div className="grid gap-1 text-sm">
          <label htmlFor="log-viewer-app">App</label>
          <NativeSelect
            id="log-viewer-app"
            aria-label="App to tail"
            value={app}
            containerClassName="w-48"
            onChange={(event) => {
              setSession(null);
              setApp(event.target.value);
            }}
          >
            {props.apps.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </NativeSelect>
        </div>
        {session ? (
          <Button type="button" size="sm" variant="outline" onClick={() => setSession(null)}>
            <SquareIcon aria-hidden />
            Stop tailing
          </Button>
        ) : (
          <Button
            type="button"
            size="sm"
            disabled={open.isPending || !app}
            disabledReason={
              offline ? `The node is ${props.status}: logs stream from online nodes only.` : null
            }
            onClick={() => open.mutate({ id: props.nodeId, app, tail: 200 })}
          >
            <ScrollTextIcon aria-hidden />
            {open.isPending ? "Opening…" : "Tail logs"}
          </Button>
        )}
        {paused ? (
          <Button
            type="button"
            size="sm"
            variant="outline"
            onClick={resume}
            disabled={!session && held.length === 0}
          >
            <PlayIcon aria-hidden />
            Follow{held.length > 0 ? ` (${held.length} new)` : ""}
          </Button>
        ) : (
          <Button
            type="button"
            size="sm"
            variant="outline"
            onClick={() => setPaused(true)}
            disabled={!session}
          >
            <PauseIcon aria-hidden />
            Pause
          </Button>
        )}
        <Input
          aria-label="Search the loaded lines"
          placeholder="Search loaded lines"
          className="w-56"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
        <Button type="button" size="sm" variant="ghost" onClick={download} disabled={lines.length === 0}>
          <DownloadIcon aria-hidden />
          Download
        </Button>
      </div>
      {open.error ? <ErrorNotice error={open.error} /> : null}
      {pollError ? <ErrorNotice error={pollError} /> : null}
      <p className="text-xs text-muted-foreground" aria-live="polite" data-testid="log-status">
        {session
          ? `${paused ? "Paused" : "Following"} ${app}: ${lines.length} lines loaded`
          : ended
            ? `Session ended: ${END_REASONS[ended] ?? ended}. ${lines.length} lines loaded.`
            : `${lines.length} lines loaded`}
        {search.trim() ? `, ${shown.length} match` : ""}
        {lost > 0 ? `, ${lost} lines dropped by the node (they came faster than this page read them)` : ""}
      </p>
      <div
        className="h-72 overflow-auto rounded-md border bg-muted/30 p-2 font-mono text-xs"
        data-testid="log-lines"
        role="log"
        aria-label={`Output of ${app}`}
      >
        {shown.map((line, index) => (
          // Lines have no identity of their own; the window only grows at the end.
          // biome-ignore lint/suspicious/noArrayIndexKey: see above
          <div key={index} className="break-all whitespace-pre-wrap">
            {line}
          </div>
        ))}
        <div ref={bottom} />
      </div>
    </div>
  );
}
