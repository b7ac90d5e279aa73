import { CopyButton } from "~/components/copy-once";

/** The one-line agent install command of a new token, with a copy button (shown with the token, once). */
export function InstallCommand(props: { command: string }) {
  return (
    <div className="grid gap-2 text-sm">
      <p>
        <strong>Run on the node</strong> (Linux with Node 20, the agent at
        /opt/edgefleet/edgefleet-agent.mjs):
      </p>
      <pre
        data-testid="install-command"
        className="overflow-x-auto rounded-md border bg-muted p-3 text-xs whitespace-pre-wrap break-all"
      >
        {props.command}
      </pre>
      <div className="flex flex-wrap items-center gap-2">
        <CopyButton text={props.command} label="Copy command" />
      </div>
    </div>
  );
}
