import { CopyButton } from "~/components/copy-once";

/** The one-line agent install command of a new token, with a copy button (shown with the token, once). */
export function InstallCommand(props: { command: string }) {
  return (
    <div className="grid gap-2 text-sm">
      <p>
        <strong>Run on the node</strong> (Linux with systemd and curl, on amd64, arm64 or armv7): it installs
        the native agent (one static binary, about 11 MB of memory) as the
        <code>edgefleet-agent</code> service and enrolls it with this token.
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
