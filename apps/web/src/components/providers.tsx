"use client";

import { ThemeProvider } from "next-themes";
import type { ReactNode } from "react";
import { TRPCReactProvider } from "~/trpc/react";
import { Toaster } from "./ui/sonner";
import { TooltipProvider } from "./ui/tooltip";

/** Client-side context of every page: theme (system by default), data, tooltips, toasts. */
export function Providers({ children }: { children: ReactNode }) {
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
