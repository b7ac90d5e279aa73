import * as kit from "~/components/forms/fields";
import type { RolloutFormValues } from "./rollout-form";

/**
 * The kit's fields bound to the rollout form's values: each field's `name` is checked against them
 * without every field of the editors saying `<RolloutFormValues>` again.
 */
export const TextField = kit.TextField<RolloutFormValues>;
export const SelectField = kit.SelectField<RolloutFormValues>;
export const CheckboxField = kit.CheckboxField<RolloutFormValues>;
export const CheckboxGroupField = kit.CheckboxGroupField<RolloutFormValues>;
