import { ChevronDownIcon } from "lucide-react";
import type * as React from "react";
import { cn } from "~/lib/utils";
import { inputClassName } from "./input";

/**
 * The browser's own select, styled like the other inputs. Chosen over a custom listbox for forms:
 * phones show their native picker, and keyboard and screen-reader behaviour come for free.
 */
export function NativeSelect({
  className,
  containerClassName,
  ...props
}: React.ComponentProps<"select"> & { containerClassName?: string }) {
  return (
    <div className={cn("relative w-full min-w-0", containerClassName)}>
      <select
        data-slot="native-select"
        className={cn(inputClassName, "appearance-none pr-8", className)}
        {...props}
      />
      <ChevronDownIcon
        aria-hidden
        className="pointer-events-none absolute top-1/2 right-2.5 size-4 -translate-y-1/2 text-muted-foreground"
      />
    </div>
  );
}
