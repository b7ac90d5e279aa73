import { z } from "zod";

/**
 * Messages for people where zod's default is for programmers: a record key that breaks the API's
 * key rule says the rule and the key ("label keys: 1-63 letters, …: "bad key""), not "Invalid key
 * in record". Passed to every form's resolver (useApiForm).
 */
export const formErrorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== "invalid_key") return undefined;
  const rule = issue.issues[0]?.message;
  return rule ? `${rule}: ${JSON.stringify(issue.input)}` : undefined;
};

/**
 * Form fields typed as text and then judged by the API's own field schema (`pipe`): the text is
 * only split or converted here, so the rules stay the API's. The field's form value is a string,
 * its parsed value whatever the API field gives.
 */
export function textFor<Api extends z.ZodType>(
  parse: z.ZodType<unknown, string>,
  api: Api,
): z.ZodType<z.output<Api>, string> {
  const judged = parse.pipe(api as never);
  // Every issue lands on the field itself (a bad label key would otherwise sit at
  // labels["bad key"], where the form shows nothing), in words for people (formErrorMap).
  return z.string().transform((text, ctx) => {
    const result = judged.safeParse(text, { error: formErrorMap });
    if (result.success) return result.data as z.output<Api>;
    for (const issue of result.error.issues) ctx.addIssue({ code: "custom", message: issue.message });
    return z.NEVER;
  });
}

/** `k=v, k2=v2` → { k: "v", k2: "v2" }. */
export function labelAssignmentsText<Api extends z.ZodType>(api: Api) {
  const parse = z.string().transform((text, ctx) => {
    const labels: Record<string, string> = {};
    for (const part of text.split(",")) {
      const item = part.trim();
      if (!item) continue;
      const eq = item.indexOf("=");
      if (eq <= 0) {
        ctx.addIssue({ code: "custom", message: `"${item}" is not key=value` });
        return z.NEVER;
      }
      labels[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
    }
    return labels;
  });
  return textFor(parse, api);
}

/** `k1, k2` → ["k1", "k2"]. */
export function labelKeysText<Api extends z.ZodType>(api: Api) {
  const parse = z.string().transform((text) =>
    text
      .split(",")
      .map((key) => key.trim())
      .filter(Boolean),
  );
  return textFor(parse, api);
}

/** An optional whole number typed into a text box: empty is "not given". */
export function optionalNumberText<Api extends z.ZodType>(api: Api) {
  return textFor(
    z.string().transform((text) => (text.trim() ? Number(text) : undefined)),
    api,
  );
}

/** An optional choice of a select whose empty option means "none". */
export function optionalChoice<Api extends z.ZodType>(api: Api) {
  return textFor(
    z.string().transform((text) => text || undefined),
    api,
  );
}
