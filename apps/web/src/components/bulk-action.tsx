"use client";

import type * as React from "react";
import { Button } from "./ui/button";
import { Popover, PopoverContent, PopoverTrigger } from "./ui/popover";

/**
 * A bulk action on a table's selected rows: a toolbar button that says how many rows it would
 * act on, opening a panel with the action's form (and its results) under it.
 */
export function BulkActionPanel(props: {
  icon: React.ReactNode;
  label: string;
  count: number;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  testId?: string;
  children: React.ReactNode;
}) {
  return (
    <Popover open={props.open} onOpenChange={props.onOpenChange}>
      <PopoverTrigger asChild>
        <Button type="button" variant="outline" size="sm" data-testid={props.testId}>
          {props.icon}
          {props.label}
          {props.count > 0 ? ` (${props.count} selected)` : ""}
        </Button>
      </PopoverTrigger>
      <PopoverContent align="end" className="w-96">
        {props.children}
      </PopoverContent>
    </Popover>
  );
}
