"use client";

import { ThemeProvider } from "next-themes";
import { type ReactNode, useEffect } from "react";
import { TRPCReactProvider } from "~/trpc/react";
import { Toaster } from "./ui/sonner";
import { TooltipProvider } from "./ui/tooltip";

/** Client-side context of every page: theme (system by default), data, tooltips, toasts. */
export function Providers({ children }: { children: ReactNode }) {
  // Marks the document once React owns it: before this, clicks on menus and shortcuts do nothing,
  // and the end-to-end tests wait for it instead of guessing (see e2e/keycloak.ts).
  useEffect(() => {
    document.documentElement.dataset.hydrated = "";
  }, []);
  return (
    <ThemeProvider attribute="class" defaultTheme="system" enableSystem disableTransitionOnChange>
      <TRPCReactProvider>
        <TooltipProvider delayDuration={300}>
          {children}
          <Toaster />
        </TooltipProvider>
      </TRPCReactProvider>
    </ThemeProvider>
  );
}
