"use client";

import { useTheme } from "next-themes";
import { Toaster as Sonner } from "sonner";

/** Where toasts appear: bottom right on desktops, above the bottom bar on phones. */
export function Toaster() {
  const { resolvedTheme } = useTheme();
  return (
    <Sonner
      theme={resolvedTheme === "dark" ? "dark" : "light"}
      position="bottom-right"
      offset={{ bottom: 24 }}
      mobileOffset={{ bottom: 80 }}
      toastOptions={{
        classNames: {
          toast: "!bg-popover !text-popover-foreground !border-border",
          description: "!text-muted-foreground",
        },
      }}
    />
  );
}

export { toast } from "sonner";
