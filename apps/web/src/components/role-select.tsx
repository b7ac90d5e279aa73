import { ROLES } from "@edgefleet/api/roles";
import { NativeSelect } from "./ui/native-select";
import { DisabledHint } from "./ui/tooltip";

export type Role = (typeof ROLES)[number];

/** Roles this person may not grant are listed but disabled, so the ladder stays visible. */
export function roleOptions(allowed: (role: Role) => boolean) {
  return ROLES.map((role) => ({ value: role, label: role, disabled: !allowed(role) }));
}

/**
 * The role picker of a table row (a member's role): changes at once. Forms use SelectField with
 * `roleOptions`. The server still decides.
 */
export function RoleSelect(props: {
  label: string;
  value: Role;
  allowed: (role: Role) => boolean;
  onChange: (role: Role) => void;
  disabled?: boolean;
  /** Disables the picker and says why, as `Button`'s `disabledReason` does. */
  disabledReason?: string | null;
}) {
  const select = (
    <NativeSelect
      aria-label={props.label}
      value={props.value}
      disabled={props.disabled || Boolean(props.disabledReason)}
      containerClassName="w-auto"
      className="h-8 min-w-28"
      onChange={(event) => props.onChange(event.target.value as Role)}
    >
      {roleOptions(props.allowed).map((option) => (
        <option key={option.value} value={option.value} disabled={option.disabled}>
          {option.label}
        </option>
      ))}
    </NativeSelect>
  );
  return props.disabledReason ? <DisabledHint reason={props.disabledReason}>{select}</DisabledHint> : select;
}
