"use client";

import { Tooltip as TooltipPrimitive } from "radix-ui";
import type * as React from "react";
import { cn } from "~/lib/utils";

export const TooltipProvider = TooltipPrimitive.Provider;
export const Tooltip = TooltipPrimitive.Root;
export const TooltipTrigger = TooltipPrimitive.Trigger;

export function TooltipContent({
  className,
  sideOffset = 4,
  children,
  ...props
}: React.ComponentProps<typeof TooltipPrimitive.Content>) {
  return (
    <TooltipPrimitive.Portal>
      <TooltipPrimitive.Content
        sideOffset={sideOffset}
        className={cn(
          "z-50 max-w-xs rounded-md bg-foreground px-3 py-1.5 text-xs text-balance text-background animate-in fade-in-0 zoom-in-95",
          className,
        )}
        {...props}
      >
        {children}
      </TooltipPrimitive.Content>
    </TooltipPrimitive.Portal>
  );
}

/** The common case: a hint on hover and keyboard focus for one element. */
export function Hint(props: { text: React.ReactNode; children: React.ReactNode }) {
  return (
    <Tooltip>
      <TooltipTrigger asChild>{props.children}</TooltipTrigger>
      <TooltipContent>{props.text}</TooltipContent>
    </Tooltip>
  );
}

/**
 * Why a control is disabled, on hover and keyboard focus. A disabled button gets neither, so the
 * hint sits on a wrapper that keyboard users can reach.
 */
export function DisabledHint(props: { reason: React.ReactNode; children: React.ReactNode }) {
  return (
    <Hint text={props.reason}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: focusable so keyboard users reach the reason */}
      <span tabIndex={0} className="inline-flex rounded-md">
        {props.children}
      </span>
    </Hint>
  );
}
