"use client";

import { useEffect, useState } from "react";
import { Segmented } from "./segmented";

export interface RangeChoice {
  label: string;
  /** Length of the range in milliseconds. */
  span: number;
}

/**
 * A time range ending now that a person picks from a few choices. The end moves on a timer (and
 * when the choice changes), not on every render, so query keys stay stable between refreshes.
 */
export function useTimeRange(choices: readonly RangeChoice[], initialLabel: string, refreshMs: number) {
  const [label, setLabel] = useState(initialLabel);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);
  const span = choices.find((c) => c.label === label)?.span ?? choices[0]?.span ?? 0;
  return {
    label,
    range: { from: new Date(now - span), to: new Date(now) },
    choose: (next: string) => {
      setLabel(next);
      setNow(Date.now());
    },
  };
}

/** The pressed-button picker for a useTimeRange. */
export function TimeRangePicker(props: {
  label: string;
  choices: readonly RangeChoice[];
  range: ReturnType<typeof useTimeRange>;
}) {
  return (
    <Segmented
      label={props.label}
      options={props.choices.map((c) => ({ value: c.label, label: c.label }))}
      value={props.range.label}
      onChange={props.range.choose}
    />
  );
}
