"use client";

import { SearchIcon } from "lucide-react";
import { Button } from "../ui/button";
import { usePalette } from "./command-palette";

/** Opens the command palette; shows the shortcut so people learn it. */
export function SearchButton() {
  const palette = usePalette();
  return (
    <Button
      type="button"
      variant="outline"
      size="sm"
      className="hidden w-56 justify-start text-muted-foreground md:inline-flex"
      onClick={palette.open}
    >
      <SearchIcon aria-hidden />
      Find anything…
      <kbd className="ml-auto rounded border bg-muted px-1.5 font-mono text-[0.7rem] text-muted-foreground">
        Ctrl K
      </kbd>
    </Button>
  );
}
