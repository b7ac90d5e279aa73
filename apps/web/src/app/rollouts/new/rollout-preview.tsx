"use client";

import { QueryContent } from "~/components/query-content";
import { PlanView } from "../plan-view";

/** The preview's answer: the plan, or the server's refusal (e.g. a target that matches no node). */
export function RolloutPreview(props: {
  query: Parameters<typeof QueryContent<Parameters<typeof PlanView>[0]["plan"]>>[0]["query"];
}) {
  return (
    <QueryContent query={props.query} loading="Planning the batches">
      {(plan) => <PlanView plan={plan} />}
    </QueryContent>
  );
}
