import { ROLES } from "@edgefleet/api/roles";

export type Role = (typeof ROLES)[number];

/**
 * The one role picker (invite, a member's role, an API key's role). Roles this person may not
 * grant are listed but disabled, so the ladder stays visible; the server still decides.
 */
export function RoleSelect(props: {
  label: string;
  value: Role;
  allowed: (role: Role) => boolean;
  onChange: (role: Role) => void;
  disabled?: boolean;
  title?: string;
}) {
  return (
    <select
      aria-label={props.label}
      value={props.value}
      title={props.title}
      disabled={props.disabled}
      onChange={(event) => props.onChange(event.target.value as Role)}
    >
      {ROLES.map((role) => (
        <option key={role} value={role} disabled={!props.allowed(role)}>
          {role}
        </option>
      ))}
    </select>
  );
}
