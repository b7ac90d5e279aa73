import { Button, type ButtonProps } from "./ui/button";

/**
 * The one button for an action that runs at once (a mutation on a row or a thing): small and
 * outlined unless told, disabled while the action runs (`pending`) and, saying why, when
 * `disabledReason` forbids it. `ConfirmAction` uses it as the button that opens its question.
 */
export function ActionButton({
  pending,
  disabled,
  variant = "outline",
  size = "sm",
  ...props
}: ButtonProps & { pending?: boolean }) {
  return <Button type="button" variant={variant} size={size} disabled={disabled || pending} {...props} />;
}
