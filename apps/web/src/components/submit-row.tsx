import table from "./admin-table.module.css";

/**
 * The end of every console form: the submit button, why it is disabled for this person, and the
 * server's answer when it refused. The reason is a hint only; the server still decides (a page
 * opened before a role change can submit, and then shows the server's FORBIDDEN message).
 */
export function SubmitRow(props: {
  label: string;
  pendingLabel: string;
  pending: boolean;
  disabledReason?: string | null;
  problem?: string | null;
}) {
  return (
    <>
      <button
        type="submit"
        disabled={props.pending || Boolean(props.disabledReason)}
        title={props.disabledReason ?? undefined}
      >
        {props.pending ? props.pendingLabel : props.label}
      </button>
      {props.disabledReason ? <span className={table.note}>({props.disabledReason})</span> : null}
      {props.problem ? (
        <span role="alert" className={table.error}>
          {props.problem}
        </span>
      ) : null}
    </>
  );
}
